"""`ankigen build` in every form the quick path leaves to click (`cli.quick`)."""

from __future__ import annotations

from pathlib import Path

import click

from ankigen.cli.building import build_command
from ankigen.cli.options import BANKS_ARGUMENT, MEDIA_OPTION, out_option


@click.command()
@BANKS_ARGUMENT
@out_option("out")
@click.option("--json", "as_json", is_flag=True, help="Print the change report as JSON.")
@MEDIA_OPTION
@click.option(
    "--max-image-size",
    type=click.IntRange(16, 10000),
    default=1600,
    show_default=True,
    help="Longest side of images in the packages, in pixels.",
)
@click.option(
    "--prune",
    is_flag=True,
    help="Forget the lock entries (and packages) of decks whose bank is gone.",
)
def build(
    banks: Path, out: Path, as_json: bool, media: Path | None, max_image_size: int, prune: bool
) -> None:
    """Build one .apkg per bank in BANKS into OUT."""
    build_command(banks, out, as_json, media, max_image_size, prune)
