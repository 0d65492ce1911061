"""Versions that sort in time: `2026.11.30+84a7bb7e`.

A deck's version is the UTC date of its newest note (the lock's modification
times, which only move forward) and a short hash of every note's content, so
two builds of the same content agree and a later release sorts after an
earlier one (two releases on the same day differ in the hash only).

A card shows its own note's version in the same form: the date that note last
changed and a hash of its content. Not the deck's: a field holding the deck's
version would change every note whenever any note changes, and every learner
would re-import every note as updated. A card's version therefore only moves
when the card does, and is never later than its deck's.

The card's version is a `data-version` attribute on the `<ol>` of the Choices
field (the note type's fields are frozen), which the back of the card shows in
small print. It is not part of the note's content hash: the lock records the
content, and the version follows from the content and the lock's time.
"""

from __future__ import annotations

import functools
import html
import re
import time
from collections.abc import Iterable
from typing import TypeGuard

from ankigen.core.hashing import content_hash
from ankigen.identity.guid import note_guid
from ankigen.identity.lockfile import DeckLock

_VERSION = re.compile(r"(\d{4})\.(\d{2})\.(\d{2})\+([0-9a-f]+)")
CHOICES_FIELD = 1


def is_version(text: object) -> TypeGuard[str]:
    """Whether `text` is a version as `version_string` makes them (8 hex digits)."""
    match = _VERSION.fullmatch(text) if isinstance(text, str) else None
    return match is not None and len(match[4]) == 8


def version_string(newest: int, digest: str) -> str:
    return f"{_utc_day(newest // 86400)}+{digest[:8]}"


@functools.lru_cache(maxsize=1024)
def _utc_day(days: int) -> str:
    """The date of a day counted from 1970 (UTC days have 86,400 seconds in Unix time): a
    deck's notes were stamped on few days, and formatting a time for each note was a
    tenth of a deck's plan."""
    return time.strftime("%Y.%m.%d", time.gmtime(days * 86400))


def deck_version(notes: Iterable[tuple[str, str, int]]) -> str:
    """The version of a deck from its notes' (GUID, content hash, modification time)."""
    ordered = sorted(notes)
    digest = content_hash(*(f"{guid}:{content}" for guid, content, _ in ordered))
    return version_string(max((mtime for *_, mtime in ordered), default=0), digest)


def lock_version(topic: str, language: str, deck: DeckLock) -> str:
    """The version of a deck as the lock file records it."""
    return deck_version(
        (deck.guids.get(item_id) or note_guid(topic, language, item_id), stamp.hash, stamp.mtime)
        for item_id, stamp in deck.items.items()
    )


def note_version(content_hash: str, mtime: int) -> str:
    return version_string(mtime, content_hash)


def with_card_version(fields: tuple[str, ...], version: str) -> tuple[str, ...]:
    """The note's fields with its version on the Choices `<ol>`."""
    choices = fields[CHOICES_FIELD]
    if not choices.startswith("<ol>"):
        return fields
    tagged = f'<ol data-version="{html.escape(version)}">' + choices[len("<ol>") :]
    return (*fields[:CHOICES_FIELD], tagged, *fields[CHOICES_FIELD + 1 :])


_TAGGED = re.compile(r'<ol data-version="([^"]*)">')


def card_version(choices: str) -> tuple[str, str]:
    """The version `with_card_version` put on a Choices field ("" if it has none), and
    the field as it was before."""
    tagged = _TAGGED.match(choices)
    if tagged is None:
        return "", choices
    return html.unescape(tagged[1]), "<ol>" + choices[tagged.end() :]


def sort_key(version: str) -> tuple[str, str]:
    """Versions compare by date, then hash; anything else sorts first."""
    match = _VERSION.fullmatch(version)
    if match is None:
        return ("", version)
    return ("".join(match.groups()[:3]), match[4])
