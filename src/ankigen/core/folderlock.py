"""The output folder's lock: concurrent builds into one folder take turns.

Apart from `package`, so that a build with nothing changed, which holds the lock
to read the build cache, imports nothing of the packages' writing.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from io import BufferedRandom
from pathlib import Path

from ankigen.core.errors import OutputError

LOCK_FILE = ".ankigen-build.lock"

# the output folders' locks this process holds: a process forked from it (a worker)
# closes its copies at once, so that it never keeps a lock alive once this one is gone
_held: set[BufferedRandom] = set()


def _close_held_locks() -> None:
    for handle in _held:
        with contextlib.suppress(OSError):
            handle.close()
    _held.clear()


if hasattr(os, "register_at_fork"):  # not on Windows, which cannot fork
    os.register_at_fork(after_in_child=_close_held_locks)


@contextlib.contextmanager
def exclusive(directory: Path) -> Iterator[None]:
    """Hold the output folder's lock, so concurrent builds into it take turns."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        handle = open(directory / LOCK_FILE, "a+b")  # noqa: SIM115 - held for the block
    except OSError as exc:
        raise OutputError(f"{directory}: cannot use as output folder: {exc.strerror}") from None
    try:
        _lock(handle)
        _held.add(handle)
        yield
    finally:
        _held.discard(handle)
        handle.close()  # closing releases the lock


def _lock(handle: BufferedRandom) -> None:
    try:
        import fcntl

        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
    except ImportError:  # pragma: no cover - Windows
        import msvcrt

        handle.seek(0)
        msvcrt.locking(handle.fileno(), msvcrt.LK_LOCK, 1)  # type: ignore[attr-defined]
