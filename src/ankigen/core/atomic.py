"""Atomic writes of ankigen's own files: a reader, or a killed build, sees the old file or
the new one, never a part; several files committed as one step (`Commit`)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from ankigen.core.errors import OutputError
from ankigen.core.process import stops_held

TEMP_PREFIX = ".ankigen-tmp-"


def write_atomic(path: Path, data: bytes) -> None:
    """Replace `path` with `data`: a reader sees the old file or the new one, never a part."""
    _replace_one(path, data, synced=True)


def write_cache(path: Path, data: bytes) -> None:
    """Replace a cache's file with `data`, as `write_atomic` does, without waiting for the
    disk: a cache only saves time, and its reader refuses what it cannot vouch for (a
    file a power cut left empty, or old), so the next build does the work again. Each
    file synced costs a build two waits for the disk, for a file and its folder (eight
    a build after one edit, as many as its packages, lock and record of issued times
    need)."""
    _replace_one(path, data, synced=False)


def _replace_one(path: Path, data: bytes, synced: bool) -> None:
    try:
        replace_files([(path, data, 0o644, None)], synced)
    except OSError as exc:
        raise OutputError(f"{exc.filename or path}: cannot write: {exc.strerror or exc}") from None


NewFile = tuple[Path, bytes, int, tuple[int, int] | None]
"""A file for `replace_files`: its path, content, mode and owner (None: the process's)."""


def replace_files(files: Sequence[NewFile], synced: bool = True) -> None:
    """Several files replaced as one step, as `Commit` does for a build, raising OSError
    whose `filename` is the target's: each is written beside its target, and synced
    unless a cache's (`write_cache`), with its mode (and owner, where the process may
    give it away: a user's file keeps its own, `userfile`) set before it takes the
    file's place; then all are renamed into place with Ctrl-C held back. A Ctrl-C, or
    a rename that fails, leaves all of them as they were or all new, and no temporary
    file; SIGKILL between two renames leaves each one old or new."""
    staged: list[str] = []
    current = Path()
    try:
        for current, data, mode, owner in files:
            tmp_name = _stage(current, data, mode, staged.append, synced)
            if owner is not None:
                with contextlib.suppress(OSError):  # only root may give a file away
                    os.chown(tmp_name, *owner)
        moves = [(tmp_name, path) for tmp_name, (path, *_) in zip(staged, files, strict=True)]
        with stops_held():
            failed = _replace_all(moves)
            if failed is None:
                staged.clear()
        if failed is not None:
            current, error, left = failed
            raise OSError(error.errno, (error.strerror or str(error)) + _left(left), str(current))
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror or str(exc), str(current)) from None
    finally:
        for tmp_name in staged:
            with contextlib.suppress(OSError):
                os.unlink(tmp_name)
    if synced:
        for directory in {path.parent for path, *_ in files}:
            _fsync_dir(directory)


class Commit:
    """Several files replaced as one step: each new file is written and synced beside its
    target when it is known (`stage`), and only when all of them are on disk are they
    renamed into place (`done`), by rank, then in the order staged. Any failure (a full
    disk, an interrupt) before that leaves every target as it was and, once the `with`
    block ends, no temporary file behind."""

    def __init__(self) -> None:
        self.staged: list[tuple[int, int, str, Path]] = []

    def __enter__(self) -> Commit:
        return self

    def __exit__(self, *exc: object) -> None:
        for _, _, tmp_name, _ in self.staged:
            with contextlib.suppress(OSError):
                os.unlink(tmp_name)
        self.staged.clear()

    def stage(self, path: Path, data: bytes, rank: int = 0) -> None:
        def keep(tmp_name: str) -> None:
            self.staged.append((rank, len(self.staged), tmp_name, path))

        try:
            _stage(path, data, 0o644, keep)
        except OSError as exc:
            raise _not_written(path, exc) from None

    def done(self, removals: Sequence[Path] = ()) -> None:
        staged = sorted(self.staged)
        with stops_held():
            failed = _replace_all([(tmp_name, path) for _, _, tmp_name, path in staged])
            if failed is None:
                self.staged.clear()
                for removal in removals:
                    with contextlib.suppress(OSError):
                        removal.unlink()
        if failed is not None:
            raise _not_written(*failed) from None
        for directory in {path.parent for _, _, _, path in staged}:
            _fsync_dir(directory)


