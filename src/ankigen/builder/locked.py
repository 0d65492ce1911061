"""The build proper: each deck planned from its bank, its identity and the lock, then
packaged; packages, the lock and the record of issued times committed together.

Decks whose inputs did not change since the last build into the same folder
are not rebuilt or rewritten. Identity and time (GUIDs, renames, modification
times) are `identity`'s decisions; this module only asks.

`build_locked` runs the phases in order over one `_Build`, the build's working state:
`_start` (images, identities, the new lock's kept entries, reuse keys), `_plan_changed`
(decks whose content changed), `_plan_stale_parents` (decks whose parents changed),
`_sort_plans` (lock entries, packages to make or keep), `_make_packages` and `_commit`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ankigen.apkg.deck import parent_decks
from ankigen.apkg.limits import check_package
from ankigen.bank.files import Known, SourceDigest
from ankigen.bank.model import Bank, Outline
from ankigen.bank.project import Project, project_path
from ankigen.builder.cache import BuildCache, inputs_fingerprint, recorded
from ankigen.builder.deckplan import (
    notetype_stamp,
    package_key,
    relative_bank_path,
    reuse_key,
    unchanged_report,
)
from ankigen.builder.handoff import DeckPlan, HeldPackage, Packaged
from ankigen.builder.jobs import (
    DeckJob,
    EarlyPlans,
    PackageJob,
    plan_decks,
    read_issued,
    run_deck_job,
    run_held_package,
    run_package_job,
)
from ankigen.builder.lock_notices import notetype_changed, orphan_warnings, refuse_clashes
from ankigen.builder.result import (
    IMAGE_CACHE,
    BuildResult,
    DeckReport,
    Parents,
    Progress,
    package_name,
)
from ankigen.checks import cache_entry
from ankigen.checks.bankcache import BankCache
from ankigen.core.atomic import Commit, remove_stale_temporaries, write_cache
from ankigen.core.errors import Diagnostic, InvalidBanks, OutputError
from ankigen.core.parallel import Pool, parallel_map
from ankigen.identity.issued import Issued
from ankigen.identity.lockfile import DeckLock, Lock, text_of
from ankigen.identity.resolve import DeckIdentity, orphans, resolve
from ankigen.identity.stamp import Stamp
from ankigen.images.process import Prepared, image_refs, prepare
from ankigen.images.settings import Settings

if TYPE_CHECKING:
    from concurrent.futures import Future


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
    """The banks a later build may know by their file's status (`bank.files.Signature`)."""
    whole_folder: bool = False
    """Every bank of the folder: the result says what a replay checks (`watched`)."""


@dataclass(frozen=True)
class _Given:
    """What the caller hands the build proper, beside the inputs and the banks' outlines."""

    bank_cache: BankCache
    progress: Progress | None
    media_dir: Path
    image_settings: Settings
    pool: Pool | None
    now: int
    prune: bool
    early: EarlyPlans


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
    given = _Given(bank_cache, progress, media_dir, image_settings, pool, now, prune, early)
    build = _start(inputs, outlines, diagnostics, given)
    plans = _plan_changed(build)
    _plan_stale_parents(build, plans)
    jobs = _sort_plans(build, plans)
    del plans  # the notes of every deck are the build's largest data: gone once packaged
    _make_packages(build, jobs)
    return _commit(build)


