"""The notes of a running Anki, through AnkiConnect: each deck the lock names is exported
by Anki itself into a temporary package (AnkiConnect's `exportPackage`), and so is each
filtered deck that holds some of its cards, then read like any exported package.
AnkiConnect's note requests do not tell a note's GUID, and notes are matched by nothing
else."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from ankigen.ankiconnect import AnkiConnect, AnkiConnectError
from ankigen.bank.folder import LOCK_NAME
from ankigen.collection.exported import Exported, read_exported
from ankigen.identity.lockfile import issued_guids, read_lock


@dataclass(frozen=True)
class FromAnki:
    exported: list[Exported]
    """The decks the lock names that Anki has, and the filtered decks holding their cards."""
    missing: list[str]
    """The names of the decks the lock names that Anki lacks."""
    unseen: dict[str, int]
    """By deck name, how many of its notes the lock records were in no export (their cards
    moved to another deck, or the notes deleted)."""


def from_anki(client: AnkiConnect, banks_dir: Path) -> FromAnki:
    """The exported decks the lock names that Anki has, and what it lacks."""
    if not client.local:
        raise AnkiConnectError(
            f"pull asks Anki to export the decks into a file on this machine, and {client.url} "
            "is another one: export the decks there (File > Export, .apkg) and pull that file"
        )
    lock = read_lock(banks_dir / LOCK_NAME)
    wanted = sorted({deck.name for deck in lock.decks.values()})
    present = set(client.deck_names())
    exported = [name for name in wanted if name in present]
    # cards a learner studies in a filtered deck are in that deck, not theirs: exported too
    for name in list(exported):
        exported += [d for d in client.filtered_decks_holding(name) if d not in exported]
    found = []
    with tempfile.TemporaryDirectory(prefix="ankigen-pull-") as folder:
        for number, name in enumerate(exported):
            path = Path(folder) / f"deck-{number}.apkg"
            client.export_package(name, path)
            found.append(read_exported(path))
    seen = {note.guid for package in found for note in package.notes}
    unseen: dict[str, int] = {}
    for guid, (key, _) in issued_guids(lock).items():
        name = lock.decks[key].name
        if guid not in seen and name in present:
            unseen[name] = unseen.get(name, 0) + 1
    return FromAnki(found, [name for name in wanted if name not in present], unseen)
