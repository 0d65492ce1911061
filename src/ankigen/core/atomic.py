"""Atomic writes of ankigen's own files: a reader, or a killed build, sees the old file or
the new one, never a part; several files committed as one step (`Commit`)."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

from ankigen.core.errors import OutputError

TEMP_PREFIX = ".ankigen-tmp-"


def write_atomic(path: Path, data: bytes) -> None:
    """Replace `path` with `data`: a reader sees the old file or the new one, never a part."""
    try:
        replace_file(path, data)
    except OSError as exc:
        raise OutputError(f"{exc.filename or path}: cannot write: {exc.strerror or exc}") from None


def replace_file(
    path: Path, data: bytes, mode: int = 0o644, owner: tuple[int, int] | None = None
) -> None:
    """`write_atomic` raising OSError, with the file's mode (and owner, where the process
    may give it away) set before it takes the file's place: a user's file keeps its own
    (`userfile`)."""
    tmp_name = _stage(path, data, mode)
    try:
        if owner is not None:
            with contextlib.suppress(OSError):  # only root may give a file away
                os.chown(tmp_name, *owner)
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise
    _fsync_dir(path.parent)


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
        try:
            tmp_name = _stage(path, data)
        except OSError as exc:
            raise _not_written(path, exc) from None
        self.staged.append((rank, len(self.staged), tmp_name, path))

    def done(self, removals: Sequence[Path] = ()) -> None:
        current = Path()
        staged = sorted(self.staged)
        try:
            with _signals_deferred():
                for _, _, tmp_name, current in staged:
                    os.replace(tmp_name, current)
                self.staged.clear()
                for removal in removals:
                    with contextlib.suppress(OSError):
                        removal.unlink()
        except OSError as exc:
            raise _not_written(current, exc) from None
        for directory in {path.parent for _, _, _, path in staged}:
            _fsync_dir(directory)


def _not_written(path: Path, exc: OSError) -> OutputError:
    return OutputError(f"{path}: cannot write: {exc.strerror or exc}; nothing was changed")


def _stage(path: Path, data: bytes, mode: int = 0o644) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    import tempfile

    fd, tmp_name = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp_name, mode)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise
    return tmp_name


@contextlib.contextmanager
def _signals_deferred() -> Iterator[None]:
    """Ctrl-C waits until the renames are done: a half-committed build is worse than a late stop."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(
        signal, "pthread_sigmask"
    ):
        yield
        return
    blocked = {signal.SIGINT, signal.SIGTERM}
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, blocked)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


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
