"""The banks folder as files: which are banks, the lock's and the project file's names,
and when a file's status vouches for its bytes.

No records and no errors here: the replay of a build with nothing to do
(`builder.replay`) walks the folder by these rules without loading anything of the
bank format, and `bank.files` turns the same walk into banks and problems.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

BANK_SUFFIXES = (".yaml", ".yml")
LOCK_NAME = "ankigen.lock"
PROJECT_NAME = "ankigen.toml"

# A write lands on a timestamp rounded by the file system (2 s on FAT, 1 s on some
# others, a clock tick on Linux): a second write in that same step leaves the status
# unchanged. A status vouches for the bytes read after it only if both its times are
# older than that, when taken: then any later write shows in them.
SETTLE_NS = 3_000_000_000


def looks_like_bank(name: str) -> bool:
    return name.lower().endswith(BANK_SUFFIXES) and not name.startswith(".")


def bank_candidates(banks_dir: str | os.PathLike[str]) -> Iterator[str]:
    """Every path below `banks_dir` named like a bank (any case of .yaml/.yml), files
    and folders alike, in the order `bank.files.find_banks` reports them. Hidden files
    and folders (editor lock files such as `.#en.yaml`) are not banks."""
    for folder, dirnames, filenames in os.walk(banks_dir, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted([*filenames, *dirnames]):
            if looks_like_bank(name):
                yield os.path.join(folder, name)


def settled(info: os.stat_result, taken_ns: int) -> bool:
    """Whether a status taken at `taken_ns` (or later) vouches for the bytes read after
    it: both its times older than `SETTLE_NS` then. For banks and images alike."""
    return max(info.st_mtime_ns, info.st_ctime_ns) < taken_ns - SETTLE_NS


def status_of(info: os.stat_result) -> tuple[int, int, int, int]:
    """A file's size, modification and change times (ns) and inode: any write, rename,
    copy or checkout changes one of them (the change time cannot be set back)."""
    return (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)
