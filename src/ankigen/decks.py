"""The build proper: each deck planned from its bank, its identity and the lock, then
packaged; packages, the lock and the record of issued times committed together.

Decks whose inputs did not change since the last build into the same folder
are not rebuilt or rewritten. Identity and time (GUIDs, renames, modification
times) are `identity`'s decisions; this module only asks.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import itertools
import json
import marshal
import operator
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ankigen import __version__
from ankigen.apkg import notetype
from ankigen.apkg.deck import deck_description
from ankigen.apkg.limits import check_package
from ankigen.apkg.note import NoteContent, note_content
from ankigen.apkg.package import PackageDeck, PackageNote, apkg_bytes
from ankigen.bank.files import Known, SourceDigest, shown_path
from ankigen.bank.model import Bank, Outline
from ankigen.bank.project import Project, parent_decks
from ankigen.build import (
    IMAGE_CACHE,
    BuildCache,
    BuildResult,
    DeckReport,
    Parents,
    Progress,
    inputs_fingerprint,
    package_name,
)
from ankigen.checks import cache_entry
from ankigen.checks.bankcache import BankCache
from ankigen.checks.incremental import (
    EntryArrival,
    checked_here,
    entry_for_package,
    entry_goes_with,
)
from ankigen.checks.translation import sources_for
from ankigen.core.atomic import Commit, remove_stale_temporaries, write_atomic
from ankigen.core.errors import AnkigenError, Diagnostic, InvalidBanks, OutputError
from ankigen.core.hashing import content_hash
from ankigen.core.parallel import Pool, parallel_map
from ankigen.identity.guid import deck_id, formerly_line, oldest_key, split_deck_key
from ankigen.identity.issued import ISSUED_NAME, Issued
from ankigen.identity.lockfile import (
    DeckLock,
    KeyLines,
    Lock,
    Texts,
    deck_text,
    parse_lock,
    text_of,
)
from ankigen.identity.resolve import (
    DeckIdentity,
    duplicate_guids,
    orphans,
    renamed_decks,
    renamed_items,
    resolve,
    swapped_items,
)
from ankigen.identity.stamp import Stamp, restamp
from ankigen.identity.versions import lock_version, note_version, with_card_version
from ankigen.images.process import Prepared, image_refs, prepare
from ankigen.images.settings import Settings
from ankigen.text.html import plain_text

if TYPE_CHECKING:
    from concurrent.futures import Future


@dataclass(frozen=True)
class DeckPlan:
    key: str
    """The bank's key: a plan made in a worker comes back without the bank it was made from."""
    package: PackageDeck | Packaged | Kept
    """The content without its parent decks, which need every deck's version; or the
    package itself, when the job knew the parents and so made it too; or where the
    process that planned the deck keeps its content to make the package next."""
    lock: DeckLock
    report: DeckReport
    warnings: tuple[Diagnostic, ...]
    media: tuple[tuple[str, bytes], ...] = ()
    lock_text: str = ""
    """`lock.deck_text` of its entry, when made in a deck's job (where it runs)."""


@dataclass(frozen=True)
class Packaged:
    """A deck's package, made where the deck was planned."""

    key: str
    """`package_key` of its content."""
    data: bytes | None
    """The package file; None when the package in place already has this content."""
    entry: bytes | None = None
    """The bank's cache entry, when it was made beside the package (`lint.entry_goes_with`)."""


@dataclass(frozen=True)
class Kept:
    """A deck's package content, kept by the process that planned it (`run_kept_package`)."""

    token: str


_kept: dict[str, tuple[PackageDeck, tuple[tuple[str, bytes], ...], str | None]] = {}
"""Package contents planned here, by `DeckJob.keep_as`, until the package is asked for."""
_tokens = itertools.count()


