"""Who a note and a deck are to Anki: GUIDs (base91 of a namespaced hash of topic,
language and item id), deck ids, deck keys, and the older names `formerly:` keeps."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import cast

GUID_NAMESPACE = "ankigen/v1"


_BASE91 = (
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&()*+,-./:;<=>?@[]^_`{|}~"
)


# Anki makes 10 base91 characters; other makers' notes keep theirs (32 hex digits, a
# UUID's 36 characters), which an adopted deck's lock must hold: any length to 128
MAX_GUID = 128
GUID = re.compile(r"[" + re.escape(_BASE91) + rf"]{{1,{MAX_GUID}}}")


_GUID_LINES = re.compile(f"(?:{GUID.pattern}\n)*")


def all_guids(values: Sequence[object]) -> bool:
    """Whether every value is a GUID: one match over them all (a lock holds one per
    note), instead of a call per value."""
    if not values:
        return True
    if not set(map(type, values)) <= {str}:
        return False
    text = "\n".join(cast(Sequence[str], values))
    if text.count("\n") != len(values) - 1:
        return False  # a value with a line break of its own: not a GUID, or several
    return _GUID_LINES.fullmatch(f"{text}\n") is not None


def _digest(*parts: str) -> bytes:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).digest()


def note_guid(topic: str, language: str, item_id: str) -> str:
    """The GUID of an item's note: one per topic, language and item, never shared."""
    return base91(int.from_bytes(_digest(GUID_NAMESPACE, topic, language, item_id)[:8], "big"))


def base91(number: int) -> str:
    """A number in Anki's base 91 digits, the most significant first, without leading zeros."""
    pairs = []
    while number:  # two digits at a time: a build makes one GUID per new note
        number, rem = divmod(number, _PAIR_BASE)
        pairs.append(_BASE91_PAIRS[rem])
    return "".join(reversed(pairs)).lstrip(_BASE91[0]) or _BASE91[0]


_BASE91_PAIRS = [high + low for high in _BASE91 for low in _BASE91]


_PAIR_BASE = len(_BASE91_PAIRS)


def deck_id(topic: str, language: str) -> int:
    """A stable deck id in genanki's recommended range [2**30, 2**31)."""
    number = int.from_bytes(_digest(GUID_NAMESPACE, "deck", topic, language)[:4], "big")
    return (1 << 30) + number % (1 << 30)


def named_deck_id(name: str) -> int:
    """A stable id for a deck known only by its name, such as a parent deck."""
    number = int.from_bytes(_digest(GUID_NAMESPACE, "named deck", name)[:4], "big")
    return (1 << 30) + number % (1 << 30)


def deck_key(topic: str, language: str) -> str:
    """A deck's name in the lock file: `topic.language`."""
    return f"{topic}.{language}"


def split_deck_key(key: str) -> tuple[str, str]:
    topic, _, language = key.partition(".")
    return topic, language


def former_keys(
    topic: str, language: str, topics: Sequence[str], languages: Sequence[str]
) -> list[tuple[str, str]]:
    """Every (topic, language) a bank was built under, the current one first."""
    names = [(topic, language)]
    for old_topic in [topic, *topics]:
        for old_language in [language, *languages]:
            if (old_topic, old_language) not in names:
                names.append((old_topic, old_language))
    return names


def oldest_key(
    topic: str, language: str, topics: Sequence[str], languages: Sequence[str]
) -> tuple[str, str]:
    """The name a bank was first built under: formerly lists older names oldest first."""
    return (topics[0] if topics else topic, languages[0] if languages else language)


def formerly_line(old: tuple[str, str], new: tuple[str, str]) -> str:
    parts = []
    if old[0] != new[0]:
        parts.append(f"topic: {old[0]}")
    if old[1] != new[1]:
        parts.append(f"language: {old[1]}")
    return "formerly: {" + ", ".join(parts) + "}"
