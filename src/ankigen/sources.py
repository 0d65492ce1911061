"""The banks folder's files: the banks, the lock and the project file, each read exactly
once per build.

Every decision a build makes (nothing changed, reuse a cached bank, the lock,
the packages) is made from the bytes read here, so a bank saved while a build
runs is picked up by the next build, never half by this one.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ankigen.errors import AnkigenError, Diagnostic, InvalidBanks, LockError

BANK_SUFFIXES = (".yaml", ".yml")
LOCK_NAME = "ankigen.lock"
PROJECT_NAME = "ankigen.toml"


class NoBanks(AnkigenError):
    """The banks folder holds no bank files."""


@dataclass
class Source:
    """One bank file as it was read: its path, its bytes and their SHA-256.

    A build lets go of the bytes once the bank is checked (`release`): its bank cache
    entry then holds what the build needs of it, and the banks' bytes are the build's
    largest input, held otherwise while every deck is planned."""

    path: Path
    data: bytes
    digest: str
    released: bool = False

    def release(self) -> None:
        self.data = b""
        self.released = True

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


def looks_like_bank(name: str) -> bool:
    return name.lower().endswith(BANK_SUFFIXES) and not name.startswith(".")


def find_banks(banks_dir: Path) -> tuple[list[Path], list[Diagnostic]]:
    """Bank files below `banks_dir`, and an error for each path that looks like a bank
    (any case of .yaml/.yml) but is not a readable regular file. Hidden files and
    folders (editor lock files such as `.#en.yaml`) are not banks."""
    if not banks_dir.is_dir():
        raise NoBanks(f"{shown_path(banks_dir)}: no such folder of banks")
    paths: list[Path] = []
    problems: list[Diagnostic] = []
    for folder, dirnames, filenames in os.walk(banks_dir, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted([*filenames, *dirnames]):
            if not looks_like_bank(name):
                continue
            path = Path(folder) / name
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


def read_files(paths: Sequence[Path]) -> tuple[list[Source], list[Diagnostic]]:
    """Each file read once, with a problem for each that could not be read."""
    sources = []
    problems = []
    for path in paths:
        try:
            data = read_bank_file(path)
        except OSError as exc:
            problems.append(
                Diagnostic(shown_path(path), 0, "error", f"cannot read: {exc.strerror}")
            )
            continue
        sources.append(Source(path, data, hashlib.sha256(data).hexdigest()))
    return sources, problems


def read_sources(
    banks_dir: Path, bank_paths: Sequence[Path] | None = None
) -> tuple[list[Source], list[Diagnostic]]:
    """Every bank file, read once, with the problems of paths that could not be read."""
    if bank_paths is None:
        paths, problems = find_banks(banks_dir)
    else:
        paths, problems = list(bank_paths), []
    sources, unreadable = read_files(paths)
    return sources, [*problems, *unreadable]


def read_lock_bytes(path: Path) -> bytes | None:
    """The lock file's bytes; None when there is none yet."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise LockError(f"{path}: cannot read the lock file: {exc.strerror}") from None


def read_project_bytes(banks_dir: Path) -> bytes | None:
    """The project file's bytes; None when there is none."""
    path = banks_dir / PROJECT_NAME
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InvalidBanks(
            [Diagnostic(shown_path(path), 0, "error", f"cannot read: {exc.strerror}")]
        ) from None
