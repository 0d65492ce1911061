"""The command line: a thin layer over the library."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

import click

from ankigen import __version__

BANKS_ARGUMENT = click.argument(
    "banks", default="banks", type=click.Path(path_type=Path, file_okay=False)
)


def out_option(default: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    return click.option(
        "-o",
        "--out",
        default=default,
        type=click.Path(path_type=Path, file_okay=False),
        help=f"Output folder (default: {default}).",
    )


MEDIA_OPTION = click.option(
    "--media",
    type=click.Path(path_type=Path, file_okay=False),
    help="Folder that image paths are relative to (default: media beside BANKS).",
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
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
def build(banks: Path, out: Path, as_json: bool, media: Path | None, max_image_size: int) -> None:
    """Build one .apkg per bank in BANKS into OUT."""
    import json

    from ankigen.build import build as run_build
    from ankigen.media import Settings

    result = run_build(
        banks,
        out,
        progress=_terminal_progress(),
        media_dir=media,
        image_settings=Settings(max_side=max_image_size),
    )
    _warning_summary(len(result.warnings))
    for change in result.changes:
        click.echo(str(change), err=True)
    if as_json:
        decks = [d.as_json() | {"path": str(out / d.path)} for d in result.decks]
        click.echo(json.dumps({"decks": decks}, indent=1))
        return
    for deck in result.decks:
        if not deck.written:
            click.echo(
                f"up to date {out / deck.path}: {_count(deck.notes, 'note')}, "
                f"version {deck.version}"
            )
            continue
        retired = f", {deck.retired} retired" if deck.retired else ""
        click.echo(
            f"wrote {out / deck.path}: {_count(deck.notes, 'note')} "
            f"({deck.new} new, {deck.changed} changed, {deck.unchanged} unchanged, "
            f"{deck.removed} removed{retired}), version {deck.version}"
        )


def _count(number: int, word: str) -> str:
    return f"{number} {word}{'' if number == 1 else 's'}"


def _warning_summary(count: int) -> None:
    if count:
        plural = "s" if count != 1 else ""
        click.echo(f"{count} warning{plural} in the banks; 'ankigen lint' lists them", err=True)


def _terminal_progress() -> Callable[[int, int], None] | None:
    """A counter on standard error, only when it is a terminal."""
    if not sys.stderr.isatty():
        return None

    def show(done: int, total: int) -> None:
        end = "\r\033[K" if done == total else ""
        click.echo(f"\rbuilding {done}/{total} decks{end}", err=True, nl=False)

    return show


@cli.command()
@BANKS_ARGUMENT
@click.option("--strict", is_flag=True, help="Fail on warnings too.")
@MEDIA_OPTION
def lint(banks: Path, strict: bool, media: Path | None) -> None:
    """Report every problem in every bank, one line each."""
    from ankigen.build import default_media_dir, find_banks
    from ankigen.lint import check_paths
    from ankigen.project import load_project

    paths = find_banks(banks)
    project, problems = load_project(banks)
    checked = check_paths(paths, media or default_media_dir(banks), reference=project.reference)
    for diagnostic in sorted([*problems, *checked.diagnostics]):
        click.echo(str(diagnostic))
    errors, warnings = checked.errors + len(problems), checked.warnings
    click.echo(
        f"{errors} error{'s' if errors != 1 else ''}, "
        f"{warnings} warning{'s' if warnings != 1 else ''} in {len(paths)} "
        f"bank{'s' if len(paths) != 1 else ''}"
    )
    if errors or (strict and warnings):
        sys.exit(1)


@cli.command()
@BANKS_ARGUMENT
@out_option("out/preview")
@MEDIA_OPTION
def preview(banks: Path, out: Path, media: Path | None) -> None:
    """Write an HTML page per deck showing every card, front and back."""
    from ankigen.build import IMAGE_CACHE, checked_banks, default_media_dir
    from ankigen.errors import InvalidBanks
    from ankigen.media import Settings, image_refs, prepare
    from ankigen.preview import write_preview
    from ankigen.status import coverage, matrix_html

    checked = checked_banks(banks)
    images = prepare(
        image_refs(checked.banks),
        media or default_media_dir(banks),
        Settings(),
        cache_dir=out / IMAGE_CACHE,
    )
    if images.diagnostics:
        raise InvalidBanks(checked.diagnostics + images.diagnostics)
    _warning_summary(checked.warnings)
    for path in write_preview(checked.banks, out, matrix_html(coverage(checked)), images):
        click.echo(f"wrote {path}")


@cli.command()
@BANKS_ARGUMENT
def status(banks: Path) -> None:
    """Translation coverage of every topic in every language."""
    from ankigen.build import find_banks
    from ankigen.lint import check_paths
    from ankigen.project import require_project
    from ankigen.status import coverage, table

    reference = require_project(banks).reference
    click.echo(table(coverage(check_paths(find_banks(banks), reference=reference))), nl=False)


@cli.command("import")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.option(
    "--from",
    "source_format",
    type=click.Choice(["page", "po"]),
    default="page",
    show_default=True,
    help="page: the text of a quiz page; po: a gettext PO file from `translate --po`.",
)
@click.option("--topic", help="Topic slug of the new bank, such as fsdp (page).")
@click.option("--lang", "language", help="BCP 47 language tag, such as bn (page).")
@click.option(
    "--banks",
    "banks_dir",
    default="banks",
    type=click.Path(path_type=Path, file_okay=False),
    help="Folder of banks a PO file's translations go into (default: banks).",
)
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
    source_format: str,
    topic: str | None,
    language: str | None,
    banks_dir: Path,
    out: Path | None,
    choices: int | None,
    answers: str | None,
) -> None:
    """Turn the text of a quiz page (FILE) into a bank, or a PO file's translations into one."""
    from ankigen import lang, quiztext
    from ankigen.bank import SLUG
    from ankigen.package import write_atomic

    if source_format == "po":
        _import_po(file, banks_dir, out)
        return
    if topic is None or language is None:
        raise click.UsageError("--topic and --lang are required to import a quiz page")
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


