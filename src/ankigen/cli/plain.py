"""What the commands do that needs no click: print their lines, show the build's counter,
report a failure, leave on Ctrl-C. `ankigen build` in its plainest forms runs before
click is loaded (`quick`), and uses these as the command line does."""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable, Iterable

from ankigen.cli.output import Line, progress_text
from ankigen.cli.streams import plain_stream, write_plain
from ankigen.core.errors import AnkigenError, WorkerDied, printable
from ankigen.core.process import ignore_stops, stopped


def write_lines(lines: Iterable[Line]) -> None:
    """Each line on its stream, as click's echo prints it (`streams.plain_stream`)."""
    for line in lines:
        stream = plain_stream(line.text, line.to_stderr)
        if stream is not None:
            write_plain(stream, line.text)
        else:
            import click  # only for a line that needs it: a plain build prints without click

            click.echo(line.text, err=line.to_stderr)


def terminal_progress() -> Callable[[int, int], None] | None:
    """A counter on standard error, only when it is a terminal."""
    if not sys.stderr.isatty():
        return None

    def show(done: int, total: int) -> None:
        sys.stderr.write(progress_text(done, total))
        sys.stderr.flush()

    return show


def failure_status(exc: Exception) -> int:
    """Report a command's failure on standard error and return its exit status: the
    library's errors with their message, the system's with its words, a bug as one."""
    # a spawned pool's worker that ended: its module is loaded if a pool was made
    broken = getattr(sys.modules.get("concurrent.futures.process"), "BrokenProcessPool", ())
    if isinstance(exc, broken):
        exc = WorkerDied()
    if isinstance(exc, AnkigenError):
        message, status = exc.format_message(), exc.exit_code
    elif isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        message, status = f"error: {where}{exc.strerror or exc}", 1
    else:
        if os.environ.get("ANKIGEN_DEBUG"):
            raise exc
        message, status = (
            (
                f"error: internal error ({type(exc).__name__}: {exc}); this is a bug in ankigen, "
                "please report it (ANKIGEN_DEBUG=1 shows the traceback)"
            ),
            1,
        )
    # each of its lines printable: a path quoted in it may hold an escape sequence
    write_lines([Line("\n".join(map(printable, message.split("\n"))), True)])
    return status


def leave_interrupted() -> None:
    """Ctrl-C: one line and status 130 (SIGTERM: 143), whatever the moment.

    Called once the interrupt's traceback is gone, so that the worker pool (already
    shut down on the way out) is garbage and its semaphores are released here, not
    reported by multiprocessing's resource tracker. Then the process leaves at once:
    Python's own shutdown can turn a Ctrl-C into death by SIGINT (status -2)."""
    ignore_stops()
    gc.collect()
    line, status = stopped()
    write_lines([Line(line, True)])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
