"""`ankigen lint`: every problem in every bank, one line each."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ankigen.checks.run import lint as run_lint
from ankigen.cli.lintreport import FORMATS, github_lines, json_lines, sarif_lines
from ankigen.cli.options import BANKS_ARGUMENT, MEDIA_OPTION
from ankigen.cli.output import lint_lines
from ankigen.cli.plain import write_lines

WORDED = {"text": lint_lines, "json": json_lines, "github": github_lines, "sarif": sarif_lines}


@click.command()
@BANKS_ARGUMENT
@click.option("--strict", is_flag=True, help="Fail on warnings too.")
@MEDIA_OPTION
@click.option(
    "--format",
    "format_name",
    type=click.Choice(FORMATS),
    default="text",
    show_default=True,
    help="text for people; json, github (workflow commands: annotations) or sarif "
    "(2.1.0, for code scanning), each problem with its rule id.",
)
def lint(banks: Path, strict: bool, media: Path | None, format_name: str) -> None:
    """Report every problem in every bank, one line each."""
    linted = run_lint(banks, media)
    write_lines(WORDED[format_name](linted))
    if linted.fails(strict):
        sys.exit(1)
