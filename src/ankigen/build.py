"""Build: every bank checked first, then one package per bank, then the lock file.

Decks whose inputs did not change since the last build into the same folder
are not rebuilt or rewritten. What changed for learners (new, changed,
unchanged, removed and retired notes, renamed decks, new templates) is
reported, with what to do about it.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field, replace
from pathlib import Path

from ankigen import __version__, ids, notetype
from ankigen.bank import Bank
from ankigen.bankcache import BankCache
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
from ankigen.parallel import parallel_map, worker_pool
from ankigen.project import load_project, parent_decks, project_path
from ankigen.size import check_package
from ankigen.version import lock_version, note_version, with_card_version

CACHE_NAME = ".ankigen-cache.json"
IMAGE_CACHE = ".ankigen-images"
BANK_CACHE = ".ankigen-banks"


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
    version: str = ""
    """Sorts in time: the date of the newest note and a content hash (see `version`)."""

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
            "version": self.version,
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


def checked_banks(
    banks_dir: Path,
    bank_paths: Sequence[Path] | None = None,
    pool: Executor | None = None,
    cache: BankCache | None = None,
) -> Checked:
    """Every bank and its warnings, or InvalidBanks with all the errors.

    The project file's settings (deck names, tags) are applied to the banks.
    """
    paths = list(bank_paths) if bank_paths is not None else find_banks(banks_dir)
    project, problems = load_project(banks_dir)
    checked = check_paths(paths, pool=pool, cache=cache, reference=project.reference)
    if checked.errors or problems:
        raise InvalidBanks([*problems, *checked.diagnostics])
    return replace(checked, banks=project.apply_all(checked.banks))


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
    parents: tuple[tuple[int, str, str], ...] = (),
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
        fields = with_card_version(content.fields, note_version(stamp.hash, stamp.mtime))
        notes.append(PackageNote(content.guid, fields, content.tags, stamp.mtime))
    removed = tuple(sorted(set(old_items) - set(deck_lock.items)))
    version = lock_version(bank.topic, bank.language, deck_lock)
    package = PackageDeck(
        deck_id=ids.deck_id(bank.topic, bank.language),
        name=deck_lock.name,
        description=deck_description(bank, contents, version),
        notes=tuple(notes),
        first_note_id=deck_lock.created * 1000,
        notetype_mtime=notetype_mtime,
        parents=parents,
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
        version=version,
    )
    media = tuple(images.for_bank(bank)) if images else ()
    return DeckPlan(bank, package, deck_lock, report, removed, key, media)


def _change_warnings(plan: DeckPlan, previous: DeckLock | None) -> list[Diagnostic]:
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
    """What the last builds into an output folder produced from which inputs (not committed).

    Per package: the hash of its inputs and the file's size and time, so an
    unchanged deck is not rewritten. For the whole build: a fingerprint of
    every input file, so a build with nothing changed skips all the work.
    """

    def __init__(self, out_dir: Path) -> None:
        self.path = out_dir / CACHE_NAME
        try:
            loaded = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            loaded = {}
        if not isinstance(loaded, dict) or loaded.get("version") != __version__:
            loaded = {}
        self.packages: dict[str, dict[str, object]] = loaded.get("packages", {})
        self.last: dict[str, object] = loaded.get("last", {})

    def fresh(self, path: Path) -> bool:
        """Whether the file is still the one this cache recorded."""
        entry = self.packages.get(path.name)
        try:
            stat = path.stat()
        except OSError:
            return False
        return (
            isinstance(entry, dict)
            and entry.get("size") == stat.st_size
            and entry.get("mtime_ns") == stat.st_mtime_ns
        )

    def key_if_fresh(self, path: Path) -> str | None:
        entry = self.packages.get(path.name)
        if isinstance(entry, dict) and self.fresh(path):
            key = entry.get("key")
            return key if isinstance(key, str) else None
        return None

    def record(self, path: Path, key: str, reuse: str | None = None) -> None:
        stat = path.stat()
        self.packages[path.name] = {
            "key": key,
            "reuse": reuse,
            "size": stat.st_size,
            "mtime_ns": stat.st_mtime_ns,
        }

    def reusable(self, path: Path, reuse: str) -> bool:
        """Whether the package in place was built from inputs with this reuse key."""
        entry = self.packages.get(path.name)
        return isinstance(entry, dict) and entry.get("reuse") == reuse and self.fresh(path)

    def remember(self, fingerprint: str, result: BuildResult) -> None:
        self.last = {
            "inputs": fingerprint,
            "decks": [d.as_json() for d in result.decks],
            "warnings": [[d.path, d.line, d.severity, d.message] for d in result.warnings],
        }

    def unchanged(self, fingerprint: str, out_dir: Path) -> BuildResult | None:
        """The last build's result, if its inputs are the same and its packages intact."""
        if self.last.get("inputs") != fingerprint:
            return None
        try:
            decks = tuple(
                DeckReport(
                    **{
                        **d,
                        "new": 0,
                        "changed": 0,
                        "removed": 0,
                        "unchanged": d["notes"],
                        "written": False,
                    }
                )
                for d in self.last["decks"]  # type: ignore[attr-defined]
            )
            warnings = tuple(
                Diagnostic(str(p), int(line), "warning", str(m))
                for p, line, _, m in self.last["warnings"]  # type: ignore[attr-defined]
            )
        except (KeyError, TypeError, ValueError):
            return None
        if not all(self.fresh(out_dir / d.path) for d in decks):
            return None
        return BuildResult(decks, warnings)

    def to_bytes(self) -> bytes:
        data = {"version": __version__, "packages": self.packages, "last": self.last}
        return json.dumps(data, sort_keys=True, indent=1, ensure_ascii=False).encode()


