"""The `ankigen` command's entry point: tiny, so a Ctrl-C while Python starts lands here."""

from __future__ import annotations

import atexit
import gc
import os
import sys

from ankigen.core.process import (
    GC_THRESHOLDS,
    ends_without_teardown,
    from_an_interrupt,
    ignore_stops,
    stop_on_sigterm,
    stopped,
)

TYPE_CHECKING = False  # not typing's: on the replay's path, as `core.jsondata` explains
if TYPE_CHECKING:
    from typing import NoReturn


def main() -> None:
    try:
        # here, inside the `try`: a Ctrl-C from the first line on, while ankigen's modules
        # load, is handled below
        gc.set_threshold(*GC_THRESHOLDS)
        ends_without_teardown()
        stop_on_sigterm()
        # imported here, inside the `try`, for the same reason: loading it is interruptible
        from ankigen.cli.quick import answer

        answered = answer(sys.argv[1:])
        if answered is not None:
            leave(answered)
        # only when the quick path did not answer: click is most of what it loads
        from ankigen.cli.app import main as run
    except (KeyboardInterrupt, RuntimeError) as exc:
        if not from_an_interrupt(exc):
            raise
        # nothing was started or written yet; exit handlers are skipped so that a second
        # Ctrl-C has no traceback to print
        line, stopped_status = stopped()
        print(line, file=sys.stderr, flush=True)
        os._exit(stopped_status)
    try:
        run()
        status: object = 0
    except SystemExit as exc:
        status = exc.code
    finally:
        # the command is done (a Ctrl-C during it was handled); while Python tears down
        # it puts back the default SIGINT action, and a Ctrl-C then would kill the process
        # with status -2 and no message after a finished build; an ignored one stays so
        ignore_stops()
    leave(status)


def leave(status: object) -> NoReturn:
    """End the process as Python's own exit does, without tearing the interpreter down.

    Python's teardown frees every object, module by module, and collects once more:
    35 ms of a 0.2 s build with nothing to do, and nothing of it is seen outside the
    process. Exit handlers still run and the standard streams are still flushed; with
    another thread still running, a status Python would print, or a stream that cannot
    be flushed, Python exits its own way."""
    # not imported: no thread was started (a build with nothing to do starts none)
    threading = sys.modules.get("threading")
    alone = threading is None or threading.active_count() == 1
    if alone and (status is None or isinstance(status, int)):
        atexit._run_exitfuncs()
        try:
            for stream in (sys.stdout, sys.stderr):
                if stream is not None:  # None without a console (pythonw)
                    stream.flush()
        except (OSError, ValueError):
            pass  # Python's exit reports it
        else:
            os._exit(status or 0)
    raise SystemExit(status)
