"""Build: every bank checked first, then one package per bank, then the lock file.

Each bank file is read once; everything is decided from those bytes. A build whose
inputs are those of the last build into the same folder stops here, with the last
build's result (`builder.cache`); the command line does not even get this far then,
but replays what it printed (`builder.replay`).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ankigen.apkg import notetype
from ankigen.apkg.package import check_file_name, prepare
from ankigen.bank.files import (
    Source,
    read_lock_bytes,
    read_project_bytes,
    read_sources,
    shown_path,
    signatures,
)
from ankigen.bank.folder import LOCK_NAME
from ankigen.bank.project import Project, parse_project, project_path
from ankigen.bank.workspace import default_media_dir
from ankigen.builder.cache import BuildCache, inputs_fingerprint
from ankigen.builder.jobs import EarlyPlans, Evidence
from ankigen.builder.replay import settled_banks
from ankigen.builder.result import BANK_CACHE, CACHE_NAME, BuildResult, Progress, package_name
from ankigen.checks.bankcache import BankCache
from ankigen.checks.incremental import check_outlines
from ankigen.checks.translation import sources_for
from ankigen.core.atomic import write_cache
from ankigen.core.errors import Diagnostic, InvalidBanks, OutputError
from ankigen.core.folderlock import exclusive
from ankigen.core.parallel import worker_pool
from ankigen.core.process import keep_until_exit
from ankigen.core.times import build_time
from ankigen.images.settings import Settings


@dataclass(frozen=True)
class _Read:
    """What a build read before it knew whether it has anything to do."""

    banks_dir: Path
    out_dir: Path
    sources: list[Source]
    lock_bytes: bytes | None
    project_bytes: bytes | None
    whole_folder: bool
    last_cache: BuildCache | None


def build(
    banks_dir: Path,
    out_dir: Path,
    bank_paths: Sequence[Path] | None = None,
    progress: Progress | None = None,
    media_dir: Path | None = None,
    image_settings: Settings | None = None,
    prune: bool = False,
) -> BuildResult:
    """Check every bank, then write OUT/<topic>.<language>.apkg for each and update the lock."""
    now = build_time()
    image_settings = image_settings or Settings()
    # read without the folder's lock: what a file's status vouched for holds whichever
    # build recorded it
    last_cache = BuildCache(out_dir) if (out_dir / CACHE_NAME).is_file() else None
    # the banks by their statuses as the builds with nothing to do since the last one
    # saw them settle (the first edit after a checkout or a copy read every bank again:
    # 9 of 10 banks of 1,000 items, 7 ms before the worker starts), and as the last build
    # knew them, where it did: its statuses hold the device too
    known = {
        **settled_banks(str(banks_dir), str(out_dir)),
        **(last_cache.banks if last_cache is not None else {}),
    }
    sources, problems = read_sources(banks_dir, bank_paths, known)
    project_bytes = read_project_bytes(banks_dir)
    if problems:
        raise InvalidBanks([*problems, *_parsed_project(banks_dir, project_bytes)[1]])
    read = _Read(
        banks_dir,
        out_dir,
        sources,
        read_lock_bytes(banks_dir / LOCK_NAME),
        project_bytes,
        bank_paths is None,
        last_cache,
    )
    if last_cache is not None:
        unchanged = _last_result(read, last_cache, media_dir, image_settings, prune)
        if unchanged is not None:
            return unchanged
    project, project_problems = _parsed_project(banks_dir, project_bytes)
    if project_problems:
        raise InvalidBanks(project_problems)
    return _build_changed(read, project, progress, media_dir, image_settings, prune, now)


def _build_changed(
    read: _Read,
    project: Project,
    progress: Progress | None,
    media_given: Path | None,
    image_settings: Settings,
    prune: bool,
    now: int,
) -> BuildResult:
    """The build proper: the banks checked in workers, each deck planned as soon as its
    bank is, then the packages and the lock written under the folder's lock."""
    banks_dir, out_dir, sources = read.banks_dir, read.out_dir, read.sources
    media_dir = media_given or default_media_dir(banks_dir, project)
    bank_cache = BankCache(out_dir / BANK_CACHE, sources_for(project.reference))
    lock_path = banks_dir / LOCK_NAME
    evidence = Evidence(out_dir, lock_path, read.lock_bytes)
    alone = _to_check(sources, bank_cache) == 1
    size = sum(source.size for source in sources)
    with worker_pool(size, len(sources), alone, prepare if alone else None) as pool:
        lone = pool if alone else None
        early = EarlyPlans(banks_dir, out_dir, project, evidence, now, lone, read.last_cache)
        checked = check_outlines(
            sources,
            pool,
            bank_cache,
            project.reference,
            early,
            meanwhile=functools.partial(_meanwhile, evidence),
            deck_name=project.deck_name,
        )
        # here, not at the top: the workers never need the build proper's own modules.
        # Loaded before they started, they held up an edit's check by 8 ms at 10 x 1,000
        # items; loaded while the worker checked, they held the interpreter lock from
        # the thread that sends the deck's job on (4 to 9 ms more with the worker idle)
        from ankigen.builder.locked import Inputs, build_locked

        # as checked: a bank known by its status is read if it must be, and its bytes decide
        inputs = Inputs(
            banks_dir,
            out_dir,
            lock_path,
            read.lock_bytes,
            evidence.lock,
            [source.seen for source in sources],
            project,
            read.project_bytes,
            media_given,
            signatures(sources),
            read.whole_folder,
        )
        del sources, read  # the banks' bytes, the build's largest input: their digests suffice
        if checked.errors or evidence.lock_problems:
            raise InvalidBanks([*checked.diagnostics, *evidence.lock_problems])
        outlines = [replace(o, bank=project.apply(o.bank)) for o in checked.outlines]
        for outlined in outlines:
            check_file_name(package_name(outlined.bank))
        with exclusive(out_dir):
            result = build_locked(
                inputs,
                outlines,
                checked.diagnostics,
                bank_cache,
                progress,
                media_dir,
                image_settings,
                pool,
                now,
                prune,
                early,
            )
            bank_cache.save()
            keep_until_exit(evidence, bank_cache, early, checked, outlines, project)
            return result


