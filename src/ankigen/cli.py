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


@cli.command()
@click.argument("banks", default="banks", type=click.Path(path_type=Path, file_okay=False))
@click.option(
    "-o",
    "--out",
    default="out/preview",
    type=click.Path(path_type=Path, file_okay=False),
    help="Output folder (default: out/preview).",
)
def preview(banks: Path, out: Path) -> None:
    """Write an HTML page per deck showing every card, front and back."""
    from ankigen.build import checked_banks
    from ankigen.preview import write_preview

    loaded, warnings = checked_banks(banks)
    for warning in warnings:
        click.echo(str(warning), err=True)
    for path in write_preview(loaded, out):
        click.echo(f"wrote {path}")


@cli.command("import")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.option("--topic", required=True, help="Topic slug of the new bank, such as fsdp.")
@click.option("--lang", "language", required=True, help="BCP 47 language tag, such as bn.")
@click.option(
    "-o",
    "--out",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write the bank here instead of to standard output.",
)
@click.option(
    "--choices",
    type=click.IntRange(2, 8),
    help="Choices per question, when a '- ' list page cannot be grouped by itself.",
)
@click.option(
    "--answers", help="Correct choice per question, in order: 1,3,2 (use 1+3 for several)."
)
def import_(
    file: Path,
    topic: str,
    language: str,
    out: Path | None,
    choices: int | None,
    answers: str | None,
) -> None:
    """Turn the text of a quiz page (FILE) into a bank."""
    from ankigen import lang, quiztext
    from ankigen.bank import SLUG
    from ankigen.package import write_atomic

    if not SLUG.fullmatch(topic):
        raise click.BadParameter(
            f"{topic!r} is not a slug (a-z, 0-9 and '-')", param_hint="--topic"
        )
    if not lang.is_valid_tag(language):
        raise click.BadParameter(f"{language!r} is not a BCP 47 tag", param_hint="--lang")
    text = quiztext.decode_page(str(file), file.read_bytes())
    page = quiztext.parse_page(text, str(file), choices)
    picks = None
    if answers is not None:
        try:
            picks = quiztext.parse_answers(answers, page)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--answers") from None
    for number, line in page.dropped:
        click.echo(f"{file}:{number}: note: dropped page text: {line}", err=True)
    for number, note in page.notes:
        click.echo(f"{file}:{number}: warning: {note}", err=True)
    bank = quiztext.bank_yaml(page, topic, lang.canonical_tag(language), picks)
    if out is None:
        click.echo(bank, nl=False)
    else:
        write_atomic(out, bank.encode("utf-8"))
        todo = "explanations" if picks else "answers and explanations"
        click.echo(
            f"wrote {out}: {len(page.items)} items; fill in the {todo} marked TODO", err=True
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
