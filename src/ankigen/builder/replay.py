"""A build with nothing to do, replayed: what it prints, recorded by the build before it,
written again while every file that build read or wrote is as it was.

Most builds change nothing (editors' save hooks, `make`, CI), and such a build's work
is all proof: the banks, the lock, the project file, the images and the note type's
sources as the last build took them, its packages as it left them. The last build
records in `OUT/.ankigen-replay.json` what proves it (`builder.result.Watched`) and
what a build with nothing to do then prints (each command-line form's lines and exit
status), under the same MAC as the build cache (`core.secret`). The command line asks
here first (`cli.quick`): if the record holds, its lines are the answer, and nothing of
the bank format, the checks or the command line is loaded. If anything differs, or
cannot be told, the build runs, and records again.

The record is plain JSON and this module makes no record of its own: it runs before
anything else of ankigen's, and Python's start-up is most of its time.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import time
from collections.abc import Sequence
from pathlib import Path

from ankigen.bank.folder import bank_candidates, settled, status_of
from ankigen.core.reading import read_regular
from ankigen.core.secret import signed_record, verified_record
from ankigen.core.version import __version__

REPLAY_NAME = ".ankigen-replay.json"


def replay_key(banks_dir: str, out_dir: str) -> dict[str, str | None] | None:
    """What else decides a build's output: ankigen's version, the folders as named from
    the working folder, and the time the environment pins (`SOURCE_DATE_EPOCH`). None
    when the working folder is gone."""
    try:
        cwd = os.getcwd()
    except OSError:
        return None
    return {
        "version": __version__,
        "cwd": cwd,
        "banks": banks_dir,
        "out": out_dir,
        "epoch": os.environ.get("SOURCE_DATE_EPOCH"),
    }


def replayed(banks_dir: str, out_dir: str, form: str) -> tuple[int, list[list[object]]] | None:
    """The exit status and lines (`[text, to_stderr]`) a build with nothing to do prints
    in this form (`plain` or `json`), if the record the last build left still holds;
    None otherwise, and the build must run."""
    try:
        record = _holding(banks_dir, out_dir)
        if not record:
            return None
        outputs, status = record["outputs"][form], record["status"]  # type: ignore[index]
        taken = time.time_ns()
        if sorted(os.path.normpath(p) for p in bank_candidates(banks_dir)) != record["banks"]:
            return None
        files = []
        for entry in record["files"]:  # type: ignore[attr-defined]
            checked = _checked(entry, taken)
            if checked is None:
                return None  # the build runs: the files after this one are its to read
            files.append(checked)
    except (OSError, KeyError, TypeError, ValueError):
        return None
    if files != record["files"]:
        # statuses that settled since the record: the next build need not read those files
        _write(out_dir, {**record, "files": files})
    return status, outputs  # type: ignore[return-value]


def settled_banks(banks_dir: str, out_dir: str) -> dict[str, tuple[tuple[int, ...], str]]:
    """The banks the record vouches for by their statuses, by path, with their digests:
    those whose statuses settled since the last build are recorded by the builds with
    nothing to do that saw them settle (`_checked`), where the build cache, written
    before, cannot know them. What the next real build may know them by, unread.
    Empty if the record does not hold for these folders."""
    try:
        record = _holding(banks_dir, out_dir)
        if not record:
            return {}
        banks = set(record["banks"])  # type: ignore[call-overload]
        return {
            path: (tuple(status), digest)
            for path, status, digest in record["files"]  # type: ignore[attr-defined]
            if path in banks
            and type(status) is list
            and len(status) == 4
            and all(type(n) is int for n in status)
            and type(digest) is str
        }
    except (OSError, KeyError, TypeError, ValueError):
        return {}


def _holding(banks_dir: str, out_dir: str) -> dict[str, object]:
    """The record this user's ankigen left for these folders, as run from here; empty
    if there is none. OSError if it cannot be read."""
    record = verified_record(read_regular(os.path.join(out_dir, REPLAY_NAME)))
    return record if record.get("key") == replay_key(banks_dir, out_dir) else {}


def record(
    banks_dir: str,
    out_dir: str,
    banks: Sequence[str],
    files: Sequence[Sequence[object]],
    outputs: dict[str, list[list[object]]],
    status: int = 0,
) -> None:
    """Record what a build with nothing to do prints while these files are as they are
    (`builder.result.Watched`); nothing if the working folder is gone."""
    key = replay_key(banks_dir, out_dir)
    if key is None:
        return
    _write(
        out_dir,
        {
            "key": key,
            "banks": sorted(os.path.normpath(path) for path in banks),
            "files": files,
            "outputs": outputs,
            "status": status,
        },
    )


def _checked(entry: list[object], taken: int) -> list[object] | None:
    """The entry, with the file's status where it settled since; None if the file is
    not as recorded. `taken`: a time before the file's status is taken."""
    path, status, digest = entry
    if not isinstance(path, str):
        raise TypeError("not a path")
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return entry if status is None and digest is None else None
    if status is None and digest is None:
        return None
    now = list(status_of(info))
    if status == now:
        return entry
    if digest is None or not stat.S_ISREG(info.st_mode):
        return None
    if isinstance(status, list) and status and status[0] != info.st_size:
        return None  # certainly changed (the size comes first): not read to be sure
    with open(path, "rb") as handle:
        if hashlib.sha256(handle.read()).hexdigest() != digest:
            return None
    return [path, now if settled(info, taken) else None, digest]


def _write(out_dir: str, body: dict[str, object]) -> None:
    # here, not above: only a build that recorded, or a status that settled, writes
    from ankigen.core.atomic import write_cache
    from ankigen.core.errors import OutputError

    with contextlib.suppress(OutputError):  # only saves time: the next build records again
        write_cache(Path(out_dir, REPLAY_NAME), signed_record(body))