def plan_deck(
    bank: Bank,
    ident: DeckIdentity,
    notetype_mtime: int,
    now: int,
    images: Prepared | None = None,
    bank_path: str = "",
) -> DeckPlan:
    """The package content for one bank, its new lock entry and its change counts.

    `bank_path` is the bank file relative to the banks folder, kept in the lock so a
    deck whose bank disappears can be named."""
    previous = ident.previous
    deck_lock = DeckLock(
        name=plain_text(bank.deck_name),
        created=previous.created if previous else now,
        path=bank_path,
    )
    contents: dict[str, NoteContent] = {}
    notes: list[PackageNote] = []
    new = changed = unchanged = restored = 0
    for item in bank.items:
        item_ident = ident.items[item.id]
        content = note_content(
            bank, item, images.names(bank, item.id) if images else None, item_ident.guid
        )
        contents[item.id] = content
        stamp = restamp(item_ident.previous, item_ident.issued, content.hash, now)
        deck_lock.items[item.id] = stamp
        deck_lock.guids[item.id] = item_ident.guid
        # without a lock entry (a lock deleted, or a deck whose entry was lost in a
        # merge) what was issued for the note says what learners hold: it is new to
        # them only if nothing ever was
        known = item_ident.previous if item_ident.previous is not None else item_ident.issued
        if known is None:
            new += 1
        elif stamp == known:
            unchanged += 1
        else:
            changed += 1
            restored += known.hash == content.hash
        fields = with_card_version(content.fields, note_version(stamp.hash, stamp.mtime))
        notes.append(PackageNote(content.guid, fields, content.tags, stamp.mtime))
    version = lock_version(bank.topic, bank.language, deck_lock)
    oldest = oldest_key(bank.topic, bank.language, bank.formerly_topics, bank.formerly_languages)
    package = PackageDeck(
        deck_id=deck_id(*oldest),
        name=deck_lock.name,
        description=deck_description(bank, list(contents.values()), version),
        notes=tuple(notes),
        first_note_id=deck_lock.created * 1000,
        notetype_mtime=notetype_mtime,
    )
    report = DeckReport(
        topic=bank.topic,
        language=bank.language,
        path=package_name(bank),
        notes=len(notes),
        new=new,
        changed=changed,
        unchanged=unchanged,
        removed=len(ident.removed),
        retired=sum(item.retired for item in bank.items),
        written=True,
        restored=restored,
        version=version,
    )
    media = tuple(images.for_bank(bank)) if images else ()
    warnings = tuple(_deck_warnings(bank, ident, deck_lock, contents, restored))
    return DeckPlan(bank.key, package, deck_lock, report, warnings, media)


def relative_bank_path(bank: Bank, banks_dir: Path) -> str:
    path = Path(bank.path)
    return (path.relative_to(banks_dir) if path.is_relative_to(banks_dir) else path).as_posix()


def _deck_warnings(
    bank: Bank,
    ident: DeckIdentity,
    deck_lock: DeckLock,
    contents: dict[str, NoteContent],
    restored: int,
) -> list[Diagnostic]:
    previous = ident.previous
    items_line = bank.lines.get("items", 1)
    found = []
    renamed = renamed_items(contents, ident)
    for old_id, new_id in renamed:
        item = next(i for i in bank.items if i.id == new_id)
        found.append(
            Diagnostic(
                bank.path,
                item.line_at("id"),
                "warning",
                f"item {new_id!r} has the content of the removed item {old_id!r}: if it was "
                f"renamed, add `formerly: [{old_id}]` to it so learners keep their note and "
                "review history; as it is, they get a new card and keep the old one",
            )
        )
    for a, b in swapped_items(contents, ident):
        item = next(i for i in bank.items if i.id == a)
        found.append(
            Diagnostic(
                bank.path,
                item.line_at("id"),
                "warning",
                f"items {a!r} and {b!r} swapped their content: review history follows the id, "
                f"so learners' history of each question would move to the other; swap the ids "
                "back (a `formerly:` cannot name a live id)",
            )
        )
    removed = [r for r in ident.removed if r not in {old for old, _ in renamed}]
    if removed:
        shown = ", ".join(removed[:5]) + (" ..." if len(removed) > 5 else "")
        found.append(
            Diagnostic(
                bank.path,
                items_line,
                "warning",
                f"{len(removed)} item(s) removed since the last build ({shown}): "
                "Anki never deletes notes on re-import, so learners keep them; put the item "
                "back with `retired: true` so they can find it (tag ankigen::retired) "
                "and delete it",
            )
        )
    if previous is not None and previous.name != deck_lock.name:
        line = bank.lines.get("deck", bank.lines.get("title", 1))
        found.append(
            Diagnostic(
                bank.path,
                line,
                "warning",
                f"the deck is renamed from {previous.name!r} to {deck_lock.name!r}: people who "
                f"imported it keep their cards in {previous.name!r} and get only new cards in the "
                f"new deck; set `deck: {json.dumps(previous.name, ensure_ascii=False)}` "
                "to keep the old name",
            )
        )
    if restored:
        found.append(
            Diagnostic(
                bank.path,
                items_line,
                "warning",
                f"{restored} note(s) went back to an earlier text (a revert?): a later text was "
                "already issued, so they get a newer modification time and learners who "
                "imported the later text receive the earlier one again",
            )
        )
    return found


