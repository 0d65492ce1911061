"""The banks folder's files: the banks, the lock and the project file, each read exactly
once per build.

Every decision a build makes (nothing changed, reuse a cached bank, the lock,
the packages) is made from the bytes read here, so a bank saved while a build
runs is picked up by the next build, never half by this one.

A build need not read a bank whose file status vouches for its bytes (`Signature`):
the status it had when a build read it, recorded with their digest, as git's index
does. Only statuses older than the file system's timestamps can blur are recorded
(`SETTLE_NS`), so a write after the status was taken always shows in it.
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ankigen.bank.folder import PROJECT_NAME, bank_candidates, settled
from ankigen.core.errors import AnkigenError, Diagnostic, InvalidBanks, LockError
from ankigen.core.reading import read_regular


class NoBanks(AnkigenError):
    """The banks folder holds no bank files."""


Signature = tuple[int, int, int, int, int]
"""A file's size, modification and change times (ns), inode and device: any write,
rename, copy or checkout changes one of them (the change time cannot be set back)."""

Known = Mapping[str, tuple[tuple[int, ...], str]]
"""Bank path -> the signature its file had when a build read it, and the bytes' digest."""


def signature(info: os.stat_result) -> Signature:
    return (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev)


class Source:
    """One bank file as it was read: its path, its bytes and their SHA-256.

    A build lets go of the bytes once the bank is checked (`release`): its bank cache
    entry then holds what the build needs of it, and the banks' bytes are the build's
    largest input, held otherwise while every deck is planned. A bank known by its
    `signature` is not read at all unless its bytes are needed (`read`).

    A plain class, not a dataclass: a build with nothing to do makes these, and
    importing dataclasses would be a fifth of its time (see `core.errors`)."""

    __slots__ = ("data", "digest", "path", "released", "signature", "size", "unread")

    def __init__(
        self,
        path: Path,
        data: bytes,
        digest: str,
        released: bool = False,
        signature: Signature | None = None,
        unread: bool = False,
        size: int = -1,
    ) -> None:
        self.path = path
        self.data = data
        self.digest = digest
        self.released = released
        self.signature = signature
        """The file's status taken before its bytes were read, if settled (`SETTLE_NS`)."""
        self.unread = unread
        """Known by `signature` alone: `data` is empty until `read`."""
        self.size = len(data) if size < 0 else size
        """The bytes' length, read or not."""

    def __repr__(self) -> str:
        return f"Source({str(self.path)!r}, {self.digest[:12]}, {self.size} bytes)"

    def release(self) -> None:
        self.data = b""
        self.released = True

    def forget(self) -> None:
        """Keep the digest alone, as for a bank known by its signature: what the bytes
        say is in a bank cache entry, and they are read again only if it proves
        unusable (`read`)."""
        if not self.released:
            self.data, self.unread = b"", True

    def read(self) -> None:
        """The bytes of a bank known by its signature. If they are not the ones it
        vouched for (a record no ankigen wrote), they are taken as they are, and the
        status vouches for nothing: nothing was decided from the digest yet but that the
        bank must be read."""
        if not self.unread:
            return
        self.data, self.unread = read_bank_file(self.path), False
        digest = hashlib.sha256(self.data).hexdigest()
        if digest != self.digest:
            self.digest, self.signature = digest, None

    @property
    def shown(self) -> str:
        return str(self.path)

    @property
    def seen(self) -> SourceDigest:
        return SourceDigest(self.path, self.digest)


@dataclass(frozen=True)
class SourceDigest:
    """What a build keeps of a bank file once its bytes are checked: path and SHA-256."""

    path: Path
    digest: str


def shown_path(path: Path | str) -> str:
    """A path for messages; bytes that are not UTF-8 are shown escaped (\\xff)."""
    raw = os.fsencode(path)
    return raw.decode("utf-8", "backslashreplace")


def is_utf8_name(path: Path | str) -> bool:
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def find_banks(banks_dir: Path) -> tuple[list[Path], list[Diagnostic]]:
    """Bank files below `banks_dir`, and an error for each path that looks like a bank
    (any case of .yaml/.yml) but is not a readable regular file. Hidden files and
    folders (editor lock files such as `.#en.yaml`) are not banks."""
    if not banks_dir.is_dir():
        raise NoBanks(f"{shown_path(banks_dir)}: no such folder of banks")
    paths: list[Path] = []
    problems: list[Diagnostic] = []
    for candidate in bank_candidates(banks_dir):
        path = Path(candidate)
        problem = _unusable(path)
        if problem:
            problems.append(Diagnostic(shown_path(path), 0, "error", problem))
        else:
            paths.append(path)
    if not paths and not problems:
        raise NoBanks(f"{shown_path(banks_dir)}: no bank files (*.yaml) found")
    return sorted(paths), problems


