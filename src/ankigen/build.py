"""Build: every bank checked first, then one package per bank, then the lock file."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ankigen import ids, notetype
from ankigen.bank import Bank, load_bank
from ankigen.errors import AnkigenError, Diagnostic, InvalidBanks
from ankigen.html import inline_html, plain_text
from ankigen.lock import LOCK_NAME, DeckLock, Lock, Stamp, read_lock, restamp
from ankigen.note import note_content
from ankigen.package import (
    PackageDeck,
    PackageNote,
    apkg_bytes,
    check_file_name,
    remove_stale_temporaries,
    write_atomic,
)


class NoBanks(AnkigenError):
    """The banks folder holds no bank files."""


@dataclass(frozen=True)
class DeckReport:
    """What one build did to one deck, compared with the previous build."""

    topic: str
    language: str
    path: str
    notes: int
    new: int
    changed: int
    unchanged: int
    removed: int


@dataclass(frozen=True)
class BuildResult:
    decks: tuple[DeckReport, ...]
    warnings: tuple[Diagnostic, ...]


def find_banks(banks_dir: Path) -> list[Path]:
    if not banks_dir.is_dir():
        raise NoBanks(f"{banks_dir}: no such folder of banks")
    paths = sorted(p for p in banks_dir.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
    if not paths:
        raise NoBanks(f"{banks_dir}: no bank files (*.yaml) found")
    return paths


def load_banks(paths: Iterable[Path]) -> tuple[list[Bank], list[Diagnostic]]:
    """Load every bank and check them against each other; collect every problem."""
    banks: list[Bank] = []
    diagnostics: list[Diagnostic] = []
    for path in paths:
        bank, found = load_bank(path)
        diagnostics.extend(found)
        if bank is not None:
            banks.append(bank)
    first: dict[str, Bank] = {}
    for bank in banks:
        if bank.key in first:
            other = first[bank.key]
            diagnostics.append(
                Diagnostic(
                    bank.path,
                    bank.lines.get("language", 1),
                    "error",
                    f"topic {bank.topic!r} in language {bank.language!r} is already defined "
                    f"in {other.path}",
                )
            )
        else:
            first[bank.key] = bank
    return banks, diagnostics


def checked_banks(
    banks_dir: Path, bank_paths: Sequence[Path] | None = None
) -> tuple[list[Bank], list[Diagnostic]]:
    """Every bank, or InvalidBanks with all their errors; also returns the warnings."""
    paths = list(bank_paths) if bank_paths is not None else find_banks(banks_dir)
    banks, diagnostics = load_banks(paths)
    if any(d.severity == "error" for d in diagnostics):
        raise InvalidBanks(diagnostics)
    return banks, [d for d in diagnostics if d.severity == "warning"]


def now_seconds() -> int:
    """The build time; SOURCE_DATE_EPOCH pins it for reproducible pipelines."""
    pinned = os.environ.get("SOURCE_DATE_EPOCH")
    if pinned and pinned.isdigit():
        return int(pinned)
    return int(time.time())


def package_name(bank: Bank) -> str:
    return f"{bank.topic}.{bank.language}.apkg"


def _deck_description(bank: Bank) -> str:
    return inline_html(bank.description) if bank.description else ""


def plan_deck(
    bank: Bank, previous: DeckLock | None, notetype_mtime: int, now: int
) -> tuple[PackageDeck, DeckLock, DeckReport, str]:
    """The package content for one bank, its new lock entry and its change counts."""
    deck_lock = DeckLock(
        name=plain_text(bank.deck_name), created=previous.created if previous else now
    )
    old_items = previous.items if previous else {}
    notes: list[PackageNote] = []
    new = changed = unchanged = 0
    for item in bank.items:
        content = note_content(bank, item)
        before = old_items.get(item.id)
        stamp: Stamp = restamp(before, content.hash, now)
        deck_lock.items[item.id] = stamp
        if before is None:
            new += 1
        elif before.hash != stamp.hash:
            changed += 1
        else:
            unchanged += 1
        notes.append(PackageNote(content.guid, content.fields, content.tags, stamp.mtime))
    removed = len(set(old_items) - set(deck_lock.items))
    deck = PackageDeck(
        deck_id=ids.deck_id(bank.topic, bank.language),
        name=deck_lock.name,
        description=_deck_description(bank),
        notes=tuple(notes),
        first_note_id=deck_lock.created * 1000,
        notetype_mtime=notetype_mtime,
    )
    name = package_name(bank)
    report = DeckReport(
        bank.topic, bank.language, name, len(notes), new, changed, unchanged, removed
    )
    return deck, deck_lock, report, name


def build(banks_dir: Path, out_dir: Path, bank_paths: Sequence[Path] | None = None) -> BuildResult:
    """Check every bank, then write OUT/<topic>.<language>.apkg for each and update the lock."""
    banks, warnings = checked_banks(banks_dir, bank_paths)
    for bank in banks:
        check_file_name(package_name(bank))

    lock_path = banks_dir / LOCK_NAME
    old_lock = read_lock(lock_path)
    now = now_seconds()
    nt_stamp = restamp(old_lock.notetype, notetype.schema_hash(), now)
    new_lock = Lock(notetype=nt_stamp)
    packages: list[tuple[Path, bytes]] = []
    reports: list[DeckReport] = []
    for bank in sorted(banks, key=lambda b: b.key):
        deck, deck_lock, report, name = plan_deck(
            bank, old_lock.decks.get(bank.key), nt_stamp.mtime, now
        )
        new_lock.decks[bank.key] = deck_lock
        packages.append((out_dir / name, apkg_bytes(deck)))
        reports.append(report)

    remove_stale_temporaries(out_dir)
    for path, data in packages:
        write_atomic(path, data)
    lock_bytes = new_lock.to_bytes()
    if not lock_path.exists() or lock_path.read_bytes() != lock_bytes:
        write_atomic(lock_path, lock_bytes)
    return BuildResult(tuple(reports), tuple(warnings))