def reuse_key(
    source: SourceDigest,
    ident: DeckIdentity,
    issued: Issued,
    notetype_stamp: Stamp,
    images: Prepared,
    previous: DeckLock | None,
    project_digest: str = "",
    texts: Texts | None = None,
    as_resolved: bool = False,
) -> str | None:
    """What a deck's plan is a function of, when its bank is known by content: the bank
    file's bytes, the project file, its lock entry (its text, taken from `texts` where
    known), what was issued for its notes, the note type's stamp and its images.
    `as_resolved`: `issued` is the record `ident` was resolved with, as it was then."""
    if previous is None:
        return None
    # what was issued for its notes where that is not the lock entry's stamp (the entry
    # is in the key): the two give the stamp issued for every note, and most notes were
    # last issued as the lock has them, so the key costs no text per note
    if as_resolved and previous is ident.previous and not ident.odd:
        # `resolve` found every note last issued as this entry has it: looking each note
        # up again cost 10 to 15 ms per deck of 10,000, on the main process's way to
        # the plans of an edit
        evidence = ""
    else:
        locked = {previous.guids[item_id]: stamp for item_id, stamp in previous.items.items()}
        guids = ident.guids  # in the bank's order, which its digest fixes
        newest = list(map(issued.notes.get, guids))  # `Issued.newest`, without a call each
        as_locked = list(map(locked.get, guids))
        evidence = (
            ""
            if newest == as_locked  # compared at once: the usual case
            else "".join(
                f"{guid}\x1f{stamp.hash}\x1f{stamp.mtime}\x1e" if stamp else f"{guid}\x1e"
                for guid, stamp, lock_stamp in zip(guids, newest, as_locked, strict=True)
                if stamp != lock_stamp
            )
        )
    return content_hash(
        __version__,
        source.digest,
        project_digest,
        text_of(ident.key, previous, texts or {}),  # as if filed under this deck's key
        evidence,
        repr(notetype_stamp),
        repr(sorted((key, p.name) for key, p in images.images.items())),
    )


def unchanged_report(outlined: Outline, lock: DeckLock, version: str | None = None) -> DeckReport:
    """The report of a deck whose package holds its notes already; `version`, if known,
    saves making it again from every note's stamp."""
    bank = outlined.bank
    return DeckReport(
        topic=bank.topic,
        language=bank.language,
        path=package_name(bank),
        notes=len(outlined.items),
        new=0,
        changed=0,
        unchanged=len(outlined.items),
        removed=0,
        retired=sum(item.retired for item in outlined.items),
        written=False,
        version=version or lock_version(bank.topic, bank.language, lock),
    )


@dataclass(frozen=True)
class DeckJob:
    """Everything one deck's plan needs, so it can run in another process."""

    source: SourceDigest
    entry: bytes
    """The bank as its bank cache entry (`cache_entry.dump`): compressed, it costs little
    to hold and to send, and loading it costs about what unpickling the bank did."""
    project: Project
    ident: DeckIdentity
    notetype_mtime: int
    now: int
    images: Prepared
    bank_path: str
    parents: Parents | None = None
    """The deck's parent decks, when known before every deck is planned: the job then
    makes the package too, so its notes never travel between processes."""
    in_place: str | None = None
    """`package_key` of the deck's package in the output folder, if any."""
    bank: Bank | None = None
    """The bank, when this process parsed it and the job runs here; never sent to a
    worker (see `__getstate__`), which loads it from `entry`."""
    keep_as: str | None = None
    """With the parents known: keep the package's content under this token and send the
    plan without it; the package is made when asked for (`run_kept_package`), as soon as
    the plan is in, while the build proper does its own end (the lock, the issued
    record)."""

    def __getstate__(self) -> dict[str, object]:
        return self.__dict__ | {"bank": None}

    def inputs(self) -> tuple[object, ...]:
        """What its plan is a function of: the entry and the bank are the source's bytes."""
        return (
            self.source,
            self.project,
            self.ident,
            self.notetype_mtime,
            self.now,
            self.images,
            self.bank_path,
            self.parents,
            self.in_place,
        )


def _job_size(job: DeckJob) -> int:
    return len(job.entry)


