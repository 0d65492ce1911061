"""`ankigen build` in its plainest forms, answered before the command line is loaded.

Loading click takes longer than the rest of a build with nothing to do (35 to 60 ms of
90), and a tenth of a build after one edit: what editors' save hooks, `make` and CI run
most. `ankigen build` and `ankigen build --json` are answered here: by the replay of
what the last build recorded, if every file it read or wrote is as it was
(`builder.replay`), else by the function the command line's `build` calls
(`plain.build_command`), with its errors reported as it reports them. Any other form
goes to the command line, which parses it: there is one parser, click's.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from ankigen.builder.replay import replayed
from ankigen.cli.streams import plain_stream, write_plain
from ankigen.core.process import from_an_interrupt

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
    interrupted, status = False, 0
    try:
        replayed = _replayed(as_json)
        if replayed is None:
            # the build proper's front door: most of a build's imports, none of a replay's
            from ankigen.cli.building import build_command

            build_command(BANKS, OUT, as_json)
        else:
            status = replayed
    except KeyboardInterrupt:
        interrupted = True
    except Exception as exc:
        if not from_an_interrupt(exc):
            failed: int = _plain().failure_status(exc)
            return failed
        interrupted = True
    if interrupted:
        # outside the `except`: the interrupt's traceback no longer holds the worker pool
        _plain().leave_interrupted()
    return status


def _replayed(as_json: bool) -> int | None:
    """The exit status of a build with nothing to do, its lines printed; None if the
    build must run."""
    try:
        found = replayed(str(BANKS), str(OUT), "json" if as_json else "plain")
    except Exception as exc:  # an error or a bug: the build meets it again and reports it
        if from_an_interrupt(exc):
            raise
        return None
    if found is None:
        return None
    status, lines = found
    streams = [plain_stream(text, to_stderr) for text, to_stderr in lines]  # type: ignore[arg-type]
    if None in streams:
        return None  # a line only click's echo can print: the build prints it
    for stream, (text, _) in zip(streams, lines, strict=True):
        write_plain(stream, text)  # type: ignore[arg-type]
    return status


def _plain() -> ModuleType:
    """How the command line reports a failure or a Ctrl-C; here, not at the top: it
    loads the printed lines' records, which a replay does without."""
    from ankigen.cli import plain  # as said above

    return plain


def _click_takes(folder: Path) -> bool:
    """Whether click takes this path as a folder argument (`click.Path(file_okay=False)`):
    its refusal, a usage error, is click's to word."""
    try:
        status = os.stat(folder)
    except OSError:
        return True  # not there (yet): the build decides
    return not stat.S_ISREG(status.st_mode) and os.access(folder, os.R_OK)