def _import_po(file: Path, banks_dir: Path, out: Path | None) -> None:
    from ankigen.build import find_banks
    from ankigen.package import write_atomic
    from ankigen.po import REFERENCE_HEADER, TOPIC_HEADER, import_po, read_po
    from ankigen.translate import reference_bank

    header = read_po(file).metadata
    topic = header.get(TOPIC_HEADER, "")
    reference, _ = reference_bank(find_banks(banks_dir), topic, header.get(REFERENCE_HEADER))
    done = import_po(file, banks_dir, reference, out)
    for warning in done.warnings:
        click.echo(str(warning), err=True)
    write_atomic(done.path, done.text.encode("utf-8"))
    click.echo(f"wrote {done.path}: {_count(done.translated, 'translation')} from {file}")


@cli.command()
@click.argument("topic")
@BANKS_ARGUMENT
@click.option("--to", "language", required=True, help="BCP 47 tag of the new language.")
@click.option("--update", is_flag=True, help="Add the items the translation lacks, nothing else.")
@click.option(
    "--po",
    "po_path",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write a gettext PO file for translation platforms instead of a bank.",
)
def translate(topic: str, banks: Path, language: str, update: bool, po_path: Path | None) -> None:
    """Start the translation of TOPIC into a language, from its reference bank."""
    from ankigen import lang
    from ankigen.build import find_banks
    from ankigen.package import write_atomic
    from ankigen.project import require_project

    if not lang.is_valid_tag(language):
        raise click.BadParameter(f"{language!r} is not a BCP 47 tag", param_hint="--to")
    paths = find_banks(banks)
    if po_path is not None:
        from ankigen.po import write_po
        from ankigen.translate import load_target, reference_bank

        reference, _ = reference_bank(paths, topic, require_project(banks).reference or None)
        code = lang.canonical_tag(language)
        target_path = banks / topic / f"{code}.yaml"
        target = load_target(target_path) if target_path.exists() else None
        translated = write_po(reference, code, target, po_path)
        total = sum(1 for _ in _po_entries(po_path))
        click.echo(f"wrote {po_path}: {total} texts, {translated} translated")
        return
    from ankigen.translate import start

    reference_tag = require_project(banks).reference or None
    started = start(banks, paths, topic, language, update=update, reference=reference_tag)
    if update and not started.added:
        click.echo(f"{started.path}: nothing to add")
        return
    started.path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(started.path, started.text.encode("utf-8"))
    click.echo(
        f"wrote {started.path}: {_count(len(started.added), 'item')} "
        f"{'added' if update else 'to translate'} from {started.reference.path}"
    )


@cli.command("release-notes")
@click.option("--since", "ref", required=True, help="The git revision of the last release.")
@BANKS_ARGUMENT
@click.option(
    "-o",
    "--out",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write the Markdown here instead of to standard output.",
)
def release_notes(ref: str, banks: Path, out: Path | None) -> None:
    """What changed for learners since the git revision REF, deck by deck, in Markdown."""
    from ankigen.build import find_banks
    from ankigen.package import write_atomic
    from ankigen.releasenotes import at_revision, release_notes, working_tree

    text = release_notes(at_revision(banks, ref), working_tree(banks, find_banks(banks)), ref)
    if out is None:
        click.echo(text, nl=False)
    else:
        write_atomic(out, text.encode("utf-8"))
        click.echo(f"wrote {out}", err=True)


def _po_entries(path: Path) -> list[object]:
    from ankigen.po import read_po

    return list(read_po(path))


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
    except Exception as exc:  # a bug, not bad input: say so plainly
        if os.environ.get("ANKIGEN_DEBUG"):
            raise
        click.echo(
            f"error: internal error ({type(exc).__name__}: {exc}); this is a bug in ankigen, "
            "please report it (ANKIGEN_DEBUG=1 shows the traceback)",
            err=True,
        )
        sys.exit(1)