def run_deck_job(job: DeckJob) -> DeckPlan:
    """Plan one deck: its notes, lock entry, version and package content; and make the
    package when the job knows the parents."""
    loaded = job.bank or checked_here(job.source.digest)
    if loaded is None:
        loaded, _ = cache_entry.load(job.source, job.entry, sources_for(job.project.reference))
    assert loaded is not None  # only banks without errors are planned
    bank = job.project.apply(loaded)
    plan = plan_deck(bank, job.ident, job.notetype_mtime, job.now, job.images, job.bank_path)
    if job.parents is None:
        return replace(plan, lock_text=deck_text(bank.key, plan.lock))
    assert isinstance(plan.package, PackageDeck)  # plan_deck makes the content, not the file
    package = replace(plan.package, parents=job.parents)
    if job.keep_as is not None:
        # the lock's text of the entry too is left to the build proper, which has the time
        _kept[job.keep_as] = (package, plan.media, job.in_place)
        entry_goes_with(job.source.digest, job.keep_as)
        return replace(plan, package=Kept(job.keep_as), media=())
    plan = replace(plan, lock_text=deck_text(bank.key, plan.lock))
    return replace(plan, package=_packaged(package, plan.media, job.in_place), media=())


def _packaged(
    package: PackageDeck,
    media: Sequence[tuple[str, bytes]],
    in_place: str | None,
    while_deflating: Callable[[], object] | None = None,
) -> Packaged:
    key = package_key(package)
    return Packaged(key, None if key == in_place else apkg_bytes(package, media, while_deflating))


def run_kept_package(token: str) -> Packaged | None:
    """The package of a deck planned in this process (`DeckJob.keep_as`); None if it was
    not planned here, or cannot be made: the build proper then plans it again, and
    reports what is wrong."""
    kept = _kept.pop(token, None)
    entry = entry_for_package(token)  # the bank's, if it goes with this package
    packaged = None
    if kept is not None:
        with contextlib.suppress(AnkigenError):
            packaged = _packaged(*kept, while_deflating=entry.start if entry else None)
    made = entry.result() if entry else None
    return replace(packaged, entry=made) if packaged is not None and made else packaged


def run_early_job(job: DeckJob) -> DeckPlan | None:
    """`run_deck_job` for a deck planned early: a failure is not reported here but where
    the deck is planned again, in its turn (it might not be, if another bank's errors
    stop the build)."""
    try:
        return run_deck_job(job)
    except AnkigenError:
        return None


class Evidence:
    """The lock and what was issued for each note (the output folder's record and the
    lock's git history): read while the workers start on the banks (`read`, as
    `lint.check_outlines`'s `meanwhile`); the decks planned early wait for it."""

    def __init__(self, out_dir: Path, lock_path: Path, lock_bytes: bytes | None) -> None:
        self.out_dir, self.lock_path, self.lock_bytes = out_dir, lock_path, lock_bytes
        self.lock = Lock()
        self.lock_problems: list[Diagnostic] = []
        self.issued: Issued | None = None
        self.ready = threading.Event()

    def read(self) -> None:
        try:
            self.lock, self.lock_problems = parse_lock(shown_path(self.lock_path), self.lock_bytes)
            self.issued = read_issued(self.out_dir, self.lock_path)
        finally:
            self.ready.set()  # read or not: nothing waits for it any longer


