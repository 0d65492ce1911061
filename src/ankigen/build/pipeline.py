"""Build: every bank checked first, then one package per bank, then the lock file.

Each bank file is read once; everything is decided from those bytes. A build
whose inputs are those of the last build into the same folder stops here,
having imported little: the build proper (`build.locked`) is imported only when
something changed.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Sequence
from pathlib import Path

from ankigen.bank.files import (
    LOCK_NAME,
    Source,
    find_banks,
    read_lock_bytes,
    read_project_bytes,
    read_sources,
    shown_path,
    signatures,
    unchanged_sources,
)
from ankigen.bank.workspace import default_media_dir
from ankigen.build.cache import BuildCache, inputs_fingerprint
from ankigen.build.result import (
    BANK_CACHE,
    CACHE_NAME,
    BuildResult,
    Progress,
    package_name,
)
from ankigen.core.errors import Diagnostic, InvalidBanks, OutputError
from ankigen.core.folderlock import exclusive
from ankigen.core.process import keep_until_exit
from ankigen.core.times import build_time
from ankigen.images.settings import Settings

TYPE_CHECKING = False  # as typing's, without importing typing (see `errors`)
# whatever a build with nothing changed does not need is imported where it is used:
# the project file's parsing, the lock's, images, the build proper
if TYPE_CHECKING:
    from ankigen.bank.project import Project
    from ankigen.build.jobs import Evidence


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
    lock_path = banks_dir / LOCK_NAME
    # read without the folder's lock: what a file's status vouched for holds whichever
    # build recorded it
    last_cache = _last_cache(out_dir)
    sources, problems = read_sources(
        banks_dir, bank_paths, last_cache.banks if last_cache is not None else None
    )
    project_bytes = read_project_bytes(banks_dir)
    if problems:
        raise InvalidBanks([*problems, *_parsed_project(banks_dir, project_bytes)[1]])
    lock_bytes = read_lock_bytes(lock_path)
    if last_cache is not None:
        unchanged = _last_result(
            last_cache,
            banks_dir,
            sources,
            lock_bytes,
            project_bytes,
            media_dir,
            image_settings,
            prune,
        )
        if unchanged is not None:
            return unchanged
    project, project_problems = _parsed_project(banks_dir, project_bytes)
    if project_problems:
        raise InvalidBanks(project_problems)
    media_given = media_dir
    media_dir = media_dir or default_media_dir(banks_dir, project)
    # the build proper: a build with nothing changed never imports it (most of its time)
    from dataclasses import replace

    from ankigen.apkg.package import check_file_name, prepare
    from ankigen.build.jobs import EarlyPlans, Evidence
    from ankigen.checks.bankcache import BankCache
    from ankigen.checks.incremental import check_outlines
    from ankigen.checks.translation import sources_for
    from ankigen.core.parallel import worker_pool

    bank_cache = BankCache(out_dir / BANK_CACHE, sources_for(project.reference))
    size = sum(source.size for source in sources)
    evidence = Evidence(out_dir, lock_path, lock_bytes)
    alone = sum(not bank_cache.has_entry(source) for source in sources) == 1
    with worker_pool(size, len(sources), alone, prepare if alone else None) as pool:
        lone = pool if alone else None
        early = EarlyPlans(banks_dir, out_dir, project, evidence, now, lone, last_cache)
        checked = check_outlines(
            sources,
            pool,
            bank_cache,
            project.reference,
            early,
            meanwhile=functools.partial(_meanwhile, evidence),
            deck_name=project.deck_name,
        )
        # as checked: a bank known by its status is read if it must be, and its bytes decide
        seen, by_status = [source.seen for source in sources], signatures(sources)
        del sources  # the banks' bytes, the build's largest input: their digests suffice now
        old_lock, lock_problems = evidence.lock, evidence.lock_problems
        if checked.errors or lock_problems:
            raise InvalidBanks([*checked.diagnostics, *lock_problems])
        outlines = [replace(o, bank=project.apply(o.bank)) for o in checked.outlines]
        diagnostics = checked.diagnostics
        from ankigen.build.locked import Inputs, build_locked

        for outlined in outlines:
            check_file_name(package_name(outlined.bank))
        with exclusive(out_dir):
            result = build_locked(
                Inputs(
                    banks_dir,
                    out_dir,
                    lock_path,
                    lock_bytes,
                    old_lock,
                    seen,
                    project,
                    project_bytes,
                    media_given,
                    by_status,
                ),
                outlines,
                diagnostics,
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


def _meanwhile(evidence: Evidence) -> None:
    """While the workers check the banks: the lock and what was issued, then the build
    proper's own modules, which the workers never need (imported before, they held up
    an edit's check by 8 ms at 10 x 1,000 items), and the note type's templates, which
    the deck's jobs need (made as a job was, they were half the time from an edit's
    check to its deck's job)."""
    evidence.read()
    import ankigen.build.locked  # noqa: F401
    from ankigen.apkg import notetype

    notetype.templates()


