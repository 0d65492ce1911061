"""`ankigen preview`: an HTML page per deck, every card front and back."""

from __future__ import annotations

from pathlib import Path

import click

from ankigen.cli.options import BANKS_ARGUMENT, MEDIA_OPTION, out_option
from ankigen.cli.output import preview_lines
from ankigen.cli.plain import write_lines
from ankigen.preview.pages import make_preview


@click.command()
@BANKS_ARGUMENT
@out_option("out/preview")
@MEDIA_OPTION
def preview(banks: Path, out: Path, media: Path | None) -> None:
    """Write an HTML page per deck showing every card, front and back."""
    write_lines(preview_lines(make_preview(banks, out, media)))
