"""`ankigen translate`: a topic into a new language, as a bank or a PO file."""

from __future__ import annotations

from pathlib import Path

import click
import click.shell_completion

from ankigen.cli.options import BANKS_ARGUMENT, FORCE_OPTION
from ankigen.cli.output import po_export_lines, translate_lines
from ankigen.cli.plain import write_lines
from ankigen.text import l10n, lang
from ankigen.translation.po import export_po
from ankigen.translation.start import write_translation


def _card_languages(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[click.shell_completion.CompletionItem]:
    """The languages the card's own words are in: any BCP 47 tag is taken, these are the
    ones whose cards need no English fallback."""
    return [
        click.shell_completion.CompletionItem(code, help=l10n.language_name(code))
        for code in l10n.card_words()
        if code.startswith(incomplete)
    ]


@click.command()
@click.argument("topic")
@BANKS_ARGUMENT
@click.option(
    "--to",
    "language",
    required=True,
    help="BCP 47 tag of the new language.",
    shell_complete=_card_languages,
)
@click.option("--update", is_flag=True, help="Add the items the translation lacks, nothing else.")
@click.option(
    "--po",
    "po_path",
    type=click.Path(path_type=Path, dir_okay=False, allow_dash=True),
    help="Write a gettext PO file for translation platforms instead of a bank "
    "(merged into the file if it is there).",
)
@FORCE_OPTION
def translate(
    topic: str, banks: Path, language: str, update: bool, po_path: Path | None, force: bool
) -> None:
    """Start the translation of TOPIC into a language, from its reference bank."""
    if not lang.is_valid_tag(language):
        raise click.BadParameter(f"{language!r} is not a BCP 47 tag", param_hint="--to")
    if po_path is not None:
        write_lines(po_export_lines(po_path, export_po(banks, topic, language, po_path, force)))
        return
    started = write_translation(banks, topic, language, update=update, force=force)
    write_lines(translate_lines(started, update))
