"""Reading ankigen's own files (the lock, the project file, the caches, the record of
issued times): regular files only. A FIFO left in one's place would block the command
for ever on opening it, and a device such as /dev/zero never end."""

from __future__ import annotations

import os
import stat

_NOT_WAITING = getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def not_a_file(mode: int) -> str | None:
    """What a file of this mode is, if it is no regular file."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if not stat.S_ISREG(mode):
        return "not a regular file"
    return None


def read_regular(path: str | os.PathLike[str]) -> bytes:
    """The bytes of the regular file at `path`; OSError for anything else, with what it
    is as its `strerror`. Opened without waiting for a writer, then looked at."""
    fd = os.open(path, os.O_RDONLY | _NOT_WAITING)
    with open(fd, "rb") as handle:
        what = not_a_file(os.fstat(fd).st_mode)
        if what is not None:
            raise OSError(0, f"{what}, not a regular file", os.fspath(path))
        return handle.read()