@dataclass
class _Build:
    """One build's working state: what `_start` works out, then what each phase adds."""

    inputs: Inputs
    given: _Given
    outlines: Sequence[Outline]
    banks: list[Bank]
    """Without their items."""
    warnings: list[Diagnostic]
    images: Prepared
    subsets: dict[str, Prepared]
    issued: Issued
    planned: EarlyPlans | None
    """The plans made early, unless the record of issued times changed since."""
    decks: dict[str, DeckIdentity]
    nt_stamp: Stamp
    orphan_keys: list[str]
    standing: list[Diagnostic]
    changes: list[Diagnostic]
    new_lock: Lock
    cache: BuildCache
    lock_texts: dict[str, tuple[DeckLock, str]]
    """The entries' texts as read, where the lock is laid out as this version writes it:
    the kept entries' texts in the new lock, and what their reuse keys hash."""
    reuse: dict[str, str | None]
    # filled in by the phases
    unchanged: dict[str, DeckReport] = field(default_factory=dict)
    parents: dict[str, Parents] = field(default_factory=dict)
    left: set[str] = field(default_factory=set)
    """Decks left as they were: lock entry and package."""
    reports: dict[str, DeckReport] = field(default_factory=dict)
    package_keys: dict[str, str] = field(default_factory=dict)
    made: dict[str, bytes] = field(default_factory=dict)
    kept: dict[str, tuple[DeckPlan, Future[Packaged | None] | None]] = field(default_factory=dict)
    written: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.by_key = {bank.key: bank for bank in self.banks}
        self.source_of = {str(source.path): source for source in self.inputs.sources}

    def job(self, bank: Bank, parents: Parents | None) -> DeckJob:
        """The deck's job; its bank's entry left to `with_entry` if it is yet to come from
        the worker that planned the deck early (it comes with the package)."""
        source = self.source_of[bank.path]
        bank_cache, out_dir = self.given.bank_cache, self.inputs.out_dir
        coming = bank_cache.coming(source)
        return DeckJob(
            source=source,
            entry=cache_entry.LATER if coming else bank_cache.checked_entry(source),
            project=self.inputs.project,
            ident=self.decks[bank.key],
            notetype_mtime=self.nt_stamp.mtime,
            now=self.given.now,
            images=self.subsets[bank.key],
            bank_path=relative_bank_path(bank, self.inputs.banks_dir),
            parents=parents,
            in_place=None
            if parents is None
            else self.cache.key_if_fresh(out_dir / package_name(bank)),
            bank=bank_cache.kept_bank(source),
        )

    def with_entry(self, made: DeckJob) -> DeckJob:
        if made.entry != cache_entry.LATER:
            return made
        return replace(made, entry=self.given.bank_cache.checked_entry(made.source))

    def job_with_entry(self, bank: Bank, parents: Parents | None) -> DeckJob:
        return self.with_entry(self.job(bank, parents))

    def plan(self, jobs: Sequence[DeckJob]) -> Iterator[DeckPlan]:
        return plan_decks(jobs, self.given.pool, self.planned, self.with_entry)

    def made_where_planned(self, key: str, report: DeckReport, packaged: Packaged) -> None:
        self.package_keys[key] = packaged.key
        if packaged.data is not None:
            self.made[key] = packaged.data
        self.reports[key] = (
            report if packaged.data is not None else dataclasses.replace(report, written=False)
        )

    def reuse_key(self, key: str, lock: DeckLock | None, as_resolved: bool = False) -> str | None:
        return reuse_key(
            self.source_of[self.by_key[key].path],
            self.decks[key],
            self.issued,
            self.nt_stamp,
            self.subsets[key],
            lock,
            self.inputs.project.digest,
            self.lock_texts,
            as_resolved=as_resolved,
        )


def _start(
    inputs: Inputs, outlines: Sequence[Outline], diagnostics: Sequence[Diagnostic], given: _Given
) -> _Build:
    """Images prepared, decks resolved to their identities, the orphans' entries kept
    in the new lock, and each deck's reuse key as the lock was read."""
    banks = [outlined.bank for outlined in outlines]
    out_dir, lock_path, old_lock = inputs.out_dir, inputs.lock_path, inputs.lock
    for folder in (out_dir, out_dir / IMAGE_CACHE, lock_path.parent):
        remove_stale_temporaries(folder)
    images = prepare(
        image_refs(outlines), given.media_dir, given.image_settings, cache_dir=out_dir / IMAGE_CACHE
    )
    if images.diagnostics:
        raise InvalidBanks([*diagnostics, *images.diagnostics])

    early = given.early
    issued = early.evidence.issued
    assert issued is not None  # read while the banks were checked, or the build stopped
    planned: EarlyPlans | None = early
    if not issued.still_current():  # another build wrote it since it was read
        issued = read_issued(out_dir, lock_path)
        planned = None  # made from the record as it was
    decks = resolve(outlines, old_lock, issued, planned.idents if planned else None)
    refuse_clashes(decks, lock_path)
    nt_stamp = notetype_stamp(old_lock, given.now)
    changes = notetype_changed(old_lock, nt_stamp, lock_path)
    orphan_keys = orphans(decks, old_lock)
    standing = orphan_warnings(
        outlines, decks, old_lock, orphan_keys, inputs.lock_bytes, lock_path, given.prune
    )
    changes.extend(standing)

    new_lock = Lock(notetype=nt_stamp)
    for key in orphan_keys:
        if not given.prune:
            new_lock.decks[key] = old_lock.decks[key]  # kept: restoring the bank keeps history
    build = _Build(
        inputs=inputs,
        given=given,
        outlines=outlines,
        banks=banks,
        warnings=[d for d in diagnostics if d.severity == "warning"],
        images=images,
        subsets={bank.key: images.subset(bank) for bank in banks},
        issued=issued,
        planned=planned,
        decks=decks,
        nt_stamp=nt_stamp,
        orphan_keys=orphan_keys,
        standing=standing,
        changes=changes,
        new_lock=new_lock,
        cache=early.cache.current().to_record(),  # read before the lock: read again if changed
        lock_texts=dict(old_lock.texts),
        reuse={},
    )
    build.reuse = {
        bank.key: build.reuse_key(bank.key, decks[bank.key].previous, as_resolved=True)
        for bank in banks
    }
    return build


