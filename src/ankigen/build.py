"""Build: every bank checked first, then one package per bank, then the lock file.

Decks whose inputs did not change since the last build into the same folder
are not rebuilt or rewritten. What changed for learners (new, changed,
unchanged, removed and retired notes, renamed decks, new templates) is
reported, with what to do about it.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from ankigen import __version__, ids, notetype
from ankigen.bank import Bank
from ankigen.deckinfo import deck_description
from ankigen.errors import AnkigenError, Diagnostic, InvalidBanks
from ankigen.html import plain_text
from ankigen.lint import Checked, check_paths
from ankigen.lock import LOCK_NAME, DeckLock, Lock, Stamp, read_lock, restamp
from ankigen.media import Prepared, Settings, image_refs, prepare
from ankigen.note import NoteContent, note_content
from ankigen.package import (
    PackageDeck,
    PackageNote,
    apkg_bytes,
    check_file_name,
    exclusive,
    remove_stale_temporaries,
    write_atomic,
)

CACHE_NAME = ".ankigen-cache.json"
IMAGE_CACHE = ".ankigen-images"


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
    retired: int
    written: bool

    def as_json(self) -> dict[str, object]:
        return {
            "topic": self.topic,
            "language": self.language,
            "path": self.path,
            "notes": self.notes,
            "new": self.new,
            "changed": self.changed,
            "unchanged": self.unchanged,
            "removed": self.removed,
            "retired": self.retired,
            "written": self.written,
        }


@dataclass(frozen=True)
class BuildResult:
    decks: tuple[DeckReport, ...]
    warnings: tuple[Diagnostic, ...]
    """Problems in the banks that do not stop the build."""
    changes: tuple[Diagnostic, ...] = field(default=())
    """What this build changes for people who already study the decks, with remedies."""


def find_banks(banks_dir: Path) -> list[Path]:
    if not banks_dir.is_dir():
        raise NoBanks(f"{banks_dir}: no such folder of banks")
    paths = sorted(p for p in banks_dir.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
    if not paths:
        raise NoBanks(f"{banks_dir}: no bank files (*.yaml) found")
    return paths


def checked_banks(banks_dir: Path, bank_paths: Sequence[Path] | None = None) -> Checked:
    """Every bank and its warnings, or InvalidBanks with all the errors."""
    paths = list(bank_paths) if bank_paths is not None else find_banks(banks_dir)
    checked = check_paths(paths)
    if checked.errors:
        raise InvalidBanks(checked.diagnostics)
    return checked


def now_seconds() -> int:
    """The build time; SOURCE_DATE_EPOCH pins it for reproducible pipelines."""
    pinned = os.environ.get("SOURCE_DATE_EPOCH")
    if pinned and pinned.isdigit():
        return int(pinned)
    return int(time.time())


def package_name(bank: Bank) -> str:
    return f"{bank.topic}.{bank.language}.apkg"


@dataclass(frozen=True)
class DeckPlan:
    bank: Bank
    package: PackageDeck
    lock: DeckLock
    report: DeckReport
    removed_ids: tuple[str, ...]
    key: str
    """Hash of everything that goes into the package."""
    media: tuple[tuple[str, bytes], ...] = ()


def plan_deck(
    bank: Bank,
    previous: DeckLock | None,
    notetype_mtime: int,
    now: int,
    images: Prepared | None = None,
) -> DeckPlan:
    """The package content for one bank, its new lock entry and its change counts."""
    deck_lock = DeckLock(
        name=plain_text(bank.deck_name), created=previous.created if previous else now
    )
    old_items = previous.items if previous else {}
    contents: list[NoteContent] = [
        note_content(bank, item, images.names(bank, item.id) if images else None)
        for item in bank.items
    ]
    notes: list[PackageNote] = []
    new = changed = unchanged = 0
    for content in contents:
        before = old_items.get(content.item_id)
        stamp: Stamp = restamp(before, content.hash, now)
        deck_lock.items[content.item_id] = stamp
        if before is None:
            new += 1
        elif before.hash != stamp.hash:
            changed += 1
        else:
            unchanged += 1
        notes.append(PackageNote(content.guid, content.fields, content.tags, stamp.mtime))
    removed = tuple(sorted(set(old_items) - set(deck_lock.items)))
    package = PackageDeck(
        deck_id=ids.deck_id(bank.topic, bank.language),
        name=deck_lock.name,
        description=deck_description(bank, contents),
        notes=tuple(notes),
        first_note_id=deck_lock.created * 1000,
        notetype_mtime=notetype_mtime,
    )
    key = ids.content_hash(
        __version__,
        notetype.schema_hash(),
        repr(package),
    )
    report = DeckReport(
        topic=bank.topic,
        language=bank.language,
        path=package_name(bank),
        notes=len(notes),
        new=new,
        changed=changed,
        unchanged=unchanged,
        removed=len(removed),
        retired=sum(item.retired for item in bank.items),
        written=True,
    )
    media = tuple(images.for_bank(bank)) if images else ()
    return DeckPlan(bank, package, deck_lock, report, removed, key, media)


def _change_warnings(
    plan: DeckPlan, previous: DeckLock | None, lock_path: Path
) -> list[Diagnostic]:
    bank = plan.bank
    found = []
    if plan.removed_ids:
        shown = ", ".join(plan.removed_ids[:5]) + (" ..." if len(plan.removed_ids) > 5 else "")
        found.append(
            Diagnostic(
                bank.path,
                bank.lines.get("items", 1),
                "warning",
                f"{len(plan.removed_ids)} item(s) removed since the last build ({shown}): "
                "Anki never deletes notes on re-import, so learners keep them; put the item "
                "back with `retired: true` so they can find it (tag ankigen::retired) "
                "and delete it",
            )
        )
    if previous is not None and previous.name != plan.lock.name:
        line = bank.lines.get("deck", bank.lines.get("title", 1))
        found.append(
            Diagnostic(
                bank.path,
                line,
                "warning",
                f"the deck is renamed from {previous.name!r} to {plan.lock.name!r}: people who "
                f"imported it keep their cards in {previous.name!r} and get only new cards in the "
                f"new deck; set `deck: {json.dumps(previous.name, ensure_ascii=False)}` "
                "to keep the old name",
            )
        )
    return found


class BuildCache:
    """Which packages in an output folder came from which inputs (not committed)."""

    def __init__(self, out_dir: Path) -> None:
        self.path = out_dir / CACHE_NAME
        try:
            loaded = json.loads(self.path.read_text(encoding="utf-8"))
            self.entries: dict[str, dict[str, object]] = loaded if isinstance(loaded, dict) else {}
        except (OSError, ValueError):
            self.entries = {}

    def fresh(self, path: Path, key: str) -> bool:
        entry = self.entries.get(path.name)
        try:
            stat = path.stat()
        except OSError:
            return False
        return (
            isinstance(entry, dict)
            and entry.get("key") == key
            and entry.get("size") == stat.st_size
            and entry.get("mtime_ns") == stat.st_mtime_ns
        )

    def record(self, path: Path, key: str) -> None:
        stat = path.stat()
        self.entries[path.name] = {"key": key, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}

    def to_bytes(self) -> bytes:
        return json.dumps(self.entries, sort_keys=True, indent=1).encode()


Progress = Callable[[int, int], None]


def default_media_dir(banks_dir: Path) -> Path:
    return banks_dir.parent / "media"


def build(
    banks_dir: Path,
    out_dir: Path,
    bank_paths: Sequence[Path] | None = None,
    progress: Progress | None = None,
    media_dir: Path | None = None,
    image_settings: Settings | None = None,
) -> BuildResult:
    """Check every bank, then write OUT/<topic>.<language>.apkg for each and update the lock."""
    checked = checked_banks(banks_dir, bank_paths)
    for bank in checked.banks:
        check_file_name(package_name(bank))
    with exclusive(out_dir):
        return _build_locked(banks_dir, out_dir, checked, progress, media_dir, image_settings)


def _build_locked(
    banks_dir: Path,
    out_dir: Path,
    checked: Checked,
    progress: Progress | None,
    media_dir: Path | None,
    image_settings: Settings | None,
) -> BuildResult:
    """The build proper, with the output folder to ourselves."""
    banks = checked.banks
    warnings = [d for d in checked.diagnostics if d.severity == "warning"]
    remove_stale_temporaries(out_dir)
    remove_stale_temporaries(out_dir / IMAGE_CACHE)
    images = prepare(
        image_refs(banks),
        media_dir or default_media_dir(banks_dir),
        image_settings or Settings(),
        cache_dir=out_dir / IMAGE_CACHE,
    )
    if images.diagnostics:
        raise InvalidBanks(checked.diagnostics + images.diagnostics)

    lock_path = banks_dir / LOCK_NAME
    old_lock = read_lock(lock_path)
    now = now_seconds()
    schema = notetype.schema_hash()
    nt_stamp = restamp(old_lock.notetype, schema, now)
    changes: list[Diagnostic] = []
    if old_lock.notetype is not None and old_lock.notetype.hash != schema:
        changes.append(
            Diagnostic(
                str(lock_path),
                2,
                "warning",
                "the card templates changed since the last build: importing the new packages "
                "updates the note type in everyone's collection, replacing any changes a "
                "learner made to its templates or styling",
            )
        )
    new_lock = Lock(notetype=nt_stamp)
    plans = []
    for bank in sorted(banks, key=lambda b: b.key):
        previous = old_lock.decks.get(bank.key)
        plan = plan_deck(bank, previous, nt_stamp.mtime, now, images)
        new_lock.decks[bank.key] = plan.lock
        changes.extend(_change_warnings(plan, previous, lock_path))
        plans.append(plan)

    cache = BuildCache(out_dir)
    reports = []
    for done, plan in enumerate(plans, start=1):
        path = out_dir / plan.report.path
        if cache.fresh(path, plan.key):
            reports.append(replace(plan.report, written=False))
        else:
            write_atomic(path, apkg_bytes(plan.package, plan.media))
            cache.record(path, plan.key)
            reports.append(plan.report)
        if progress:
            progress(done, len(plans))
    cache_bytes = cache.to_bytes()
    if not cache.path.exists() or cache.path.read_bytes() != cache_bytes:
        write_atomic(cache.path, cache_bytes)
    lock_bytes = new_lock.to_bytes()
    if not lock_path.exists() or lock_path.read_bytes() != lock_bytes:
        write_atomic(lock_path, lock_bytes)
    return BuildResult(tuple(reports), tuple(warnings), tuple(sorted(changes)))
