"""`ankigen serve`: the live preview on 127.0.0.1."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import click

from ankigen.cli.options import BANKS_ARGUMENT, MEDIA_OPTION
from ankigen.core.errors import Diagnostic
from ankigen.serve import serve as run


@click.command()
@BANKS_ARGUMENT
@MEDIA_OPTION
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8000,
    show_default=True,
    help="Port on 127.0.0.1 (0: any free one).",
)
def serve(banks: Path, media: Path | None, port: int) -> None:
    """Serve a live preview on 127.0.0.1: every open page follows each save of a bank,
    the project file or an image. Writes nothing; Ctrl-C stops it."""

    def report(problems: tuple[Diagnostic, ...]) -> None:
        if problems:
            for problem in problems:
                click.echo(str(problem), err=True)
            click.echo(f"{len(problems)} problem(s); the pages keep the last good cards", err=True)
        else:
            click.echo("pages made", err=True)

    for serving in run(banks, media, port, report):
        click.echo(f"serving {serving.url} (Ctrl-C stops)")
        sys.stdout.flush()
        threading.Event().wait()  # until Ctrl-C
