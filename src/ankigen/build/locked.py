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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ankigen.apkg.deck import parent_decks
from ankigen.apkg.limits import check_package
from ankigen.bank.files import Known, SourceDigest, shown_path
from ankigen.bank.model import Bank, Outline
from ankigen.bank.project import Project
from ankigen.build.cache import BuildCache, inputs_fingerprint, recorded
from ankigen.build.jobs import (
    DeckJob,
    EarlyPlans,
    PackageJob,
    plan_decks,
    read_issued,
    run_deck_job,
    run_kept_package,
    run_package_job,
)
from ankigen.build.plan import (
    notetype_stamp,
    package_key,
    relative_bank_path,
    reuse_key,
    unchanged_report,
)
from ankigen.build.planned import DeckPlan, Kept, Packaged
from ankigen.build.result import (
    IMAGE_CACHE,
    BuildResult,
    DeckReport,
    Parents,
    Progress,
    package_name,
)
from ankigen.checks import cache_entry
from ankigen.checks.bankcache import BankCache
from ankigen.core.atomic import Commit, remove_stale_temporaries, write_atomic
from ankigen.core.errors import Diagnostic, InvalidBanks, OutputError
from ankigen.core.parallel import Pool, parallel_map
from ankigen.identity.guid import formerly_line, split_deck_key
from ankigen.identity.lockfile import (
    KeyLines,
    Lock,
    text_of,
)
from ankigen.identity.resolve import (
    DeckIdentity,
    duplicate_guids,
    orphans,
    renamed_decks,
    resolve,
)
from ankigen.images.process import image_refs, prepare
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
    cache = early.cache.current().to_record()  # read before the lock: read again if changed
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
        reports[key] = report if packaged.data is not None else report._replace(written=False)

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
        reports[key] = plan.report._replace(written=False) if in_place else plan.report
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
    warnings_recorded = recorded(warnings)  # before waiting for the packages still coming
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
    cache.remember(after, result, images, media_dir, standing, warnings_recorded)
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