def _plan_changed(build: _Build) -> dict[str, DeckPlan]:
    """Phase 1: decks whose bank bytes, lock entry and evidence are those of the package
    in place keep their lock entry; every other deck is planned."""
    # a deck without a generated parent deck needs no sibling's version: planned and
    # packaged in one step
    has_parents = parent_decks(build.banks, {}, build.inputs.project.reference)
    build.unchanged = _same_content(
        build.outlines, build.decks, build.reuse, build.cache, build.inputs.out_dir
    )
    to_plan = [
        build.job(build.by_key[k], None if k in has_parents else ())
        for k in sorted(build.by_key)
        if k not in build.unchanged
    ]
    # the lock's text of the entries of decks with the same content not known as read,
    # made now: while decks planned early in workers may still be made, not after them
    for key in sorted(build.unchanged):
        previous = build.decks[key].previous
        assert previous is not None
        build.lock_texts[key] = (previous, text_of(key, previous, build.lock_texts))
    return {plan.key: plan for plan in build.plan(to_plan)}


def _plan_stale_parents(build: _Build, plans: dict[str, DeckPlan]) -> None:
    """Phase 2: parent decks list every child's version, so a sibling's new version
    changes them: decks of the same content whose parents changed are planned again."""
    versions = {key: plan.report.version for key, plan in plans.items()}
    versions.update((key, report.version) for key, report in build.unchanged.items())
    build.parents = parents = parent_decks(build.banks, versions, build.inputs.project.reference)
    out_dir, reuse = build.inputs.out_dir, build.reuse
    stale = [
        key
        for key in sorted(build.unchanged)
        if not build.cache.reusable(
            out_dir / package_name(build.by_key[key]), reuse[key], parents.get(key, ())
        )
    ]
    again = [build.job(build.by_key[k], parents.get(k, ())) for k in stale]
    plans.update((plan.key, plan) for plan in build.plan(again))
    build.left = set(build.unchanged) - set(stale)


def _sort_plans(build: _Build, plans: dict[str, DeckPlan]) -> dict[str, PackageJob]:
    """Phase 3: the new lock's entries, and each planned deck's package: made where it
    was planned, kept by the worker that planned it, in place, or a job to run."""
    for key in build.left:
        previous = build.decks[key].previous
        assert previous is not None
        build.new_lock.decks[key] = previous
        build.reports[key] = build.unchanged[key]
    jobs: dict[str, PackageJob] = {}
    for key, plan in sorted(plans.items()):
        build.new_lock.decks[key] = plan.lock
        if plan.lock_text:
            build.lock_texts[key] = (plan.lock, plan.lock_text)
        build.changes.extend(plan.warnings)
        if isinstance(plan.package, HeldPackage):
            # asked for from the worker that planned the deck as soon as the plan came
            build.kept[key] = (plan, build.given.early.packaging.get(plan.package.token))
            continue
        if isinstance(plan.package, Packaged):
            build.made_where_planned(key, plan.report, plan.package)
            continue
        package = replace(plan.package, parents=build.parents.get(key, ()))
        build.package_keys[key] = package_key(package)
        in_place = (
            build.cache.key_if_fresh(build.inputs.out_dir / plan.report.path)
            == build.package_keys[key]
        )
        if not in_place:
            jobs[key] = PackageJob(package, plan.media)
        build.reports[key] = (
            dataclasses.replace(plan.report, written=False) if in_place else plan.report
        )
    build.written = {key: plan.report.path for key, plan in plans.items()}
    return jobs


def _make_packages(build: _Build, jobs: dict[str, PackageJob]) -> None:
    """The packages to make, made; the planned decks' stamps noted as issued."""
    pool = build.given.pool
    build.made.update(
        zip(jobs, parallel_map(run_package_job, list(jobs.values()), pool), strict=True)
    )
    jobs.clear()
    if pool is not None:
        pool.close()  # the last work for workers: they exit while this process writes
    # a deck left as it was needs none: its reuse key binds its lock entry and what was
    # issued for its notes as they were when the entry was last noted (see `_commit`)
    for key, deck in build.new_lock.decks.items():
        if key not in build.left:
            for item_id, stamp in deck.items.items():
                build.issued.note(deck.guids[item_id], stamp)