class EarlyPlans:
    """Decks planned as soon as their bank is checked, while other banks still are (see
    `lint.AfterCheck`), in the process that checked the bank: checking and planning
    overlap, no process waits at the end of either, and a bank edited alone is checked
    and planned in a worker while this process reads the lock and prepares the rest.

    Only decks whose plan needs nothing from other banks: without images (processed
    for all banks at once) or a generated parent deck. A plan is used only if the build
    proper makes the same job (`DeckJob.inputs`): made before the output folder was
    locked, it is checked once it is. Plans come from the thread that feeds the workers,
    maybe after the banks' results: `take` waits for one still being made."""

    def __init__(
        self,
        banks_dir: Path,
        out_dir: Path,
        project: Project,
        evidence: Evidence,
        now: int,
        lone_worker: Pool | None = None,
    ) -> None:
        self.lone_worker = lone_worker
        """The one worker that checks the one bank checked: its deck's plan comes first,
        and the package is asked for as soon as the plan is in (`DeckJob.keep_as`), so
        the build proper ends its own work while the package is made."""
        self.packaging: dict[str, Future[Packaged | None]] = {}
        """By `Kept.token`: the packages asked for."""
        _kept.clear()  # what an earlier build in this process left
        self.banks_dir = banks_dir
        self.out_dir = out_dir
        self.project = project
        self.evidence = evidence
        self.now = now
        self.cache = BuildCache(out_dir)
        self.changed = threading.Condition()
        self.inputs: dict[Path, tuple[object, ...]] = {}
        self.pending: set[Path] = set()
        self.plans: dict[Path, DeckPlan] = {}
        self.idents: dict[str, DeckIdentity] = {}
        """By deck key: the build proper resolves them all again, but for these."""
        self.failure: BaseException | None = None
        """An outcome that could not be taken in (a bug): `take` raises it rather than
        wait for a plan that will never come, as the thread it failed in may have no
        one left to tell."""

    def after(
        self, source: SourceDigest, outlined: Outline, entry: bytes, bank: Bank | None
    ) -> Callable[[], object] | None:
        applied = self.project.apply(outlined.bank)
        name = plain_text(applied.deck_name)
        if "::" in name or any(item.images for item in outlined.items):
            return None
        self.evidence.ready.wait()
        lock, issued = self.evidence.lock, self.evidence.issued
        if issued is None:  # it could not be read: the build stops
            return None
        ident = resolve([replace(outlined, bank=applied)], lock, issued)
        job = DeckJob(
            source=source,
            entry=entry,
            project=self.project,
            ident=ident[applied.key],
            notetype_mtime=notetype_stamp(lock, self.now).mtime,
            now=self.now,
            images=Prepared({}, ()),
            bank_path=relative_bank_path(applied, self.banks_dir),
            parents=(),
            in_place=self.cache.key_if_fresh(self.out_dir / package_name(applied)),
            bank=bank,
            keep_as=f"{os.getpid()}.{next(_tokens)}" if self.lone_worker is not None else None,
        )
        with self.changed:
            self.idents.update(ident)
            self.inputs[source.path] = job.inputs()
            self.pending.add(source.path)
        return functools.partial(run_early_job, job)

    def collect(
        self,
        source: SourceDigest,
        outcome: object,
        entry_later: EntryArrival | None = None,
    ) -> None:
        packaging = None
        with self.changed:
            try:
                if isinstance(outcome, DeckPlan):
                    self.plans[source.path] = outcome
                    if isinstance(outcome.package, Kept) and self.lone_worker is not None:
                        token = outcome.package.token
                        # a pool shut down (the build stopped) takes no work: the build
                        # proper, if it goes on, makes the package itself (`_kept_package`)
                        with contextlib.suppress(RuntimeError):
                            packaging = self.lone_worker.submit(run_kept_package, token)
                            self.packaging[token] = packaging
            except BaseException as exc:
                self.failure = exc
                raise
            finally:
                self.pending.discard(source.path)
                self.changed.notify_all()
        if entry_later is not None:
            # the bank's entry comes with the package, or is made where it is needed
            if packaging is None:
                entry_later(None)
            else:
                packaging.add_done_callback(lambda done: entry_later(_entry_with(done)))

    def take(self, job: DeckJob) -> DeckPlan | None:
        """The plan made early for this job, if it was made from the same inputs."""
        path = job.source.path
        with self.changed:
            self.changed.wait_for(lambda: path not in self.pending)
            if self.failure is not None:
                raise self.failure
            plan = self.plans.pop(path, None)
            made_from = self.inputs.pop(path, None)
        return plan if plan is not None and made_from == job.inputs() else None


def _entry_with(packaging: Future[Packaged | None]) -> bytes | None:
    """The bank's entry that came with a package (`Packaged.entry`), if it did."""
    if packaging.cancelled() or packaging.exception() is not None:
        return None
    packaged = packaging.result()
    return packaged.entry if packaged is not None else None


def plan_decks(
    jobs: Sequence[DeckJob],
    pool: Pool | None,
    early: EarlyPlans | None,
    with_entry: Callable[[DeckJob], DeckJob],
) -> Iterator[DeckPlan]:
    """Each job's plan: made early, or now (`with_entry` gives it its bank's entry)."""
    todo = []
    for job in jobs:
        plan = early.take(job) if early is not None else None
        if plan is None:
            todo.append(with_entry(job))
        else:
            yield plan
    yield from parallel_map(run_deck_job, todo, pool, _job_size)


@dataclass(frozen=True)
class PackageJob:
    package: PackageDeck
    media: tuple[tuple[str, bytes], ...]


def run_package_job(job: PackageJob) -> bytes:
    return apkg_bytes(job.package, job.media)


def package_key(package: PackageDeck) -> str:
    """Hash of everything that goes into a package: its fields and its notes', as plain
    values written by `marshal` at version 2, by type and content alone (the dataclasses'
    own repr, made by Python code per object, took 0.16 s for a deck of 10,000 notes;
    a tuple's, a tenth; marshal copies the texts' UTF-8 as they are)."""
    deck = tuple(getattr(package, f.name) for f in dataclasses.fields(package) if f.name != "notes")
    notes = list(map(_NOTE_FIELDS, package.notes))
    values = marshal.dumps((__version__, notetype.schema_hash(), deck, notes), 2)
    return hashlib.sha256(values).hexdigest()[:16]