def _to_check(sources: Sequence[Source], bank_cache: BankCache) -> int:
    """How many banks have no entry, and must be checked. A bank read only to be hashed
    (its status not settled yet: a checkout, a copy) whose entry stands for it is let go
    before the workers start, as if known by its status: ten banks of 10,000 items were
    65 MB held to the end, counted twice once a worker was forked (one edit's peak 460
    MiB, not 340)."""
    fresh = 0
    for source in sources:
        if bank_cache.has_entry(source):
            source.forget()
        else:
            fresh += 1
    return fresh


def _meanwhile(evidence: Evidence) -> None:
    """While the workers check the banks: the lock and what was issued, then the note
    type's templates, which the deck's jobs need (made as a job was, they were half the
    time from an edit's check to its deck's job). No more: a bank checked alone has its
    deck's job sent on by another thread of this process, as soon as it is checked."""
    evidence.read()
    notetype.templates()


def _last_result(
    read: _Read,
    cache: BuildCache,
    media_given: Path | None,
    image_settings: Settings,
    prune: bool,
) -> BuildResult | None:
    """The last build's result if its inputs were these.

    Banks whose statuses settled since are then recorded by them (as git refreshes its
    index), so that the next build need not read them: once, under the folder's lock,
    and only a cache (a build that cannot write it is still done). `cache`: as read
    before the folder was locked, read again only if it changed since."""
    # the project file is not parsed yet: its bytes, with the folders asked for, decide
    # the media folder the last build recorded
    fingerprint = inputs_fingerprint(
        [source.seen for source in read.sources],
        read.lock_bytes,
        read.banks_dir,
        media_given,
        image_settings,
        prune,
        read.project_bytes,
    )
    if cache.last.get("inputs") != fingerprint:
        # other inputs than the last build's as read: the build runs, without locking
        # the folder and reading the cache again to be told so (a build since with these
        # inputs would only have spared it)
        return None
    with exclusive(read.out_dir):
        cache = cache.current()
        result = cache.unchanged(fingerprint, read.out_dir)
        if result is None:
            return None
        by_status = signatures(read.sources)
        if by_status != cache.banks:
            cache.banks = by_status
            with contextlib.suppress(OutputError):
                write_cache(cache.path, cache.to_bytes())
        if not read.whole_folder:
            return result
        files = (
            read.banks_dir / LOCK_NAME,
            read.lock_bytes,
            project_path(read.banks_dir),
            read.project_bytes,
        )
        seen = [source.seen for source in read.sources]
        return replace(result, watched=cache.watched(seen, files, result))


def _parsed_project(banks_dir: Path, data: bytes | None) -> tuple[Project, list[Diagnostic]]:
    if data is None:
        return Project(), []
    return parse_project(shown_path(project_path(banks_dir)), data, banks_dir)
