"""Fixed ids and the content hash used for change detection.

The identities that decide whether a rebuilt deck updates learners' notes
(GUIDs, deck ids, modification times) live in `identity`.
"""

from __future__ import annotations

import hashlib
import re

# ids, topics and former names: lower-case words joined by single hyphens
SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")

# Fixed forever: changing the fields means a new note type with a new id and name.
NOTETYPE_ID = 1_732_416_907
NOTETYPE_NAME = "ankigen multiple choice v1"


def content_hash(*parts: str) -> str:
    """A short hex digest of some text, for change detection."""
    return hashlib.sha256("\x1e".join(parts).encode("utf-8")).hexdigest()[:16]
