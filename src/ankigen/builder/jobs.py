"""Work across processes: a deck's job (its plan, and the package the worker keeps
until asked), plans made as soon as their bank is checked (`EarlyPlans`), and the
evidence of times already issued, read while the banks are checked."""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ankigen.apkg import notetype
from ankigen.apkg.package import PackageDeck, apkg_bytes
from ankigen.bank.files import SourceDigest, shown_path
from ankigen.bank.model import Bank, Outline
from ankigen.bank.project import Project
from ankigen.builder.cache import BuildCache
from ankigen.builder.deckplan import (
    notetype_stamp,
    package_key,
    plan_deck,
    relative_bank_path,
)
from ankigen.builder.handoff import DeckPlan, HeldPackage, Packaged
from ankigen.builder.result import (
    Parents,
    package_name,
)
from ankigen.checks import cache_entry
from ankigen.checks.incremental import (
    EntryArrival,
    EntryLater,
    checked_here,
    entry_goes_with,
)
from ankigen.checks.translation import sources_for
from ankigen.core.errors import AnkigenError, Diagnostic
from ankigen.core.parallel import Pool, parallel_map
from ankigen.identity.issued import ISSUED_NAME, Issued
from ankigen.identity.lockfile import (
    Lock,
    deck_text,
    parse_lock,
)
from ankigen.identity.resolve import (
    DeckIdentity,
    resolve,
)
from ankigen.images.process import Prepared
from ankigen.text.html import plain_text

if TYPE_CHECKING:
    from concurrent.futures import Future

    from ankigen.apkg.notetype import Templates


_held: dict[str, Packaging] = {}
"""Packages made here from the decks planned here, by `DeckJob.hold_as`, until asked for."""


_entries_held: dict[str, EntryLater] = {}
"""The cache entries of the banks of those decks, until asked for (`run_held_entry`)."""


_tokens = itertools.count()


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
    hold_as: str | None = None
    """With the parents known: keep the package's content under this token and send the
    plan without it; the package is made when asked for (`run_held_package`), as soon as
    the plan is in, while the build proper does its own end (the lock, the issued
    record)."""
    templates: Templates | None = None
    """The note type's templates, as this process made them, for a worker that would
    make them again (`notetype.adopt_templates`)."""
    in_place_version: str | None = None
    """The deck's version recorded with the package in place, where it is known: a
    package kept for another version is made without asking first whether it is the
    one in place."""

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
    if job.templates is not None:
        notetype.adopt_templates(job.templates)
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
    if job.hold_as is not None:
        # the lock's text of the entry too is left to the build proper, which has the time
        entry = entry_goes_with(job.source.digest, job.hold_as)
        if entry is not None:
            _entries_held[job.hold_as] = entry
        # a package in place of another version holds other content: the version is in
        # the deck's description
        differs = job.in_place is None or (
            job.in_place_version is not None and plan.report.version != job.in_place_version
        )
        _held[job.hold_as] = Packaging(package, plan.media, job.in_place, differs)
        return replace(plan, package=HeldPackage(job.hold_as), media=())
    plan = replace(plan, lock_text=deck_text(bank.key, plan.lock))
    return replace(plan, package=_packaged(package, plan.media, job.in_place), media=())


def _packaged(
    package: PackageDeck,
    media: Sequence[tuple[str, bytes]],
    in_place: str | None,
    compressing: Callable[[], object] | None = None,
    key_after: Callable[[], str] | None = None,
) -> Packaged:
    """The package, unless the package in place has its content. `key_after`: that
    package is known to hold other content; the package is made at once, and its key
    asked of `key_after` once it is (made meanwhile, while it was compressed)."""
    if key_after is not None:
        data = apkg_bytes(package, media, compressing)
        return Packaged(key_after(), data)
    key = package_key(package)
    if key == in_place:
        return Packaged(key, None)
    return Packaged(key, apkg_bytes(package, media, compressing))


class Packaging(threading.Thread):
    """A deck's package, made in the worker that planned the deck as soon as the plan is
    made: while the plan travels to the build proper and the package is asked for (70 ms
    of an edit at 10 x 10,000 items, the worker idle)."""

    def __init__(
        self,
        package: PackageDeck,
        media: Sequence[tuple[str, bytes]],
        in_place: str | None,
        differs: bool = False,
    ) -> None:
        """`differs`: the package in place, if any, is known to hold other content (another
        version of the deck, which its description shows): the package is made without
        its key first, and its key is made while it is compressed (`key_meanwhile`)."""
        super().__init__(name="ankigen-package", daemon=True)
        self.package, self.media, self.in_place = package, media, in_place
        self.differs = differs
        self.packaged: Packaged | None = None
        self.failure: BaseException | None = None
        self.compressing = threading.Event()
        """Set once the package needs the interpreter no more: it is being compressed, or
        is done, or failed."""
        self._key: str | None = None
        self._key_made = threading.Lock()
        self.start()

    def run(self) -> None:
        try:
            with contextlib.suppress(AnkigenError):  # reported where it is made again
                self.packaged = _packaged(
                    self.package,
                    self.media,
                    self.in_place,
                    self.compressing.set,
                    self.key_meanwhile if self.differs else None,
                )
        except BaseException as exc:  # a bug: raised where the package is asked for
            self.failure = exc
        finally:
            self.compressing.set()

    def key_meanwhile(self) -> str:
        """The package's key, made once, by whichever thread asks first: the one that asks
        for the package, while it is compressed (3 to 5 ms of an edit at 10 x 1,000
        items), or this one, once it is."""
        with self._key_made:
            if self._key is None:
                self._key = package_key(self.package)
            return self._key

    def result(self) -> Packaged | None:
        self.join()
        if self.failure is not None:
            raise self.failure
        return self.packaged


