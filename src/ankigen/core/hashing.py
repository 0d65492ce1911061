"""The content hash used for change detection."""

from __future__ import annotations

import hashlib


def content_hash(*parts: str) -> str:
    """A short hex digest of some text, for change detection."""
    return hashlib.sha256("\x1e".join(parts).encode("utf-8")).hexdigest()[:16]
