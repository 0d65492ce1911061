"""The command line: a thin layer over the library."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ankigen import __version__

BANKS_HELP = "Folder of bank files (default: banks)."


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ankigen")
def cli() -> None:
    """Turn multiple-choice quiz banks into Anki decks."""


@cli.command()
@click.argument("banks", default="banks", type=click.Path(path_type=Path, file_okay=False))
@click.option(
    "-o",
    "--out",
    default="out",
    type=click.Path(path_type=Path, file_okay=False),
    help="Output folder (default: out).",
)
def build(banks: Path, out: Path) -> None:
    """Build one .apkg per bank in BANKS into OUT."""
    from ankigen.build import build as run_build

    result = run_build(banks, out)
    for warning in result.warnings:
        click.echo(str(warning), err=True)
    for deck in result.decks:
        click.echo(
            f"wrote {out / deck.path}: {deck.notes} notes "
            f"({deck.new} new, {deck.changed} changed, {deck.unchanged} unchanged, "
            f"{deck.removed} removed)"
        )


def main() -> None:
    try:
        cli.main(prog_name="ankigen", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("interrupted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(130)
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        click.echo(f"error: {where}{exc.strerror or exc}", err=True)
        sys.exit(1)
