"""`ankigen import` and `ankigen export`: quiz files, Anki packages and PO files into
banks, banks out to other formats."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click
import click.shell_completion

from ankigen.bank.model import SLUG
from ankigen.bank.workspace import default_media_dir
from ankigen.cli.options import FORCE_OPTION, MEDIA_OPTION, output_option
from ankigen.cli.output import detected_line, export_lines, import_lines, po_import_lines
from ankigen.cli.plain import write_lines
from ankigen.formats import registry as formats
from ankigen.formats.ankifields import parse_fields
from ankigen.formats.convert import export_to, import_file, read_quiz_file, write_import
from ankigen.formats.csv import COLUMNS
from ankigen.formats.model import FormatError
from ankigen.formats.page import AnswersError
from ankigen.text import lang
from ankigen.translation.po import import_po_file

if TYPE_CHECKING:
    _TextParam = click.ParamType[str]  # generic in newer click only
else:
    _TextParam = click.ParamType


class FormatName(_TextParam):
    """A format name from the registry."""

    name = "format"

    def __init__(self, writable: bool) -> None:
        self.writable = writable

    def names(self) -> list[str]:
        # po writes translations into an existing bank, so it is not one of the formats
        return formats.writable() if self.writable else [*formats.names(), "po"]

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "[" + "|".join(self.names()) + "]"

    def shell_complete(
        self, ctx: click.Context, param: click.Parameter, incomplete: str
    ) -> list[click.shell_completion.CompletionItem]:
        return [
            click.shell_completion.CompletionItem(name)
            for name in self.names()
            if name.startswith(incomplete)
        ]

    def convert(self, value: str, param: click.Parameter | None, ctx: click.Context | None) -> str:
        names = self.names()
        if value not in names:
            self.fail(f"{value!r} is not one of {', '.join(map(repr, names))}.", param, ctx)
        return value


@click.command("import")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.option(
    "--from",
    "format_name",
    type=FormatName(writable=False),
    help="The file's format (default: chosen from its extension and content); "
    "po: a gettext PO file from `translate --po`, written back into its bank.",
)
@click.option("--topic", help="Topic slug of the new bank, such as fsdp (not for po).")
@click.option("--lang", "language", help="BCP 47 language tag, such as bn (not for po).")
@click.option(
    "--banks",
    "banks_dir",
    default="banks",
    type=click.Path(path_type=Path, file_okay=False),
    help="Folder of banks a PO file's translations, or an adopted deck, go into (default: banks).",
)
@output_option("the bank")
@click.option(
    "--force",
    is_flag=True,
    help="Replace an existing file that this command did not write from the same source; "
    "po: write its texts even where the bank's changed since the PO file was made.",
)
@click.option(
    "--media",
    type=click.Path(path_type=Path, file_okay=False),
    default="media",
    show_default=True,
    help="Media folder that embedded images are written into (under TOPIC/).",
)
@click.option(
    "--choices",
    type=click.IntRange(2, 8),
    help="Pages: choices per question, when a '- ' list cannot be grouped by itself.",
)
@click.option(
    "--answers", help="Pages: correct choice per question, in order: 1,3,2 (1+3 for several)."
)
@click.option(
    "--columns",
    "column_specs",
    multiple=True,
    metavar="HEADER=COLUMN,...",
    help="CSV: read a column under another header, such as 'Answer 1=choice1' "
    "('Notes=' ignores one); repeat it for headers with commas.",
)
@click.option("--deck", default="", help="Anki packages: the deck to adopt, of several.")
@click.option(
    "--fields",
    "field_spec",
    default="",
    metavar="ROLE=FIELD,...",
    help="Anki packages: which field holds what, such as "
    "'question=Front,choices=Q_1..Q_5,answer=Answers,explanation=Back'.",
)
@click.option(
    "--notetype",
    type=click.Choice(["keep", "ankigen"]),
    default=None,
    help="Anki packages: keep the deck's own note type, drawn with ankigen's card, so "
    "learners' notes update with their history (default); or move to ankigen's note type, "
    "which Anki imports only with 'Merge note types'.",
)
def import_(
    file: Path,
    format_name: str | None,
    topic: str | None,
    language: str | None,
    banks_dir: Path,
    out: Path | None,
    force: bool,
    media: Path,
    choices: int | None,
    answers: str | None,
    column_specs: tuple[str, ...],
    deck: str,
    field_spec: str,
    notetype: str | None,
) -> None:
    """Turn a quiz file (FILE) into a bank: a quiz page, GIFT, Aiken, Moodle XML or CSV;
    adopt a multiple-choice deck from an Anki package, its notes' GUIDs kept in the
    lock; or write a PO file's translations (from `translate --po`) back into its bank."""
    if format_name == "po" or (format_name is None and file.suffix.lower() in (".po", ".pot")):
        _import_po(file, banks_dir, out, force)
        return
    if topic is None or language is None:
        raise click.UsageError("--topic and --lang are required to import a quiz file")
    _check_quiz_options(topic, language, format_name, choices, answers)
    columns = _columns(column_specs)
    if format_name is None:
        fmt, chosen_by = formats.detect(str(file), read_quiz_file(file))
        format_name = fmt.name
        write_lines([detected_line(file, format_name, chosen_by)])
    if columns and format_name != "csv":
        raise click.UsageError(f"--columns is for CSV files, not {format_name}")
    if (deck or field_spec or notetype) and format_name != "apkg":
        raise click.UsageError(
            f"--deck, --fields and --notetype are for Anki packages, not {format_name}"
        )
    fields = _fields(field_spec)
    try:
        imported = import_file(
            file,
            topic,
            language,
            format_name,
            choices,
            answers,
            columns,
            deck,
            fields,
            keep_notetype=notetype != "ankigen",
        )
    except AnswersError as exc:
        raise click.BadParameter(str(exc), param_hint="--answers") from None
    written = write_import(imported, file, out, media, force=force, banks_dir=banks_dir)
    write_lines(import_lines(file, written))


