"""What the commands do that needs no click: print their lines, show the build's counter,
report a failure, and `build` itself.

`ankigen build` in its plainest forms runs from here before click is loaded (`quick`):
loading click takes 15 to 40 ms, a tenth of a build after one edit. The command line's
`build` is this same function, so the two differ only in who read the arguments."""

from __future__ import annotations

import gc
import os
import signal
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

from ankigen.cli.output import Line, build_lines, media_line, progress_text
from ankigen.core.errors import AnkigenError


def write_lines(lines: Iterable[Line]) -> None:
    """Each line on its stream, as click's echo prints it. A line with an escape code, or
    with text its stream cannot encode, goes through click's echo itself, which strips
    the codes from a file and writes what ASCII cannot take as UTF-8."""
    for line in lines:
        stream = sys.stderr if line.to_stderr else sys.stdout
        if stream is not None and "\x1b" not in line.text and _encodes(line.text, stream):
            stream.write(line.text + "\n")
            stream.flush()
        else:
            import click

            click.echo(line.text, err=line.to_stderr)


def _encodes(text: str, stream: object) -> bool:
    encoding = getattr(stream, "encoding", None) or "utf-8"
    try:
        text.encode(encoding, getattr(stream, "errors", None) or "strict")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def terminal_progress() -> Callable[[int, int], None] | None:
    """A counter on standard error, only when it is a terminal."""
    if not sys.stderr.isatty():
        return None

    def show(done: int, total: int) -> None:
        sys.stderr.write(progress_text(done, total))
        sys.stderr.flush()

    return show


def build_command(
    banks: Path,
    out: Path,
    as_json: bool = False,
    media: Path | None = None,
    max_image_size: int = 1600,
    prune: bool = False,
) -> None:
    """`ankigen build`: check BANKS, write a package per bank into OUT, print the report."""
    from ankigen.bank.project import outside_project
    from ankigen.build.pipeline import build
    from ankigen.images.settings import Settings

    if media is not None and outside_project(banks, media):
        write_lines([media_line(media)])
    result = build(
        banks,
        out,
        progress=terminal_progress(),
        media_dir=media,
        image_settings=Settings(max_side=max_image_size),
        prune=prune,
    )
    write_lines(build_lines(result, out, as_json))


def failure_status(exc: Exception) -> int:
    """Report a command's failure on standard error and return its exit status: the
    library's errors with their message, the system's with its words, a bug as one."""
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
    write_lines([Line(message, True)])
    return status


def leave_interrupted() -> None:
    """Ctrl-C: one line and status 130, whatever the moment.

    Called once the interrupt's traceback is gone, so that the worker pool (already
    shut down on the way out) is garbage and its semaphores are released here, not
    reported by multiprocessing's resource tracker. Then the process leaves at once:
    Python's own shutdown can turn a Ctrl-C into death by SIGINT (status -2)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    gc.collect()
    write_lines([Line("interrupted", True)])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(130)
