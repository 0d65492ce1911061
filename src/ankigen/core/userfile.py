"""Writing a user's file: the one way every command but `build` writes what it was asked
to (a bank, a PO file, an export, release notes, an imported image).

An author's uncommitted work is in these files, so a write is refused unless it is
certainly wanted:

- `-` is standard output, the only stream written; a FIFO, a device or a folder is
  refused, never opened (as root, `-o /dev/null` would replace the system's).
- A command never writes over one of its own inputs, even with `--force`.
- An existing file is replaced only if it holds exactly what this command read from it
  and edited (`edits`), or carries this command's own mark for the same source
  (`ours`), or with `--force`; otherwise the refusal says what is there and how to go on.
- What is written is checked first (`check`): a bank that would not load is never
  written, and the old file stays.
- The write goes through a symbolic link to the real file and keeps its mode; it is
  atomic, as `build`'s are: a reader, or an interrupted command, sees the old file or
  the new one, never a part.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ankigen.core.atomic import NewFile, replace_files
from ankigen.core.errors import AnkigenError
from ankigen.core.reading import not_a_file

STDOUT = "-"


class Refused(AnkigenError):
    """A file was not written, to keep what is in it; nothing was changed."""


@dataclass(frozen=True)
class Target:
    """Where one command's output goes, and what may be replaced there."""

    path: Path
    """As the user named it; `-` is standard output."""
    kind: str
    """What is written, for messages: "a bank", "a PO file", "GIFT"."""
    force: bool = False
    """--force: an existing file of another kind or source may be replaced."""
    inputs: tuple[Path, ...] = ()
    """Files this command reads: never written over."""
    ours: Callable[[bytes], bool] | None = None
    """Whether an existing file's content was written by this command from the same
    source (its mark), and so may be replaced by a newer one."""
    edits: bytes | None = None
    """The content this command read from the file and edited: the file is replaced only
    while it still holds exactly this (nobody changed it meanwhile)."""
    check: Callable[[bytes], None] | None = None
    """Raises (an AnkigenError) if the new content is not what it should be."""

    @property
    def is_stdout(self) -> bool:
        return str(self.path) == STDOUT


def real_path(path: Path) -> Path:
    """The file a write to `path` lands in: symbolic links followed, even to nothing."""
    return Path(os.path.realpath(path))


def _same_file(a: Path, b: Path) -> bool:
    with contextlib.suppress(OSError):
        return os.path.samefile(a, b)
    return real_path(a) == real_path(b)


def existing(target: Target) -> bytes | None:
    """What the target holds now, None if it does not exist; Refused where it may not be
    written at all. Commands that merge into the file (a PO file) read it with this."""
    if target.is_stdout:
        return None
    shown = target.path
    real = real_path(shown)
    for source in target.inputs:
        if _same_file(real, source):
            raise Refused(
                f"{shown} is the input of this command ({source}); "
                "write to another file, or to standard output with -o -"
            )
    try:
        info = os.stat(real)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise Refused(f"{shown}: cannot write: {exc.strerror}") from None
    what = not_a_file(info.st_mode)
    if what is not None:
        raise Refused(
            f"{shown} is {what}: ankigen writes only regular files; use -o - for standard output"
        )
    try:
        return real.read_bytes()
    except OSError as exc:
        raise Refused(f"{shown}: cannot read what is there: {exc.strerror}") from None


def write(target: Target, data: bytes) -> bool:
    """Write `data` as `target` allows; False if the file already held exactly that (it is
    not touched). Refused, with nothing changed, where the write is not certainly wanted."""
    return write_all([(target, data)])[0]


def write_all(writes: Sequence[tuple[Target, bytes]]) -> list[bool]:
    """Several files written by one command: each is allowed and checked before any is
    written, so a refusal leaves every file as it was; then all are replaced as one step
    (`replace_files`), so a Ctrl-C leaves all of them old or all new."""
    needed = [_allowed(target, data) for target, data in writes]
    files: list[NewFile] = []
    shown: dict[str, Path] = {}
    for (target, data), need in zip(writes, needed, strict=True):
        if need and not target.is_stdout:
            real = real_path(target.path)
            files.append((real, data, *_held(real)))
            shown[str(real)] = target.path
    try:
        replace_files(files)
    except OSError as exc:
        where = shown.get(str(exc.filename), exc.filename)
        raise Refused(f"{where}: cannot write: {exc.strerror or exc}") from None
    for (target, data), need in zip(writes, needed, strict=True):
        if need and target.is_stdout:
            sys.stdout.flush()
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
    return needed


def _allowed(target: Target, data: bytes) -> bool:
    """Whether `data` needs writing; Refused where it may not be."""
    if target.check is not None:
        target.check(data)
    if target.is_stdout:
        return True
    before = existing(target)
    if before == data:
        return False
    if before is not None and not target.force:
        _may_replace(target, before)
    return True


def _may_replace(target: Target, before: bytes) -> None:
    if target.edits is not None:
        if before == target.edits:
            return
        raise Refused(
            f"{target.path} changed while ankigen was working on it; nothing was written: "
            "run the command again"
        )
    if target.ours is not None and target.ours(before):
        return
    what = (
        ""
        if target.ours is None
        else f", not {target.kind} this command wrote from the same source"
    )
    raise Refused(
        f"{target.path} exists and holds {_describe(before)}{what}; nothing was written: "
        "choose another file, use -o - for standard output, or --force to replace it"
    )


def _describe(data: bytes) -> str:
    if not data.strip():
        return "nothing but white space"
    lines = data.count(b"\n") + (not data.endswith(b"\n"))
    return f"{lines} line{'s' if lines != 1 else ''} ({len(data)} bytes)"


def _held(real: Path) -> tuple[int, tuple[int, int] | None]:
    """The mode and owner a file written at `real` gets: an existing file's own."""
    try:
        info = os.stat(real)
    except FileNotFoundError:
        return 0o666 & ~_umask(), None
    return stat.S_IMODE(info.st_mode), (info.st_uid, info.st_gid)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
