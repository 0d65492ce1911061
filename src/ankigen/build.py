"""Build: every bank checked first, then one package per bank, then the lock file.

Each bank file is read once; everything is decided from those bytes. A build
whose inputs are those of the last build into the same folder stops here,
having imported little: the build proper (`decks`) is imported only when
something changed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from ankigen import __version__
from ankigen.apkg import notetype
from ankigen.bank.files import (
    LOCK_NAME,
    Known,
    NoBanks,
    Source,
    SourceDigest,
    find_banks,
    parse_known,
    read_lock_bytes,
    read_project_bytes,
    read_sources,
    record_of,
    shown_path,
    signatures,
    unchanged_sources,
)
from ankigen.core.errors import Diagnostic, InvalidBanks, OutputError
from ankigen.core.folderlock import exclusive
from ankigen.core.hashing import content_hash
from ankigen.core.jsondata import parse_json
from ankigen.core.times import build_time
from ankigen.images.settings import Settings

TYPE_CHECKING = False  # as typing's, without importing typing (see `errors`)
# whatever a build with nothing changed does not need is imported where it is used:
# the project file's parsing, the lock's, images, the build proper
if TYPE_CHECKING:
    from ankigen.bank.model import Bank
    from ankigen.bank.project import Project
    from ankigen.checks.run import Checked
    from ankigen.images.process import Prepared

__all__ = ["NoBanks", "build", "find_bank_paths", "unchanged_build"]

CACHE_NAME = ".ankigen-cache.json"
IMAGE_CACHE = ".ankigen-images"
BANK_CACHE = ".ankigen-banks"


def find_bank_paths(banks_dir: Path) -> list[Path]:
    """Bank files for lint, status and preview; unusable paths are errors."""
    paths, problems = find_banks(banks_dir)
    if problems:
        raise InvalidBanks(problems)
    return paths


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
    restored: int = 0
    """Notes whose text went back to an earlier version: they get a newer time too."""
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
            "restored": self.restored,
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
    pruned: tuple[str, ...] = ()
    """Lock entries of decks without a bank, forgotten on request (`--prune`)."""


def checked_banks(banks_dir: Path) -> Checked:
    """Every bank and its warnings, or InvalidBanks with all the errors (for preview).

    The project file's settings (deck names, tags) are applied to the banks."""
    from ankigen.bank.project import load_project
    from ankigen.checks.run import check_sources

    sources, problems = read_sources(banks_dir)
    project, project_problems = load_project(banks_dir)
    checked = check_sources(sources, reference=project.reference)
    if checked.errors or problems or project_problems:
        raise InvalidBanks([*checked.diagnostics, *problems, *project_problems])
    return replace(checked, banks=project.apply_all(checked.banks))


def package_name(bank: Bank) -> str:
    return f"{bank.topic}.{bank.language}.apkg"