def _not_written(path: Path, exc: OSError, replaced: Sequence[Path] = ()) -> OutputError:
    said = _left(replaced) or "; nothing was changed"
    return OutputError(f"{path}: cannot write: {exc.strerror or exc}{said}")


def _left(replaced: Sequence[Path]) -> str:
    """What a failed commit says of the files it replaced and could not put back."""
    if not replaced:
        return ""
    return "; these files were replaced and could not be put back: " + ", ".join(map(str, replaced))


Failed = tuple[Path, OSError, list[Path]]
"""A rename that failed: its target, the error, the targets left replaced (`_replace_all`)."""


def _replace_all(moves: Sequence[tuple[str, Path]]) -> Failed | None:
    """Each temporary file renamed over its target, in order; None when all were. If one
    rename fails (a target that became a folder, a file that may not be replaced), the
    targets already replaced get their old files back, each kept meanwhile as a hard
    link beside it, and those that were not there are removed: all old, or all new. Else
    the target that failed, its error, and what could not be put back (on a file system
    without hard links)."""
    aside: list[str | None] = []
    done = 0
    try:
        for _, target in moves:
            aside.append(_linked_aside(target))
        for tmp_name, target in moves:
            os.replace(tmp_name, target)
            done += 1
        return None
    except OSError as exc:
        pairs = zip(moves[:done], aside, strict=False)
        left = [target for (_, target), old in reversed(list(pairs)) if not _put_back(target, old)]
        return moves[min(done, len(moves) - 1)][1], exc, left
    finally:
        for old in aside:
            if old:
                with contextlib.suppress(OSError):
                    os.unlink(old)


_NOTHING = None
"""In place of a target's old file: there was none."""


def _linked_aside(target: Path) -> str | None:
    """A hard link to `target`'s file beside it, under a temporary name; None if there is
    no file there, "" if it cannot be linked."""
    import secrets

    if not target.is_file() or target.is_symlink():
        return "" if os.path.lexists(target) else _NOTHING
    for _ in range(8):
        name = str(target.parent / f"{TEMP_PREFIX}old-{secrets.token_hex(6)}")
        try:
            os.link(target, name)
            return name
        except FileExistsError:
            continue
        except OSError:
            return ""
    return ""


def _put_back(target: Path, old: str | None) -> bool:
    """Whether `target` is as it was before its replacement."""
    try:
        if old is _NOTHING:
            os.unlink(target)
        elif old:
            os.replace(old, target)
        else:
            return False
    except OSError:
        return False
    return True


def _stage(
    path: Path, data: bytes, mode: int, keep: Callable[[str], None], synced: bool = True
) -> str:
    """A temporary file beside `path` holding `data`, synced if `synced`. `keep` is told
    its name as soon as it exists, with Ctrl-C held back until it knows: the caller
    deletes it, whatever happens next, and no interrupt can fall between the two."""
    path.parent.mkdir(parents=True, exist_ok=True)
    import tempfile

    with stops_held():
        fd, tmp_name = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=path.parent)
        keep(tmp_name)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
        if synced:
            handle.flush()
            os.fsync(handle.fileno())
    os.chmod(tmp_name, mode)
    return tmp_name


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def remove_stale_temporaries(directory: Path) -> list[Path]:
    """Delete temporary files left by a build that was killed mid-write."""
    removed = []
    if directory.is_dir():
        for leftover in directory.glob(TEMP_PREFIX + "*"):
            with contextlib.suppress(OSError):
                leftover.unlink()
                removed.append(leftover)
    return removed