def reuse_key(
    source: str | None, previous: DeckLock | None, notetype_stamp: Stamp, images: Prepared
) -> str | None:
    """What a deck's plan is a function of, when its bank is known by content: the bank
    file (its cache entry), its lock entry, the note type's stamp, its images."""
    if source is None or previous is None:
        return None
    return ids.content_hash(
        __version__,
        source,
        previous.canonical(),
        repr(notetype_stamp),
        repr(sorted((key, p.name) for key, p in images.images.items())),
    )


def unchanged_report(bank: Bank, lock: DeckLock) -> DeckReport:
    return DeckReport(
        topic=bank.topic,
        language=bank.language,
        path=package_name(bank),
        notes=len(bank.items),
        new=0,
        changed=0,
        unchanged=len(bank.items),
        removed=0,
        retired=sum(item.retired for item in bank.items),
        written=False,
        version=lock_version(bank.topic, bank.language, lock),
    )


def inputs_fingerprint(
    bank_paths: Sequence[Path], lock_path: Path, media_dir: Path, settings: Settings
) -> str:
    """A hash of everything a build reads: banks, lock, media files, settings, version."""
    digest = hashlib.sha256()
    digest.update(f"{__version__}\0{notetype.schema_hash()}\0{settings.key}\0".encode())
    for path in [*sorted(bank_paths), lock_path]:
        digest.update(str(path).encode() + b"\0")
        try:
            digest.update(hashlib.sha256(path.read_bytes()).digest())
        except OSError:
            digest.update(b"missing")
    if media_dir.is_dir():
        for path in sorted(media_dir.rglob("*")):
            stat = path.stat()
            digest.update(f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
    return digest.hexdigest()


Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class DeckJob:
    """Everything one deck's build needs, so it can run in another process."""

    bank: Bank
    previous: DeckLock | None
    notetype_mtime: int
    now: int
    images: Prepared
    cached_key: str | None
    """The input hash of the package already in place, if it is intact."""
    parents: tuple[tuple[int, str, str], ...] = ()


def run_deck_job(job: DeckJob) -> tuple[DeckPlan, bytes | None]:
    """Plan one deck, and make its package unless the one in place has the same inputs."""
    plan = plan_deck(job.bank, job.previous, job.notetype_mtime, job.now, job.images, job.parents)
    if plan.key == job.cached_key:
        return plan, None
    return plan, apkg_bytes(plan.package, plan.media)


def default_media_dir(banks_dir: Path) -> Path:
    """The project file's `media`, else `media/` beside the banks folder."""
    project, _ = load_project(banks_dir)
    return project.media or banks_dir.parent / "media"


def build(
    banks_dir: Path,
    out_dir: Path,
    bank_paths: Sequence[Path] | None = None,
    progress: Progress | None = None,
    media_dir: Path | None = None,
    image_settings: Settings | None = None,
) -> BuildResult:
    """Check every bank, then write OUT/<topic>.<language>.apkg for each and update the lock."""
    paths = list(bank_paths) if bank_paths is not None else find_banks(banks_dir)
    media_dir = media_dir or default_media_dir(banks_dir)
    image_settings = image_settings or Settings()
    lock_path = banks_dir / LOCK_NAME
    if (out_dir / CACHE_NAME).is_file():
        with exclusive(out_dir):
            fingerprint = inputs_fingerprint(
                [*paths, project_path(banks_dir)], lock_path, media_dir, image_settings
            )
            unchanged = BuildCache(out_dir).unchanged(fingerprint, out_dir)
        if unchanged is not None:
            return unchanged
    bank_cache = BankCache(out_dir / BANK_CACHE)
    size = sum(path.stat().st_size for path in paths)
    with worker_pool(size, len(paths)) as pool:
        checked = checked_banks(banks_dir, paths, pool, bank_cache)
        for bank in checked.banks:
            check_file_name(package_name(bank))
        with exclusive(out_dir):
            result = _build_locked(
                banks_dir,
                out_dir,
                paths,
                checked,
                progress,
                media_dir,
                image_settings,
                pool,
                _with_project(bank_cache.names, banks_dir),
            )
            bank_cache.save()
            return result


Parents = tuple[tuple[int, str, str], ...]


def _with_parents(reuse: str | None, parents: Parents) -> str | None:
    return ids.content_hash(reuse, repr(parents)) if reuse and parents else reuse


def _plan_version(job: DeckJob) -> tuple[str, str]:
    plan = plan_deck(job.bank, job.previous, job.notetype_mtime, job.now, job.images)
    return job.bank.key, plan.report.version


def _parent_decks(
    banks_dir: Path,
    banks: Sequence[Bank],
    old_lock: Lock,
    notetype_mtime: int,
    now: int,
    images: Prepared,
    pool: Executor | None,
) -> dict[str, Parents]:
    """Parent decks and their descriptions, which list every child deck's new version.

    Only when decks have parents: their versions are planned first, so that a
    package whose deck did not change is still rewritten when a sibling's
    version (in the shared parent's description) did.
    """
    if not any("::" in plain_text(bank.deck_name) for bank in banks):
        return {}
    jobs = [
        DeckJob(bank, old_lock.decks.get(bank.key), notetype_mtime, now, images.subset(bank), None)
        for bank in banks
    ]
    versions = dict(parallel_map(_plan_version, jobs, pool))
    project, _ = load_project(banks_dir)
    return parent_decks(banks, versions, project.reference)


def _with_project(sources: dict[str, str], banks_dir: Path) -> dict[str, str]:
    """Bank sources that also name the project file, which shapes every deck."""
    project, _ = load_project(banks_dir)
    if not project.digest:
        return sources
    return {path: f"{name}+{project.digest}" for path, name in sources.items()}


def _build_locked(
    banks_dir: Path,
    out_dir: Path,
    paths: Sequence[Path],
    checked: Checked,
    progress: Progress | None,
    media_dir: Path,
    image_settings: Settings,
    pool: Executor | None,
    bank_sources: dict[str, str],
) -> BuildResult:
    """The build proper, with the output folder to ourselves."""
    banks = checked.banks
    warnings = [d for d in checked.diagnostics if d.severity == "warning"]
    remove_stale_temporaries(out_dir)
    remove_stale_temporaries(out_dir / IMAGE_CACHE)
    images = prepare(image_refs(banks), media_dir, image_settings, cache_dir=out_dir / IMAGE_CACHE)
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
    cache = BuildCache(out_dir)
    parents = _parent_decks(banks_dir, banks, old_lock, nt_stamp.mtime, now, images, pool)
    reports: dict[str, DeckReport] = {}
    subsets: dict[str, Prepared] = {}
    jobs = []
    for bank in sorted(banks, key=lambda b: b.key):
        previous = old_lock.decks.get(bank.key)
        path = out_dir / package_name(bank)
        bank_images = subsets[bank.key] = images.subset(bank)
        reuse = _with_parents(
            reuse_key(bank_sources.get(bank.path), previous, nt_stamp, bank_images),
            parents.get(bank.key, ()),
        )
        if reuse is not None and previous is not None and cache.reusable(path, reuse):
            # the same bank file and lock entry as the package in place: nothing to redo
            new_lock.decks[bank.key] = previous
            reports[bank.key] = unchanged_report(bank, previous)
            continue
        jobs.append(
            DeckJob(
                bank=bank,
                previous=previous,
                notetype_mtime=nt_stamp.mtime,
                now=now,
                images=bank_images,
                cached_key=cache.key_if_fresh(path),
                parents=parents.get(bank.key, ()),
            )
        )
    for done, (plan, data) in enumerate(parallel_map(run_deck_job, jobs, pool), start=1):
        new_lock.decks[plan.bank.key] = plan.lock
        changes.extend(_change_warnings(plan, old_lock.decks.get(plan.bank.key)))
        path = out_dir / plan.report.path
        if data is None:
            reports[plan.bank.key] = replace(plan.report, written=False)
        else:
            changes.extend(check_package(plan.bank, plan.report.path, data))
            write_atomic(path, data)
            reports[plan.bank.key] = plan.report
        # next time the previous lock entry is this build's
        source = bank_sources.get(plan.bank.path)
        reuse = _with_parents(
            reuse_key(source, plan.lock, nt_stamp, subsets[plan.bank.key]), plan.package.parents
        )
        cache.record(path, plan.key, reuse)
        if progress:
            progress(done, len(jobs))
    ordered_reports = [reports[key] for key in sorted(reports)]
    lock_bytes = new_lock.to_bytes()
    if not lock_path.exists() or lock_path.read_bytes() != lock_bytes:
        write_atomic(lock_path, lock_bytes)
    result = BuildResult(tuple(ordered_reports), tuple(warnings), tuple(sorted(changes)))
    fingerprint = inputs_fingerprint(
        [*paths, project_path(banks_dir)], lock_path, media_dir, image_settings
    )
    cache.remember(fingerprint, result)
    cache_bytes = cache.to_bytes()
    if not cache.path.exists() or cache.path.read_bytes() != cache_bytes:
        write_atomic(cache.path, cache_bytes)
    return result