_NOTE_FIELDS = operator.attrgetter(*(f.name for f in dataclasses.fields(PackageNote)))


@dataclass(frozen=True)
class Inputs:
    banks_dir: Path
    out_dir: Path
    lock_path: Path
    lock_bytes: bytes | None
    lock: Lock
    sources: Sequence[SourceDigest]
    project: Project
    project_bytes: bytes | None
    media_given: Path | None
    """The media folder asked for (`--media`), if one was."""
    by_status: Known = dataclasses.field(default_factory=dict)
    """The banks a later build may know by their file's status (`sources.Signature`)."""


def build_locked(
    inputs: Inputs,
    outlines: Sequence[Outline],
    diagnostics: Sequence[Diagnostic],
    bank_cache: BankCache,
    progress: Progress | None,
    media_dir: Path,
    image_settings: Settings,
    pool: Pool | None,
    now: int,
    prune: bool,
    early: EarlyPlans,
) -> BuildResult:
    """The build proper, with the output folder to ourselves.

    The banks' items, the build's largest data, stay in the bank cache: each deck's job
    loads its bank from its cache entry where it runs; here only their outlines."""
    banks = [outlined.bank for outlined in outlines]  # without their items
    out_dir, lock_path, old_lock = inputs.out_dir, inputs.lock_path, inputs.lock
    warnings = [d for d in diagnostics if d.severity == "warning"]
    for folder in (out_dir, out_dir / IMAGE_CACHE, lock_path.parent):
        remove_stale_temporaries(folder)
    images = prepare(
        image_refs(outlines), media_dir, image_settings, cache_dir=out_dir / IMAGE_CACHE
    )
    if images.diagnostics:
        raise InvalidBanks([*diagnostics, *images.diagnostics])

    issued = early.evidence.issued
    assert issued is not None  # read while the banks were checked, or the build stopped
    planned: EarlyPlans | None = early
    if not issued.still_current():  # another build wrote it since it was read
        issued = read_issued(out_dir, lock_path)
        planned = None  # made from the record as it was
    decks = resolve(outlines, old_lock, issued, planned.idents if planned else None)
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
    nt_stamp = notetype_stamp(old_lock, now)
    changes: list[Diagnostic] = []
    if old_lock.notetype is not None and old_lock.notetype.hash != nt_stamp.hash:
        changes.append(
            Diagnostic(
                shown_path(lock_path),
                2,
                "warning",
                "the card templates changed since the last build: importing the new packages "
                "updates the note type in everyone's collection, replacing any changes a "
                "learner made to its templates or styling",
            )
        )
    orphan_keys = orphans(decks, old_lock)
    standing = _orphan_warnings(outlines, decks, old_lock, orphan_keys, inputs, prune)
    changes.extend(standing)

    new_lock = Lock(notetype=nt_stamp)
    for key in orphan_keys:
        if not prune:
            new_lock.decks[key] = old_lock.decks[key]  # kept: restoring the bank keeps history
    cache = BuildCache(out_dir)
    source_of = {str(source.path): source for source in inputs.sources}
    project_digest = inputs.project.digest
    subsets = {bank.key: images.subset(bank) for bank in banks}
    # the entries' texts as read, where the lock is laid out as this version writes it:
    # the kept entries' texts in the new lock, and what their reuse keys hash
    lock_texts = dict(old_lock.texts)
    reuse: dict[str, str | None] = {
        bank.key: reuse_key(
            source_of[bank.path],
            decks[bank.key],
            issued,
            nt_stamp,
            subsets[bank.key],
            decks[bank.key].previous,
            project_digest,
            lock_texts,
            as_resolved=True,
        )
        for bank in banks
    }

    def job(bank: Bank, parents: Parents | None) -> DeckJob:
        """The deck's job; its bank's entry left to `with_entry` if it is yet to come from
        the worker that planned the deck early (it comes with the package)."""
        source = source_of[bank.path]
        coming = bank_cache.coming(source)
        return DeckJob(
            source=source,
            entry=cache_entry.LATER if coming else bank_cache.checked_entry(source),
            project=inputs.project,
            ident=decks[bank.key],
            notetype_mtime=nt_stamp.mtime,
            now=now,
            images=subsets[bank.key],
            bank_path=relative_bank_path(bank, inputs.banks_dir),
            parents=parents,
            in_place=None if parents is None else cache.key_if_fresh(out_dir / package_name(bank)),
            bank=bank_cache.kept_bank(source),
        )

    def with_entry(made: DeckJob) -> DeckJob:
        if made.entry != cache_entry.LATER:
            return made
        return replace(made, entry=bank_cache.checked_entry(made.source))

    def job_with_entry(bank: Bank, parents: Parents | None) -> DeckJob:
        return with_entry(job(bank, parents))

    # a deck without a generated parent deck needs no sibling's version: planned and
    # packaged in one step
    has_parents = parent_decks(banks, {}, inputs.project.reference)

    # 1. decks whose bank bytes, lock entry and evidence are those of the package in
    # place keep their lock entry; every other deck is planned
    unchanged = _same_content(outlines, decks, reuse, cache, out_dir)
    same_content = set(unchanged)
    by_key = {bank.key: bank for bank in banks}
    plans: dict[str, DeckPlan] = {}
    to_plan = [
        job(by_key[k], None if k in has_parents else ())
        for k in sorted(by_key)
        if k not in same_content
    ]
    # the lock's text of the entries of decks with the same content not known as read,
    # made now: while decks planned early in workers may still be made, not after them
    for key in sorted(same_content):
        previous = decks[key].previous
        assert previous is not None
        lock_texts[key] = (previous, text_of(key, previous, lock_texts))
    for plan in plan_decks(to_plan, pool, planned, with_entry):
        plans[plan.key] = plan

    # 2. parent decks list every child's version, so a sibling's new version changes them
    versions = {key: plan.report.version for key, plan in plans.items()}
    versions.update((key, unchanged[key].version) for key in same_content)
    parents = parent_decks(banks, versions, inputs.project.reference)
    stale = [
        key
        for key in sorted(same_content)
        if not cache.reusable(out_dir / package_name(by_key[key]), reuse[key], parents.get(key, ()))
    ]
    again = [job(by_key[k], parents.get(k, ())) for k in stale]
    for plan in plan_decks(again, pool, planned, with_entry):
        plans[plan.key] = plan

    # 3. packages, for planned decks whose package in place differs
    left = same_content - set(stale)  # decks left as they were: lock entry and package
    reports: dict[str, DeckReport] = {}
    for key in left:
        previous = decks[key].previous
        assert previous is not None
        new_lock.decks[key] = previous
        reports[key] = unchanged[key]
    jobs: dict[str, PackageJob] = {}
    package_keys: dict[str, str] = {}
    made: dict[str, bytes] = {}
    kept: dict[str, tuple[DeckPlan, Future[Packaged | None] | None]] = {}

    def made_where_planned(key: str, report: DeckReport, packaged: Packaged) -> None:
        package_keys[key] = packaged.key
        if packaged.data is not None:
            made[key] = packaged.data
        reports[key] = report if packaged.data is not None else replace(report, written=False)

    for key, plan in sorted(plans.items()):
        new_lock.decks[key] = plan.lock
        if plan.lock_text:
            lock_texts[key] = (plan.lock, plan.lock_text)
        changes.extend(plan.warnings)
        if isinstance(plan.package, Kept):
            # asked for from the worker that planned the deck as soon as the plan came
            kept[key] = (plan, early.packaging.get(plan.package.token))
            continue
        if isinstance(plan.package, Packaged):
            made_where_planned(key, plan.report, plan.package)
            continue
        package = replace(plan.package, parents=parents.get(key, ()))
        package_keys[key] = package_key(package)
        in_place = cache.key_if_fresh(out_dir / plan.report.path) == package_keys[key]
        if not in_place:
            jobs[key] = PackageJob(package, plan.media)
        reports[key] = replace(plan.report, written=False) if in_place else plan.report
    # the notes of every deck are the build's largest data: gone once packaged
    written = {key: plan.report.path for key, plan in plans.items()}
    del plans
    made.update(zip(jobs, parallel_map(run_package_job, list(jobs.values()), pool), strict=True))
    del jobs
    if pool is not None:
        pool.close()  # the last work for workers: they exit while this process writes
    # a deck left as it was needs none: its reuse key binds its lock entry and what was
    # issued for its notes as they were when the entry was last noted (see `record` below)
    for key, deck in new_lock.decks.items():
        if key not in left:
            for item_id, stamp in deck.items.items():
                issued.note(deck.guids[item_id], stamp)

    # packages of decks renamed with `formerly:` or pruned are superseded
    removals = [
        out_dir / f"{key}.apkg"
        for key in {d.previous_key for d in decks.values() if d.previous_key} | set(orphan_keys)
        if key not in decks
        and (prune or key not in orphan_keys)
        and f"{key}.apkg" in cache.packages
    ]
    lock_bytes = new_lock.to_bytes(lock_texts)
    # made once every planned deck's stamps are noted: a later build that finds this key
    # again knows them noted (above)
    contents = {
        key: reuse_key(
            source_of[by_key[key].path],
            decks[key],
            issued,
            nt_stamp,
            subsets[key],
            new_lock.decks[key],
            project_digest,
            lock_texts,
        )
        for key in written
    }
    # the inputs as they were read: a bank saved during this build makes the next one real
    after = inputs_fingerprint(
        inputs.sources,
        lock_bytes,
        inputs.banks_dir,
        inputs.media_given,
        image_settings,
        prune,
        inputs.project_bytes,
    )
    with Commit() as commit:
        # the evidence first, the lock last: a stop in between only makes times newer;
        # both are written while the build waits for the packages still being made
        commit.stage(issued.path, issued.to_bytes(), rank=0)
        if inputs.lock_bytes != lock_bytes:
            commit.stage(lock_path, lock_bytes, rank=2)
        for key, (plan, future) in kept.items():
            planned_as = functools.partial(job_with_entry, by_key[key], parents.get(key, ()))
            made_where_planned(key, plan.report, _kept_package(future, plan, planned_as))
        for done, (key, data) in enumerate(sorted(made.items()), start=1):
            changes.extend(check_package(by_key[key], written[key], data))
            commit.stage(out_dir / written[key], data, rank=1)
            if progress:
                progress(done, len(made))
        commit.done(removals)
    for path in removals:
        cache.packages.pop(path.name, None)
    for key, name in written.items():
        version = reports[key].version
        content_key = contents[key]
        cache.record(out_dir / name, package_keys[key], content_key, parents.get(key, ()), version)
    ordered_reports = [reports[key] for key in sorted(reports)]
    pruned = tuple(orphan_keys) if prune else ()
    result = BuildResult(tuple(ordered_reports), tuple(warnings), tuple(sorted(changes)), pruned)
    cache.remember(after, result, images, media_dir, standing)
    cache.banks = inputs.by_status
    # only a cache, written once the packages and the lock are in place: if it cannot be
    # (a folder where it should be), the next build is a real one
    with contextlib.suppress(OutputError):
        write_atomic(cache.path, cache.to_bytes())
    return result