class BuildCache:
    """What the last builds into an output folder produced from which inputs (not committed).

    Per package: the hash of its inputs and the file's size and time, so an
    unchanged deck is not rewritten. For the whole build: a fingerprint of the
    bytes every input had when it was read, so a build with nothing changed
    skips all the work. Anything of the wrong shape is ignored.
    """

    def __init__(self, out_dir: Path) -> None:
        self.path = out_dir / CACHE_NAME
        try:
            loaded = parse_json(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            loaded = {}
        if not isinstance(loaded, dict) or loaded.get("version") != __version__:
            loaded = {}
        packages = loaded.get("packages")
        self.packages: dict[str, dict[str, object]] = {
            name: entry
            for name, entry in (packages.items() if isinstance(packages, dict) else ())
            if isinstance(name, str) and isinstance(entry, dict)
        }
        last = loaded.get("last")
        self.last: dict[str, object] = last if isinstance(last, dict) else {}
        self.banks: Known = parse_known(loaded.get("banks"))
        """The banks' files by status, as the last build read them (`sources.Signature`)."""

    def fresh(self, path: Path) -> bool:
        """Whether the file is still the one this cache recorded."""
        entry = self.packages.get(path.name)
        try:
            stat = path.stat()
        except OSError:
            return False
        return (
            entry is not None
            and entry.get("size") == stat.st_size
            and entry.get("mtime_ns") == stat.st_mtime_ns
            and entry.get("inode") == stat.st_ino
        )

    def key_if_fresh(self, path: Path) -> str | None:
        entry = self.packages.get(path.name)
        if entry is not None and self.fresh(path):
            key = entry.get("key")
            return key if isinstance(key, str) else None
        return None

    def record(
        self,
        path: Path,
        key: str,
        reuse: str | None = None,
        parents: Parents = (),
        version: str = "",
    ) -> None:
        stat = path.stat()
        self.packages[path.name] = {
            "key": key,
            "reuse": reuse,
            "parents": content_hash(repr(parents)),
            "deck_version": version,
            "size": stat.st_size,
            "mtime_ns": stat.st_mtime_ns,
            "inode": stat.st_ino,
        }

    def same_content(self, path: Path, reuse: str) -> bool:
        """Whether the package in place holds these notes (its parent decks aside)."""
        entry = self.packages.get(path.name)
        return entry is not None and entry.get("reuse") == reuse and self.fresh(path)

    def recorded_version(self, path: Path) -> str | None:
        """The deck's version recorded with the package, if well formed: right when
        `same_content` holds, since the reuse key binds the lock entry it is made from."""
        from ankigen.identity.versions import is_version

        version = self.packages.get(path.name, {}).get("deck_version")
        return version if is_version(version) else None

    def reusable(self, path: Path, reuse: str | None, parents: Parents) -> bool:
        """Whether the package in place was built from inputs with this reuse key and
        these parent decks."""
        entry = self.packages.get(path.name)
        return (
            reuse is not None
            and self.same_content(path, reuse)
            and entry is not None
            and entry.get("parents") == content_hash(repr(parents))
        )

    def remember(
        self,
        fingerprint: str,
        result: BuildResult,
        images: Prepared,
        media_dir: Path,
        standing: Sequence[Diagnostic],
    ) -> None:
        """`standing`: changes that hold until someone acts (a deck without a bank)."""
        self.last = {
            "inputs": fingerprint,
            "media": str(media_dir),
            "decks": [d.as_json() for d in result.decks],
            "warnings": [[d.path, d.line, d.severity, d.message] for d in result.warnings],
            "standing": [[d.path, d.line, d.severity, d.message] for d in standing],
            "images": [source.as_json() for source in images.sources],
        }

    def unchanged(self, fingerprint: str, out_dir: Path) -> BuildResult | None:
        """The last build's result, if its inputs are the same and its packages intact."""
        media_dir = self.last.get("media")
        if self.last.get("inputs") != fingerprint or not isinstance(media_dir, str):
            return None
        try:
            decks = tuple(
                DeckReport(
                    topic=str(d["topic"]),
                    language=str(d["language"]),
                    path=str(d["path"]),
                    notes=int(d["notes"]),
                    new=0,
                    changed=0,
                    unchanged=int(d["notes"]),
                    removed=0,
                    retired=int(d["retired"]),
                    written=False,
                    version=str(d.get("version", "")),
                )
                for d in self.last["decks"]  # type: ignore[attr-defined]
            )
            warnings, standing = (
                tuple(
                    Diagnostic(str(p), int(line), "warning", str(m))
                    for p, line, _, m in self.last[key]  # type: ignore[attr-defined]
                )
                for key in ("warnings", "standing")
            )
        except (KeyError, TypeError, ValueError, AttributeError):
            return None
        if any(Path(d.path).name != d.path or not d.path.endswith(".apkg") for d in decks):
            return None
        if not all(self.fresh(out_dir / d.path) for d in decks):
            return None
        images = self.last.get("images")
        if images != []:  # Pillow's module is not needed to check that no image changed
            from ankigen.images.process import unchanged_images

            if not unchanged_images(images, Path(media_dir)):
                return None
        return BuildResult(decks, warnings, standing)

    def to_bytes(self) -> bytes:
        data = {
            "version": __version__,
            "packages": self.packages,
            "last": self.last,
            "banks": record_of(self.banks),
        }
        return json.dumps(data, sort_keys=True, indent=1, ensure_ascii=False).encode()


def inputs_fingerprint(
    sources: Sequence[SourceDigest],
    lock_bytes: bytes | None,
    banks_dir: Path,
    media_given: Path | None,
    settings: Settings,
    prune: bool,
    project_bytes: bytes | None = None,
) -> str:
    """A hash of what a build reads, from the bytes read: banks, lock, project file,
    settings, version. The images the banks name are checked separately
    (`unchanged_images`). The media folder is the one asked for, which with the
    banks folder and the project file's bytes decides the one used."""
    digest = hashlib.sha256()
    digest.update(
        f"{__version__}\0{notetype.schema_hash()}\0{settings.key}\0{banks_dir}\0{media_given}\0"
        f"{prune}\0".encode()
    )
    for source in sorted(sources, key=lambda s: str(s.path)):
        digest.update(f"{source.path}\0{source.digest}\0".encode())
    digest.update(hashlib.sha256(lock_bytes).digest() if lock_bytes is not None else b"no lock")
    digest.update(
        hashlib.sha256(project_bytes).digest() if project_bytes is not None else b"no project"
    )
    return digest.hexdigest()


Progress = Callable[[int, int], None]
Parents = tuple[tuple[int, str, str], ...]


def default_media_dir(banks_dir: Path, project: Project | None = None) -> Path:
    """The project file's `media`, else `media/` beside the banks folder."""
    if project is None:
        from ankigen.bank.project import load_project

        project, _ = load_project(banks_dir)
    return project.media or banks_dir.parent / "media"


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
    has_cache = (out_dir / CACHE_NAME).is_file()
    known = BuildCache(out_dir).banks if has_cache else None
    sources, problems = read_sources(banks_dir, bank_paths, known)
    project_bytes = read_project_bytes(banks_dir)
    if problems:
        raise InvalidBanks([*problems, *_parsed_project(banks_dir, project_bytes)[1]])
    lock_bytes = read_lock_bytes(lock_path)
    if has_cache:
        unchanged = _last_result(
            banks_dir, out_dir, sources, lock_bytes, project_bytes, media_dir, image_settings, prune
        )
        if unchanged is not None:
            return unchanged
    project, project_problems = _parsed_project(banks_dir, project_bytes)
    if project_problems:
        raise InvalidBanks(project_problems)
    media_given = media_dir
    media_dir = media_dir or default_media_dir(banks_dir, project)
    # the build proper: a build with nothing changed never imports it (most of its time)
    from ankigen.apkg.package import check_file_name
    from ankigen.checks.bankcache import BankCache
    from ankigen.checks.incremental import check_outlines
    from ankigen.checks.translation import sources_for
    from ankigen.core.parallel import worker_pool
    from ankigen.decks import EarlyPlans, Evidence, Inputs, build_locked

    bank_cache = BankCache(out_dir / BANK_CACHE, sources_for(project.reference))
    size = sum(source.size for source in sources)
    evidence = Evidence(out_dir, lock_path, lock_bytes)
    alone = sum(not bank_cache.has_entry(source) for source in sources) == 1
    with worker_pool(size, len(sources), alone) as pool:
        early = EarlyPlans(banks_dir, out_dir, project, evidence, now, pool if alone else None)
        checked = check_outlines(
            sources, pool, bank_cache, project.reference, early, meanwhile=evidence.read
        )
        # as checked: a bank known by its status is read if it must be, and its bytes decide
        seen, by_status = [source.seen for source in sources], signatures(sources)
        del sources  # the banks' bytes, the build's largest input: their digests suffice now
        old_lock, lock_problems = evidence.lock, evidence.lock_problems
        if checked.errors or lock_problems:
            raise InvalidBanks([*checked.diagnostics, *lock_problems])
        outlines = [replace(o, bank=project.apply(o.bank)) for o in checked.outlines]
        diagnostics = checked.diagnostics
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
            return result


def unchanged_build(banks_dir: Path, out_dir: Path) -> BuildResult | None:
    """What `build(banks_dir, out_dir)` returns when it has nothing to do, else None (and
    `build` tells): the banks known by their statuses, the others read, and None without
    reading further as soon as one has certainly changed (`unchanged_sources`)."""
    if not (out_dir / CACHE_NAME).is_file():
        return None
    build_time()  # a time asked for that `build` refuses is refused here too
    paths, problems = find_banks(banks_dir)
    sources = None if problems else unchanged_sources(paths, BuildCache(out_dir).banks)
    if sources is None:
        return None
    lock_bytes = read_lock_bytes(banks_dir / LOCK_NAME)
    project_bytes = read_project_bytes(banks_dir)
    return _last_result(
        banks_dir, out_dir, sources, lock_bytes, project_bytes, None, Settings(), False
    )


def _last_result(
    banks_dir: Path,
    out_dir: Path,
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
    and only a cache (a build that cannot write it is still done)."""
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
    with exclusive(out_dir):
        cache = BuildCache(out_dir)
        result = cache.unchanged(fingerprint, out_dir)
        if result is None:
            return None
        by_status = signatures(sources)
        if by_status != cache.banks:
            from ankigen.core.atomic import write_atomic

            cache.banks = by_status
            with contextlib.suppress(OutputError):
                write_atomic(cache.path, cache.to_bytes())
    return result


def _parsed_project(banks_dir: Path, data: bytes | None) -> tuple[Project, list[Diagnostic]]:
    from ankigen.bank.project import Project, parse_project, project_path

    if data is None:
        return Project(), []
    return parse_project(shown_path(project_path(banks_dir)), data, banks_dir)
