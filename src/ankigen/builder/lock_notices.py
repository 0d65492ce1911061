"""What the build proper says about the lock before it plans: notes that would share
one GUID (an error), card templates changed since the last build, and decks in the lock
whose bank is gone (warnings)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ankigen.bank.files import shown_path
from ankigen.bank.model import Outline
from ankigen.core.errors import Diagnostic, InvalidBanks
from ankigen.identity.guid import formerly_line, split_deck_key
from ankigen.identity.lockfile import KeyLines, Lock
from ankigen.identity.resolve import DeckIdentity, duplicate_guids, renamed_decks
from ankigen.identity.stamp import Stamp


def refuse_clashes(decks: dict[str, DeckIdentity], lock_path: Path) -> None:
    """Stops the build if two notes resolve to one GUID."""
    clashes = duplicate_guids(decks)
    if clashes:
        raise InvalidBanks(
            Diagnostic(
                shown_path(lock_path),
                0,
                "error",
                f"{first} and {second} resolve to one note (GUID {guid}): check their "
                "`formerly:` names",
            )
            for guid, first, second in clashes
        )


def notetype_changed(old_lock: Lock, nt_stamp: Stamp, lock_path: Path) -> list[Diagnostic]:
    if old_lock.notetype is None or old_lock.notetype.hash == nt_stamp.hash:
        return []
    return [
        Diagnostic(
            shown_path(lock_path),
            2,
            "warning",
            "the card templates changed since the last build: importing the new packages "
            "updates the note type in everyone's collection, replacing any changes a "
            "learner made to its templates or styling",
        )
    ]


def orphan_warnings(
    outlines: Sequence[Outline],
    decks: dict[str, DeckIdentity],
    lock: Lock,
    orphan_keys: Sequence[str],
    lock_bytes: bytes | None,
    lock_path: Path,
    prune: bool,
) -> list[Diagnostic]:
    """Decks in the lock with no bank: kept and named, and matched to renamed banks."""
    found = []
    # indexing the lock's lines takes a second at 100,000 notes: only for a message
    lines = KeyLines.of(lock_bytes if orphan_keys else None)
    for key in orphan_keys:
        entry = lock.decks[key]
        where = entry.path or "?"
        remedy = (
            "it is forgotten (--prune)"
            if prune
            else "its entry stays in the lock so that restoring the bank keeps learners' "
            "history; if the deck is gone for good, run `ankigen build --prune`"
        )
        found.append(
            Diagnostic(
                shown_path(lock_path),
                lines.find(key),
                "warning",
                f"deck {key!r} ({entry.name!r}) has no bank any more; it was last built from "
                f"{where}: {remedy}",
            )
        )
    for bank, key, shared in renamed_decks(outlines, decks, lock, orphan_keys):
        old = split_deck_key(key)
        line = formerly_line((old[0], old[1]), (bank.topic, bank.language))
        found.append(
            Diagnostic(
                bank.path,
                bank.lines.get("topic", 1),
                "warning",
                f"this new deck {bank.key!r} shares {shared} of the {len(lock.decks[key].items)} "
                f"item ids of the deck {key!r}, whose bank is gone: if it was renamed, add "
                f"`{line}` to this bank so learners keep their notes and review history; "
                "as it is, they get a second copy of every note",
            )
        )
    return found
