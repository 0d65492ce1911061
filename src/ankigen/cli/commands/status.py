"""`ankigen status`: translation coverage of every topic in every language."""

from __future__ import annotations

from pathlib import Path

import click

from ankigen.cli.options import BANKS_ARGUMENT
from ankigen.translation.coverage import status as coverage_table


@click.command()
@BANKS_ARGUMENT
def status(banks: Path) -> None:
    """Translation coverage of every topic in every language."""
    click.echo(coverage_table(banks), nl=False)
