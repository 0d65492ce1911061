"""Anki's own files, read without Anki: what a package (`.apkg`) or a collection package
(`.colpkg`) exported by any Anki since 2.1 holds (`exported`)."""
