"""The options that several commands share, and how every command prints its lines."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from pathlib import Path

import click

from ankigen.cli.output import Line, progress_text

BANKS_ARGUMENT = click.argument(
    "banks", default="banks", type=click.Path(path_type=Path, file_okay=False)
)


def out_option(default: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    return click.option(
        "-o",
        "--out",
        default=default,
        type=click.Path(path_type=Path, file_okay=False),
        help=f"Output folder (default: {default}).",
    )


MEDIA_OPTION = click.option(
    "--media",
    type=click.Path(path_type=Path, file_okay=False),
    help="Folder that image paths are relative to (default: media beside BANKS).",
)


FORCE_OPTION = click.option(
    "--force",
    is_flag=True,
    help="Replace an existing file that this command did not write from the same source.",
)


def output_option(what: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    return click.option(
        "-o",
        "--out",
        type=click.Path(path_type=Path, dir_okay=False, allow_dash=True),
        help=f"Write {what} here (- or none: standard output).",
    )


def echo(lines: Iterable[Line]) -> None:
    for line in lines:
        click.echo(line.text, err=line.to_stderr)


def terminal_progress() -> Callable[[int, int], None] | None:
    """A counter on standard error, only when it is a terminal."""
    if not sys.stderr.isatty():
        return None

    def show(done: int, total: int) -> None:
        click.echo(progress_text(done, total), err=True, nl=False)

    return show