_read_here: BuildCache | None = None
"""The build cache `unchanged_build` read, for a `build` in the same process after it
(`ankigen build` asks the first, then runs the second) to take while the file is the
same: its record, with thousands of recorded warnings, is parsed once."""


def _last_cache(out_dir: Path) -> BuildCache | None:
    """The build cache as the last build left it, read without the folder's lock."""
    if not (out_dir / CACHE_NAME).is_file():
        return None
    if _read_here is not None and _read_here.path == out_dir / CACHE_NAME:
        return _read_here.current()
    return BuildCache(out_dir)


def unchanged_build(banks_dir: Path, out_dir: Path) -> BuildResult | None:
    """What `build(banks_dir, out_dir)` returns when it has nothing to do, else None (and
    `build` tells): the banks known by their statuses, the others read, and None without
    reading further as soon as one has certainly changed (`unchanged_sources`)."""
    if not (out_dir / CACHE_NAME).is_file():
        return None
    build_time()  # a time asked for that `build` refuses is refused here too
    paths, problems = find_banks(banks_dir)
    global _read_here
    cache = _read_here = BuildCache(out_dir)
    sources = None if problems else unchanged_sources(paths, cache.banks)
    if sources is None:
        return None
    lock_bytes = read_lock_bytes(banks_dir / LOCK_NAME)
    project_bytes = read_project_bytes(banks_dir)
    return _last_result(
        cache, banks_dir, sources, lock_bytes, project_bytes, None, Settings(), False
    )


def _last_result(
    read: BuildCache,
    banks_dir: Path,
    sources: Sequence[Source],
    lock_bytes: bytes | None,
    project_bytes: bytes | None,
    media_given: Path | None,
    image_settings: Settings,
    prune: bool,
) -> BuildResult | None:
    """The last build's result if its inputs were these.

    Banks whose statuses settled since are then recorded by them (as git refreshes its
    index), so that the next build need not read them: once, under the folder's lock,
    and only a cache (a build that cannot write it is still done). `read`: the cache as
    read before the folder was locked, read again only if it changed since."""
    # the project file is not parsed yet: its bytes, with the folders asked for, decide
    # the media folder the last build recorded
    fingerprint = inputs_fingerprint(
        [source.seen for source in sources],
        lock_bytes,
        banks_dir,
        media_given,
        image_settings,
        prune,
        project_bytes,
    )
    out_dir = read.path.parent
    with exclusive(out_dir):
        cache = read.current()
        result = cache.unchanged(fingerprint, out_dir)
        if result is None:
            return None
        by_status = signatures(sources)
        if by_status != cache.banks:
            from ankigen.core.atomic import write_atomic  # a no-change build rarely writes

            cache.banks = by_status
            with contextlib.suppress(OutputError):
                write_atomic(cache.path, cache.to_bytes())
    return result


def _parsed_project(banks_dir: Path, data: bytes | None) -> tuple[Project, list[Diagnostic]]:
    # tomllib: a build with nothing to do knows the project file by its status
    from ankigen.bank.project import Project, parse_project, project_path

    if data is None:
        return Project(), []
    return parse_project(shown_path(project_path(banks_dir)), data, banks_dir)
