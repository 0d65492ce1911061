"""`ankigen build` in its plainest forms, run before the command line is loaded.

Loading click takes longer than the rest of a build with nothing to do (35 to 60 ms of
90), and a tenth of a build after one edit: what editors' save hooks, `make` and CI run
most. `build [BANKS] [-o OUT] [--json]` runs here, through the function the command
line's `build` calls (`plain.build_command`), with its errors reported as it reports
them; any other form, and any argument click would refuse, goes to the command line.
A build with nothing to do is answered first by the banks' statuses alone
(`build.pipeline.unchanged_build`).
"""

from __future__ import annotations

import os
import stat
from collections import namedtuple
from collections.abc import Sequence
from pathlib import Path

TYPE_CHECKING = False  # records on a build's quickest path are named tuples (see `errors`)
if TYPE_CHECKING:
    from typing import NamedTuple

    class BuildArgs(NamedTuple):
        banks: Path
        out: Path
        as_json: bool
else:
    BuildArgs = namedtuple("BuildArgs", "banks out as_json")


def build_args(argv: Sequence[str]) -> BuildArgs | None:
    """`build [BANKS] [-o OUT] [--json]` as click parses it, or None for anything else."""
    if not argv or argv[0] != "build":
        return None
    banks: str | None = None
    out: str | None = None
    as_json = False
    rest = list(argv[1:])
    while rest:
        arg = rest.pop(0)
        value: str | None = None
        if arg in ("-o", "--out"):
            value = rest.pop(0) if rest else None
        elif arg.startswith("--out="):
            value = arg.removeprefix("--out=")
        elif arg.startswith("-o") and not arg.startswith("--"):
            value = arg.removeprefix("-o")
        elif arg == "--json" and not as_json:
            as_json = True
            continue
        elif not arg.startswith("-") and banks is None:
            banks = arg
            continue
        else:
            return None
        # an option given twice, or a value click might read otherwise: click decides
        if out is not None or not value or value.startswith("-"):
            return None
        out = value
    if banks == "" or "\0" in (banks or "") + (out or ""):
        return None
    return BuildArgs(Path(banks or "banks"), Path(out or "out"), as_json)


def answer(argv: Sequence[str]) -> int | None:
    """Run `ankigen build` in its plainest forms without loading the command line, and
    return its exit status; None for anything else, which click reads."""
    args = build_args(argv)
    if args is None or not (_click_takes(args.banks) and _click_takes(args.out)):
        return None
    # only once the arguments are the plainest: anything else goes to click at once
    from ankigen.build.pipeline import unchanged_build
    from ankigen.cli.output import build_lines
    from ankigen.cli.plain import build_command, failure_status, leave_interrupted, write_lines

    interrupted = False
    try:
        try:
            unchanged = unchanged_build(args.banks, args.out)
        except Exception:  # an error or a bug: the build meets it again and reports it
            unchanged = None
        if unchanged is None:
            build_command(args.banks, args.out, args.as_json)
        else:
            write_lines(build_lines(unchanged, args.out, args.as_json))
    except KeyboardInterrupt:
        interrupted = True
    except Exception as exc:
        return failure_status(exc)
    if interrupted:
        # outside the `except`: the interrupt's traceback no longer holds the worker pool
        leave_interrupted()
    return 0


def _click_takes(folder: Path) -> bool:
    """Whether click takes this path as a folder argument (`click.Path(file_okay=False)`):
    its refusal, a usage error, is click's to word."""
    try:
        status = os.stat(folder)
    except OSError:
        return True  # not there (yet): the build decides
    return not stat.S_ISREG(status.st_mode) and os.access(folder, os.R_OK)
