"""Stable identities: what Anki matches on when a rebuilt deck is imported again.

Anki matches notes by GUID across the whole collection, note types by id plus
the names of their fields and templates, and decks by name. None of these may
depend on an item's content, or an edit would create a new note.
"""

from __future__ import annotations

import hashlib

GUID_NAMESPACE = "ankigen/v1"

# Fixed forever: changing the fields means a new note type with a new id and name.
NOTETYPE_ID = 1_732_416_907
NOTETYPE_NAME = "ankigen multiple choice v1"

_BASE91 = (
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&()*+,-./:;<=>?@[]^_`{|}~"
)


def _digest(*parts: str) -> bytes:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).digest()


def note_guid(topic: str, language: str, item_id: str) -> str:
    """The GUID of an item's note: one per topic, language and item, never shared."""
    number = int.from_bytes(_digest(GUID_NAMESPACE, topic, language, item_id)[:8], "big")
    chars = []
    while number:
        number, rem = divmod(number, len(_BASE91))
        chars.append(_BASE91[rem])
    return "".join(reversed(chars)) or _BASE91[0]


def deck_id(topic: str, language: str) -> int:
    """A stable deck id in genanki's recommended range [2**30, 2**31)."""
    number = int.from_bytes(_digest(GUID_NAMESPACE, "deck", topic, language)[:4], "big")
    return (1 << 30) + number % (1 << 30)


def named_deck_id(name: str) -> int:
    """A stable id for a deck known only by its name, such as a parent deck."""
    number = int.from_bytes(_digest(GUID_NAMESPACE, "named deck", name)[:4], "big")
    return (1 << 30) + number % (1 << 30)


def content_hash(*parts: str) -> str:
    """A short hex digest of some text, for change detection."""
    return hashlib.sha256("\x1e".join(parts).encode("utf-8")).hexdigest()[:16]
