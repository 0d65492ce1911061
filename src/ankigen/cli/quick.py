"""`ankigen build` in its plainest forms, run before the command line is loaded.

Loading click takes longer than the rest of a build with nothing to do (35 to 60 ms of
90), and a tenth of a build after one edit: what editors' save hooks, `make` and CI run
most. `ankigen build` and `ankigen build --json` run here, through the function the
command line's `build` calls (`plain.build_command`), with its errors reported as it
reports them. Any other form goes to the command line, which parses it: there is one
parser, click's (a build naming its folders pays for loading click).
A build with nothing to do is answered first by the banks' statuses alone
(`build.pipeline.unchanged_build`).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path

PLAIN_FORMS = {("build",): False, ("build", "--json"): True}
"""The command lines answered here, each with whether it asks for JSON: the two whose
meaning needs no parser (BANKS is `banks`, OUT is `out`). Every other form is click's to
read: one parser of the command line, not a copy kept equal to it by tests."""
BANKS, OUT = Path("banks"), Path("out")


def answer(argv: Sequence[str]) -> int | None:
    """Run `ankigen build` in its plainest forms without loading the command line, and
    return its exit status; None for anything else, which click reads."""
    as_json = PLAIN_FORMS.get(tuple(argv))
    if as_json is None or not (_click_takes(BANKS) and _click_takes(OUT)):
        return None
    # only once the arguments are the plainest: anything else goes to click at once
    from ankigen.build.pipeline import unchanged_build
    from ankigen.cli.output import build_lines
    from ankigen.cli.plain import build_command, failure_status, leave_interrupted, write_lines

    interrupted = False
    try:
        try:
            unchanged = unchanged_build(BANKS, OUT)
        except Exception:  # an error or a bug: the build meets it again and reports it
            unchanged = None
        if unchanged is None:
            build_command(BANKS, OUT, as_json)
        else:
            write_lines(build_lines(unchanged, OUT, as_json))
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