def _check_quiz_options(
    topic: str, language: str, format_name: str | None, choices: int | None, answers: str | None
) -> None:
    """Usage errors in the options of a quiz file's import, before it is read."""
    if not SLUG.fullmatch(topic):
        raise click.BadParameter(
            f"{topic!r} is not a slug (a-z, 0-9 and '-')", param_hint="--topic"
        )
    if not lang.is_valid_tag(language):
        raise click.BadParameter(f"{language!r} is not a BCP 47 tag", param_hint="--lang")
    if format_name not in (None, "page"):
        for name, value in (("--choices", choices), ("--answers", answers)):
            if value is not None:
                raise click.UsageError(f"{name} is for quiz pages, not --from {format_name}")


def _fields(field_spec: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """`--fields` as (role, fields) pairs; a usage error names a bad one."""
    if not field_spec:
        return ()
    try:
        return tuple(parse_fields(field_spec).items())
    except FormatError as error:
        raise click.BadParameter(str(error), param_hint="--fields") from None


def _columns(specs: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """`--columns` values as (header, column) pairs; a usage error names a bad one. A
    comma before a pair's `=` belongs to its header ("Time limit (sec) - 5, 10=")."""

    def pair(text: str) -> tuple[str, str]:
        header, equals, column = text.partition("=")
        column = column.strip().lower()
        if not equals or not header.strip():
            raise click.BadParameter(f"{text!r} is not HEADER=COLUMN", param_hint="--columns")
        if column and column not in COLUMNS:
            raise click.BadParameter(
                f"{column!r} is not a column; the columns are {', '.join(COLUMNS)}",
                param_hint="--columns",
            )
        return header.strip(), column

    pairs = []
    for spec in specs:
        pending = ""
        for piece in spec.split(","):
            pending = f"{pending},{piece}" if pending else piece
            if "=" in piece:
                pairs.append(pair(pending))
                pending = ""
        if pending.strip():
            pairs.append(pair(pending))
    return tuple(pairs)


@click.command()
@click.argument("bank", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.option("--to", "format_name", required=True, type=FormatName(writable=True))
@output_option("the export")
@FORCE_OPTION
@MEDIA_OPTION
def export(bank: Path, format_name: str, out: Path | None, force: bool, media: Path | None) -> None:
    """Write a bank (BANK, a .yaml file) as GIFT, Moodle XML or CSV."""
    media_dir = media or default_media_dir(bank.resolve().parent.parent)
    write_lines(export_lines(export_to(bank, format_name, out, media_dir, force)))


def _import_po(file: Path, banks_dir: Path, out: Path | None, force: bool) -> None:
    write_lines(po_import_lines(file, import_po_file(file, banks_dir, out, force)))
