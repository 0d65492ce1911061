"""The command line: a thin layer over the library. Each command parses its options,
makes one library call and echoes the lines `output` words.

Each command imports its part of the library in its body: `--help`, and every other
command, load click and nothing more (the formats alone take a tenth of a second)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ankigen import __version__
from ankigen.cli.options import (
    BANKS_ARGUMENT,
    FORCE_OPTION,
    MEDIA_OPTION,
    out_option,
    output_option,
)
from ankigen.cli.output import (
    detected_line,
    export_lines,
    import_lines,
    lint_lines,
    po_export_lines,
    po_import_lines,
    preview_lines,
    release_notes_lines,
    translate_lines,
)
from ankigen.cli.plain import build_command, failure_status, leave_interrupted, write_lines
from ankigen.cli.roundtrip import pull, push
from ankigen.core.errors import AnkigenError, Diagnostic


class Commands(click.Group):
    """The commands; the library's errors (`AnkigenError`) are shown here, as click shows
    its own: the message on standard error, then the error's exit status."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except AnkigenError as error:
            # not the error: its traceback would hold a build's worker pool
            raise click.exceptions.Exit(failure_status(error)) from None


@click.group(cls=Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ankigen")
def cli() -> None:
    """Turn multiple-choice quiz banks into Anki decks."""


@cli.command()
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


@cli.command()
@BANKS_ARGUMENT
@click.option("--strict", is_flag=True, help="Fail on warnings too.")
@MEDIA_OPTION
def lint(banks: Path, strict: bool, media: Path | None) -> None:
    """Report every problem in every bank, one line each."""
    from ankigen.checks.run import lint as run_lint

    linted = run_lint(banks, media)
    write_lines(lint_lines(linted))
    if linted.fails(strict):
        sys.exit(1)


@cli.command()
@BANKS_ARGUMENT
@out_option("out/preview")
@MEDIA_OPTION
def preview(banks: Path, out: Path, media: Path | None) -> None:
    """Write an HTML page per deck showing every card, front and back."""
    from ankigen.preview.pages import make_preview

    write_lines(preview_lines(make_preview(banks, out, media)))


@cli.command()
@BANKS_ARGUMENT
@MEDIA_OPTION
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8000,
    show_default=True,
    help="Port on 127.0.0.1 (0: any free one).",
)
def serve(banks: Path, media: Path | None, port: int) -> None:
    """Serve a live preview on 127.0.0.1: every open page follows each save of a bank,
    the project file or an image. Writes nothing; Ctrl-C stops it."""
    import threading

    from ankigen.serve import serve as run

    def report(problems: tuple[Diagnostic, ...]) -> None:
        if problems:
            for problem in problems:
                click.echo(str(problem), err=True)
            click.echo(f"{len(problems)} problem(s); the pages keep the last good cards", err=True)
        else:
            click.echo("pages made", err=True)

    for serving in run(banks, media, port, report):
        click.echo(f"serving {serving.url} (Ctrl-C stops)")
        sys.stdout.flush()
        threading.Event().wait()  # until Ctrl-C


@cli.command()
@BANKS_ARGUMENT
def status(banks: Path) -> None:
    """Translation coverage of every topic in every language."""
    from ankigen.translation.coverage import status as coverage_table

    click.echo(coverage_table(banks), nl=False)


if TYPE_CHECKING:
    _TextParam = click.ParamType[str]  # generic in newer click only
else:
    _TextParam = click.ParamType


class FormatName(_TextParam):
    """A format name from the registry, which is read only when a value is checked or help
    is shown: importing every format at start-up would slow down every command."""

    name = "format"

    def __init__(self, writable: bool) -> None:
        self.writable = writable

    def names(self) -> list[str]:
        from ankigen.formats import registry as formats

        # po writes translations into an existing bank, so it is not one of the formats
        return formats.writable() if self.writable else [*formats.names(), "po"]

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "[" + "|".join(self.names()) + "]"

    def convert(self, value: str, param: click.Parameter | None, ctx: click.Context | None) -> str:
        names = self.names()
        if value not in names:
            self.fail(f"{value!r} is not one of {', '.join(map(repr, names))}.", param, ctx)
        return value