def _unusable(path: Path) -> str | None:
    if not is_utf8_name(path):
        return "the file name is not valid UTF-8; rename it"
    try:
        info = path.stat()
    except FileNotFoundError:
        return "a symbolic link to nothing: it cannot be read as a bank"
    except OSError as exc:
        return f"cannot read: {exc.strerror}"
    if stat.S_ISDIR(info.st_mode):
        return "a folder named like a bank file; rename it"
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file (a pipe, socket or device); banks must be files"
    return None


def read_bank_file(path: Path) -> bytes:
    """The bytes of one bank file (tests wrap this to change a bank right after it is read)."""
    return path.read_bytes()


def read_files(
    paths: Sequence[Path], known: Known | None = None
) -> tuple[list[Source], list[Diagnostic]]:
    """Each file read once, with a problem for each that could not be read; a file whose
    status is `known` is not read."""
    sources = []
    problems = []
    taken = time.time_ns()
    for path in paths:
        try:
            sources.append(_source(path, os.stat(path), known, taken))
        except OSError as exc:
            problems.append(
                Diagnostic(shown_path(path), 0, "error", f"cannot read: {exc.strerror}")
            )
    return sources, problems


def unchanged_sources(paths: Sequence[Path], known: Known) -> list[Source] | None:
    """Every file as its `known` status vouches for it, or read where its status cannot
    tell (not recorded, or recorded with the same size); None, reading no more, as soon
    as one has certainly changed (its size is not the recorded one) or cannot be read.

    For a build that may have nothing to do: a bank an author has just edited and built
    is not known by its status yet (it had not settled), so the build after it reads
    that bank, and knows the others by their statuses."""
    sources = []
    taken = time.time_ns()
    for path in paths:
        try:
            info = os.stat(path)
            record = known.get(str(path))
            if record is not None and record[0][0] != info.st_size:
                return None
            sources.append(_source(path, info, known, taken))
        except OSError:
            return None
    return sources


def _source(path: Path, info: os.stat_result, known: Known | None, taken: int) -> Source:
    """The file as its status `info` vouches for it, else as read after `info` was taken
    (at `taken` or later): a write in between shows in the next build's status."""
    vouched = _vouched(path, info, known)
    if vouched is not None:
        return vouched
    data = read_bank_file(path)
    vouching = signature(info) if settled(info, taken) else None
    return Source(path, data, hashlib.sha256(data).hexdigest(), signature=vouching)


def _vouched(path: Path, info: os.stat_result, known: Known | None) -> Source | None:
    status = signature(info)
    record = known.get(str(path)) if known else None
    # a status the replay's record holds has no device (`builder.replay.settled_banks`)
    if record is None or len(record[0]) < 4 or record[0] != status[: len(record[0])]:
        return None
    return Source(path, b"", record[1], signature=status, unread=True, size=info.st_size)


def read_sources(
    banks_dir: Path, bank_paths: Sequence[Path] | None = None, known: Known | None = None
) -> tuple[list[Source], list[Diagnostic]]:
    """Every bank file, read once (or known by its status), with the problems of paths
    that could not be read."""
    if bank_paths is None:
        paths, problems = find_banks(banks_dir)
    else:
        paths, problems = list(bank_paths), []
    sources, unreadable = read_files(paths, known)
    return sources, [*problems, *unreadable]


def signatures(sources: Sequence[Source]) -> dict[str, tuple[Signature, str]]:
    """What a later build may know the banks by: those with a settled signature."""
    return {str(s.path): (s.signature, s.digest) for s in sources if s.signature is not None}


def parse_known(value: object) -> dict[str, tuple[Signature, str]]:
    """The signatures recorded as `record_of` writes them; any other shape is ignored."""
    if not isinstance(value, dict):
        return {}
    known = {}
    for path, row in value.items():
        if (
            isinstance(path, str)
            and isinstance(row, list)
            and len(row) == 6
            and all(type(n) is int for n in row[:5])
            and isinstance(row[5], str)
        ):
            known[path] = (tuple(row[:5]), row[5])
    return known


def record_of(known: Known) -> dict[str, list[object]]:
    return {path: [*status, digest] for path, (status, digest) in sorted(known.items())}


def read_lock_bytes(path: Path) -> bytes | None:
    """The lock file's bytes; None when there is none yet."""
    try:
        return read_regular(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise LockError.at(
            shown_path(path), 0, f"cannot read the lock file: {exc.strerror}"
        ) from None


def read_project_bytes(banks_dir: Path) -> bytes | None:
    """The project file's bytes; None when there is none."""
    path = banks_dir / PROJECT_NAME
    try:
        return read_regular(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InvalidBanks(
            [Diagnostic(shown_path(path), 0, "error", f"cannot read: {exc.strerror}")]
        ) from None
