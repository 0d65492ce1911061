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


MAX_BYTES = 256 << 20
"""The most ankigen reads of one of its files: a lock of 10,000 items is 1 MB. A link
to a file of gigabytes was read whole, and ran out of memory."""


def read_regular(path: str | os.PathLike[str], limit: int = MAX_BYTES) -> bytes:
    """The bytes of the regular file at `path`, of at most `limit` bytes; OSError for
    anything else, saying what it is. Opened without waiting for a writer, then looked
    at."""
    fd = os.open(path, os.O_RDONLY | _NOT_WAITING)
    with open(fd, "rb") as handle:
        info = os.fstat(fd)
        what = not_a_file(info.st_mode)
        if what is not None:
            raise OSError(0, f"{what}, not a regular file", os.fspath(path))
        data = b""
        if info.st_size <= limit:
            # as much as it holds and a byte more, to see it has grown: asked for `limit`,
            # Python's reader made room for all of it first (a lock read in 20 µs, not 5)
            data = handle.read(info.st_size + 1)
            if len(data) > info.st_size:  # grown since: the rest too
                data += handle.read(limit + 1 - len(data))
        if info.st_size > limit or len(data) > limit:
            size = max(info.st_size, len(data))
            raise OSError(0, f"{size:,} bytes, over the {limit:,} it may be", os.fspath(path))
        return data