def run_held_package(token: str) -> Packaged | None:
    """The package of a deck planned in this process (`DeckJob.hold_as`); None if it was
    not planned here, or cannot be made: the build proper then plans it again, and
    reports what is wrong.

    While the package is compressed (libdeflate leaves the interpreter lock free), the
    bank's cache entry, asked for next (`run_held_entry`), is made, then the package's
    key where it was not needed first. Made beside the whole package, the entry's JSON
    encoding held the interpreter lock from it (an edit's package took half as long
    again at 10 x 1,000 items); made after it, it came 12 to 16 ms after the package,
    and the build ended with it."""
    packaging = _held.pop(token, None)
    if packaging is None:
        return None
    packaging.compressing.wait()
    entry = _entries_held.get(token)
    if entry is not None:
        entry.result()
    if packaging.differs:
        packaging.key_meanwhile()
    return packaging.result()


def run_held_entry(token: str) -> bytes | None:
    """The cache entry of the bank whose deck's package is kept under `token`, if it was
    checked here: made with the package (`run_held_package`), or now."""
    entry = _entries_held.pop(token, None)
    return entry.result() if entry is not None else None


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
    `checks.incremental.check_outlines`'s `meanwhile`); the decks planned early wait for it."""

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
    `checks.incremental.AfterCheck`), in the process that checked the bank: checking and planning
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
        last: BuildCache | None = None,
    ) -> None:
        self.lone_worker = lone_worker
        """The one worker that checks the one bank checked: its deck's plan comes first,
        and the package is asked for as soon as the plan is in (`DeckJob.hold_as`), so
        the build proper ends its own work while the package is made."""
        self.packaging: dict[str, Future[Packaged | None]] = {}
        """By `HeldPackage.token`: the packages asked for."""
        _held.clear()  # what an earlier build in this process left
        self.banks_dir = banks_dir
        self.out_dir = out_dir
        self.project = project
        self.evidence = evidence
        self.now = now
        # the build cache the build read, if the file is still that (`BuildCache.current`)
        self.cache = last.current() if last is not None else BuildCache(out_dir)
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
        alone = self.lone_worker is not None
        package_path = self.out_dir / package_name(applied)
        in_place = self.cache.key_if_fresh(package_path)
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
            in_place=in_place,
            in_place_version=self.cache.recorded_version(package_path) if in_place else None,
            bank=bank,
            hold_as=f"{os.getpid()}.{next(_tokens)}" if alone else None,
            templates=notetype.templates() if alone else None,
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
        entry: Future[bytes | None] | None = None
        with self.changed:
            try:
                if isinstance(outcome, DeckPlan):
                    self.plans[source.path] = outcome
                    if isinstance(outcome.package, HeldPackage) and self.lone_worker is not None:
                        token = outcome.package.token
                        # a pool shut down (the build stopped) takes no work: the build
                        # proper, if it goes on, makes the package itself (`_held_package`)
                        with contextlib.suppress(RuntimeError):
                            packaging = self.lone_worker.submit(run_held_package, token)
                            self.packaging[token] = packaging
                            entry = self.lone_worker.submit(run_held_entry, token)
            except BaseException as exc:
                self.failure = exc
                raise
            finally:
                self.pending.discard(source.path)
                self.changed.notify_all()
        if entry_later is not None:
            # the bank's entry comes after the package, or is made where it is needed
            if entry is None:
                entry_later(None)
            else:
                entry.add_done_callback(lambda done: entry_later(_entry_of(done)))

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


def _entry_of(coming: Future[bytes | None]) -> bytes | None:
    """The bank's entry that came after its package (`run_held_entry`), if it did."""
    if coming.cancelled() or coming.exception() is not None:
        return None
    return coming.result()


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
    """A package to make in another process, from its content and media."""

    package: PackageDeck
    media: tuple[tuple[str, bytes], ...]


def run_package_job(job: PackageJob) -> bytes:
    return apkg_bytes(job.package, job.media)


def read_issued(out_dir: Path, lock_path: Path) -> Issued:
    """What was issued for each note: the output folder's record and the lock's git history."""
    issued = Issued(out_dir / ISSUED_NAME)
    issued.read_git_history(lock_path)
    return issued
