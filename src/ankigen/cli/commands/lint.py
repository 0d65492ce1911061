"""`ankigen lint`: every problem in every bank, one line each."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ankigen.checks.run import lint as run_lint
from ankigen.cli.options import BANKS_ARGUMENT, MEDIA_OPTION
from ankigen.cli.output import lint_lines
from ankigen.cli.plain import write_lines


@click.command()
@BANKS_ARGUMENT
@click.option("--strict", is_flag=True, help="Fail on warnings too.")
@MEDIA_OPTION
def lint(banks: Path, strict: bool, media: Path | None) -> None:
    """Report every problem in every bank, one line each."""
    linted = run_lint(banks, media)
    write_lines(lint_lines(linted))
    if linted.fails(strict):
        sys.exit(1)
