"""The options that several commands share."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click

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