def _commit(build: _Build) -> BuildResult:
    """The record of issued times, the packages and the lock written together; then
    the build cache, which only saves time."""
    inputs, given, cache = build.inputs, build.given, build.cache
    out_dir, orphan_keys, prune = inputs.out_dir, build.orphan_keys, given.prune
    # packages of decks renamed with `formerly:` or pruned are superseded
    removals = [
        out_dir / f"{key}.apkg"
        for key in {d.previous_key for d in build.decks.values() if d.previous_key}
        | set(orphan_keys)
        if key not in build.decks
        and (prune or key not in orphan_keys)
        and f"{key}.apkg" in cache.packages
    ]
    lock_bytes = build.new_lock.to_bytes(build.lock_texts)
    # made once every planned deck's stamps are noted: a later build that finds this key
    # again knows them noted (`_make_packages`)
    contents = {key: build.reuse_key(key, build.new_lock.decks[key]) for key in build.written}
    # the inputs as they were read: a bank saved during this build makes the next one real
    after = inputs_fingerprint(
        inputs.sources,
        lock_bytes,
        inputs.banks_dir,
        inputs.media_given,
        given.image_settings,
        prune,
        inputs.project_bytes,
    )
    warnings_recorded = recorded(build.warnings)  # before waiting for the packages still coming
    _write(build, lock_bytes, removals)
    for path in removals:
        cache.packages.pop(path.name, None)
    for key, name in build.written.items():
        version = build.reports[key].version
        parents = build.parents.get(key, ())
        cache.record(out_dir / name, build.package_keys[key], contents[key], parents, version)
    result = BuildResult(
        tuple(build.reports[key] for key in sorted(build.reports)),
        tuple(build.warnings),
        tuple(sorted(build.changes)),
        tuple(orphan_keys) if prune else (),
    )
    cache.remember(after, result, build.images, given.media_dir, build.standing, warnings_recorded)
    cache.banks = inputs.by_status
    # only a cache, written once the packages and the lock are in place: if it cannot be
    # (a folder where it should be), the next build is a real one
    with contextlib.suppress(OutputError):
        write_cache(cache.path, cache.to_bytes())
    unchanged = cache.last_result() if inputs.whole_folder else None
    if unchanged is None:
        return result
    files = (inputs.lock_path, lock_bytes, project_path(inputs.banks_dir), inputs.project_bytes)
    return dataclasses.replace(result, watched=cache.watched(inputs.sources, files, unchanged))


def _write(build: _Build, lock_bytes: bytes, removals: list[Path]) -> None:
    """The evidence first, the lock last: a stop in between only makes times newer;
    both are written while the build waits for the packages still being made."""
    out_dir, progress = build.inputs.out_dir, build.given.progress
    with Commit() as commit:
        commit.stage(build.issued.path, build.issued.to_bytes(), rank=0)
        if build.inputs.lock_bytes != lock_bytes:
            commit.stage(build.inputs.lock_path, lock_bytes, rank=2)
        for key, (plan, future) in build.kept.items():
            bank, parents = build.by_key[key], build.parents.get(key, ())
            planned_as = functools.partial(build.job_with_entry, bank, parents)
            build.made_where_planned(key, plan.report, _held_package(future, plan, planned_as))
        for done, (key, data) in enumerate(sorted(build.made.items()), start=1):
            build.changes.extend(check_package(build.by_key[key], build.written[key], data))
            commit.stage(out_dir / build.written[key], data, rank=1)
            if progress:
                progress(done, len(build.made))
        commit.done(removals)


def _held_package(
    future: Future[Packaged | None] | None, plan: DeckPlan, job: Callable[[], DeckJob]
) -> Packaged:
    """The package of a deck planned early whose content stayed where it was planned
    (`DeckJob.hold_as`): made there, else here, else planned again here (its job is the
    one the plan was made for)."""
    assert isinstance(plan.package, HeldPackage)
    packaged = None
    if future is not None:
        # a worker that failed, or died, leaves the package to this process
        with contextlib.suppress(Exception):
            packaged = future.result()
    packaged = packaged or run_held_package(plan.package.token)
    if packaged is None:
        again = run_deck_job(job())
        assert isinstance(again.package, Packaged)  # the job knows the parents
        packaged = again.package
    return packaged


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
