"""Checks on banks beyond their schema: each bank's own, translations against their
reference, and between banks; the bank cache that keeps them between builds, and the
build's incremental check."""