def _kept_package(
    future: Future[Packaged | None] | None, plan: DeckPlan, job: Callable[[], DeckJob]
) -> Packaged:
    """The package of a deck planned early whose content stayed where it was planned
    (`DeckJob.keep_as`): made there, else here, else planned again here (its job is the
    one the plan was made for)."""
    assert isinstance(plan.package, Kept)
    packaged = None
    if future is not None:
        # a worker that failed, or died, leaves the package to this process
        with contextlib.suppress(Exception):
            packaged = future.result()
    packaged = packaged or run_kept_package(plan.package.token)
    if packaged is None:
        again = run_deck_job(job())
        assert isinstance(again.package, Packaged)  # the job knows the parents
        packaged = again.package
    return packaged


def notetype_stamp(lock: Lock, now: int) -> Stamp:
    """The note type's stamp in the new lock: the build proper and the decks planned early
    must agree on it (`DeckJob.inputs` holds its time)."""
    return restamp(lock.notetype, None, notetype.schema_hash(), now)


def read_issued(out_dir: Path, lock_path: Path) -> Issued:
    """What was issued for each note: the output folder's record and the lock's git history."""
    issued = Issued(out_dir / ISSUED_NAME)
    issued.read_git_history(lock_path)
    return issued


def _same_content(
    outlines: Sequence[Outline],
    decks: dict[str, DeckIdentity],
    reuse: dict[str, str | None],
    cache: BuildCache,
    out_dir: Path,
) -> dict[str, DeckReport]:
    """Reports of the decks whose bank bytes, lock entry and evidence are those of the
    package in place."""
    found = {}
    for outlined in outlines:
        bank = outlined.bank
        ident, content_key = decks[bank.key], reuse[bank.key]
        if content_key is None or ident.previous is None or ident.previous_key != bank.key:
            continue
        path = out_dir / package_name(bank)
        if cache.same_content(path, content_key):
            version = cache.recorded_version(path)
            found[bank.key] = unchanged_report(outlined, ident.previous, version)
    return found


def _orphan_warnings(
    outlines: Sequence[Outline],
    decks: dict[str, DeckIdentity],
    lock: Lock,
    orphan_keys: Sequence[str],
    inputs: Inputs,
    prune: bool,
) -> list[Diagnostic]:
    """Decks in the lock with no bank: kept and named, and matched to renamed banks."""
    found = []
    # indexing the lock's lines takes a second at 100,000 notes: only for a message
    lines = KeyLines.of(inputs.lock_bytes if orphan_keys else None)
    lock_path = inputs.lock_path
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