@cli.command("import")
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
@FORCE_OPTION
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
    from ankigen.formats.convert import import_file, write_import
    from ankigen.formats.page import AnswersError

    if format_name == "po" or (format_name is None and file.suffix.lower() in (".po", ".pot")):
        _import_po(file, banks_dir, out, force)
        return
    if topic is None or language is None:
        raise click.UsageError("--topic and --lang are required to import a quiz file")
    _check_quiz_options(topic, language, format_name, choices, answers)
    columns = _columns(column_specs)
    if format_name is None:
        from ankigen.formats.convert import read_quiz_file
        from ankigen.formats.registry import detect

        fmt, chosen_by = detect(str(file), read_quiz_file(file))
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
    from ankigen.bank.model import SLUG
    from ankigen.text import lang

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
    from ankigen.formats.ankifields import parse_fields
    from ankigen.formats.model import FormatError

    try:
        return tuple(parse_fields(field_spec).items())
    except FormatError as error:
        raise click.BadParameter(str(error), param_hint="--fields") from None


def _columns(specs: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """`--columns` values as (header, column) pairs; a usage error names a bad one. A
    comma before a pair's `=` belongs to its header ("Time limit (sec) - 5, 10=")."""
    from ankigen.formats.csv import COLUMNS

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


@cli.command()
@click.argument("bank", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.option("--to", "format_name", required=True, type=FormatName(writable=True))
@output_option("the export")
@FORCE_OPTION
@MEDIA_OPTION
def export(bank: Path, format_name: str, out: Path | None, force: bool, media: Path | None) -> None:
    """Write a bank (BANK, a .yaml file) as GIFT, Moodle XML or CSV."""
    from ankigen.bank.workspace import default_media_dir
    from ankigen.formats.convert import export_to

    media_dir = media or default_media_dir(bank.resolve().parent.parent)
    write_lines(export_lines(export_to(bank, format_name, out, media_dir, force)))


cli.add_command(push)
cli.add_command(pull)


def _import_po(file: Path, banks_dir: Path, out: Path | None, force: bool) -> None:
    from ankigen.translation.po import import_po_file

    write_lines(po_import_lines(file, import_po_file(file, banks_dir, out, force)))


@cli.command()
@click.argument("topic")
@BANKS_ARGUMENT
@click.option("--to", "language", required=True, help="BCP 47 tag of the new language.")
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
    from ankigen.text import lang

    if not lang.is_valid_tag(language):
        raise click.BadParameter(f"{language!r} is not a BCP 47 tag", param_hint="--to")
    if po_path is not None:
        from ankigen.translation.po import export_po

        write_lines(po_export_lines(po_path, export_po(banks, topic, language, po_path, force)))
        return
    from ankigen.translation.start import write_translation

    started = write_translation(banks, topic, language, update=update, force=force)
    write_lines(translate_lines(started, update))


@cli.command("release-notes")
@click.option("--since", "ref", required=True, help="The git revision of the last release.")
@BANKS_ARGUMENT
@output_option("the Markdown")
@FORCE_OPTION
def release_notes(ref: str, banks: Path, out: Path | None, force: bool) -> None:
    """What changed for learners since the git revision REF, deck by deck, in Markdown."""
    from ankigen.releasenotes import write_release_notes

    write_lines(release_notes_lines(out, write_release_notes(banks, ref, out, force)))


def main() -> None:
    interrupted = False
    status: object = None
    try:
        # not standalone, click returns an exit status (`Commands`) rather than exiting
        # with it; no command returns anything else
        status = cli.main(prog_name="ankigen", standalone_mode=False)
    except (click.exceptions.Abort, KeyboardInterrupt):
        interrupted = True
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except Exception as exc:  # the system's errors, and bugs: said plainly
        sys.exit(failure_status(exc))
    if isinstance(status, int) and status:
        sys.exit(status)
    if interrupted:
        # outside the `except`: the interrupt's traceback no longer holds the worker pool
        leave_interrupted()
