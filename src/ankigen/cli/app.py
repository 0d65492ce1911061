"""The command line: a thin layer over the library."""

from __future__ import annotations

import gc
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ankigen import __version__
from ankigen.cli.output import count, warning_summary
from ankigen.core.errors import AnkigenError

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


FORCE_OPTION = click.option(
    "--force",
    is_flag=True,
    help="Replace an existing file that this command did not write from the same source.",
)


def output_option(what: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    return click.option(
        "-o",
        "--out",
        type=click.Path(path_type=Path, dir_okay=False, allow_dash=True),
        help=f"Write {what} here (- or none: standard output).",
    )


class Commands(click.Group):
    """The commands; the library's errors (`AnkigenError`) are shown here, as click shows
    its own: the message on standard error, then the error's exit status."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except AnkigenError as error:
            click.echo(error.format_message(), err=True)
            # not the error: its traceback would hold a build's worker pool
            raise click.exceptions.Exit(error.exit_code) from None


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
    from ankigen.build.pipeline import build as run_build
    from ankigen.cli.output import build_lines
    from ankigen.images.settings import Settings

    result = run_build(
        banks,
        out,
        progress=_terminal_progress(),
        media_dir=media,
        image_settings=Settings(max_side=max_image_size),
        prune=prune,
    )
    for line in build_lines(result, out, as_json):
        click.echo(line.text, err=line.to_stderr)


def _warning_summary(warnings: int) -> None:
    summary = warning_summary(warnings)
    if summary:
        click.echo(summary, err=True)


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
    from ankigen.bank.files import find_banks
    from ankigen.bank.project import load_project
    from ankigen.bank.workspace import default_media_dir
    from ankigen.checks.run import check_paths

    paths, unusable = find_banks(banks)
    project, problems = load_project(banks)
    media_dir = media or default_media_dir(banks, project)
    checked = check_paths(paths, media_dir, reference=project.reference)
    diagnostics = sorted([*problems, *checked.diagnostics, *unusable])
    for diagnostic in diagnostics:
        click.echo(str(diagnostic))
    errors = checked.errors + len(unusable) + len(problems)
    warnings = checked.warnings
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
    from ankigen.bank.model import outline
    from ankigen.bank.workspace import default_media_dir
    from ankigen.build.result import IMAGE_CACHE
    from ankigen.checks.run import checked_banks
    from ankigen.core.errors import InvalidBanks
    from ankigen.images.process import image_refs, prepare
    from ankigen.images.settings import Settings
    from ankigen.preview import write_preview
    from ankigen.translation.coverage import coverage, matrix_html

    checked = checked_banks(banks)
    images = prepare(
        image_refs(map(outline, checked.banks)),
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
    from ankigen.bank.project import require_project
    from ankigen.bank.workspace import find_bank_paths
    from ankigen.checks.run import check_paths
    from ankigen.translation.coverage import coverage, table

    reference = require_project(banks).reference
    click.echo(table(coverage(check_paths(find_bank_paths(banks), reference=reference))), nl=False)


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
    help="Folder of banks a PO file's translations go into (default: banks).",
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
) -> None:
    """Turn a quiz file (FILE) into a bank: a quiz page, GIFT, Aiken, Moodle XML or CSV;
    or write a PO file's translations (from `translate --po`) back into its bank."""
    from ankigen.bank.model import SLUG
    from ankigen.core.userfile import STDOUT, Target, write_all
    from ankigen.formats.bankyaml import loads_as_bank
    from ankigen.formats.convert import import_file
    from ankigen.formats.page import AnswersError
    from ankigen.text import lang

    if format_name == "po" or (format_name is None and file.suffix.lower() in (".po", ".pot")):
        _import_po(file, banks_dir, out, force)
        return
    if topic is None or language is None:
        raise click.UsageError("--topic and --lang are required to import a quiz file")
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
    if format_name is None:
        from ankigen.formats.convert import read_quiz_file
        from ankigen.formats.registry import detect

        fmt, chosen_by = detect(str(file), read_quiz_file(file))
        format_name = fmt.name
        click.echo(
            f"reading {file} as {format_name} (chosen by {chosen_by}; --from sets it)", err=True
        )
    try:
        imported = import_file(file, topic, language, format_name, choices, answers)
    except AnswersError as exc:
        raise click.BadParameter(str(exc), param_hint="--answers") from None
    source = imported.source
    for number, note in source.notes:
        click.echo(f"{file}:{number}: note: {note}", err=True)
    for diagnostic in imported.diagnostics:
        click.echo(str(diagnostic), err=True)
    out = out or Path(STDOUT)
    # an existing image is replaced only by the same bytes (and then left alone)
    images = [
        (Target(media / relative, "an image", force, (file,)), data)
        for relative, data in source.media
    ]
    bank = Target(out, "a bank", force, (file,), check=loads_as_bank(str(out), todos=True))
    written = write_all([*images, (bank, imported.bank.encode("utf-8"))])
    for (target, _), wrote in zip(images, written, strict=False):
        click.echo(f"{'wrote' if wrote else 'unchanged'} {target.path}", err=True)
    if not bank.is_stdout:
        todo = imported.bank.count("# TODO")
        more = f"; fill in the {todo} places marked TODO" if todo else ""
        click.echo(f"{'wrote' if written[-1] else 'unchanged'} {out}{more}", err=True)
    click.echo(f"{len(source.questions)} items imported, {source.skipped} skipped", err=True)


@cli.command()
@click.argument("bank", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.option("--to", "format_name", required=True, type=FormatName(writable=True))
@output_option("the export")
@FORCE_OPTION
@MEDIA_OPTION
def export(bank: Path, format_name: str, out: Path | None, force: bool, media: Path | None) -> None:
    """Write a bank (BANK, a .yaml file) as GIFT, Moodle XML or CSV."""
    from ankigen.bank.workspace import default_media_dir
    from ankigen.core.userfile import STDOUT, Target, write
    from ankigen.formats.convert import export_bank

    media_dir = media or default_media_dir(bank.resolve().parent.parent)
    exported = export_bank(bank, format_name, media_dir)
    for warning in exported.warnings:
        click.echo(str(warning), err=True)
    target = Target(out or Path(STDOUT), format_name, force, (bank,), ours=exported.ours)
    wrote = write(target, exported.data)
    if not target.is_stdout:
        done = "wrote" if wrote else "unchanged"
        click.echo(f"{done} {out}: {count(len(exported.source.questions), 'item')}", err=True)


@cli.command()
@BANKS_ARGUMENT
@out_option("out")
@click.option(
    "--url",
    default="http://127.0.0.1:8765",
    show_default=True,
    help="Where AnkiConnect listens.",
)
@click.option("--api-key", help="AnkiConnect's API key, if it is set up with one.")
@click.option("--all", "push_all", is_flag=True, help="Push every package, changed or not.")
@MEDIA_OPTION
def push(
    banks: Path,
    out: Path,
    url: str,
    api_key: str | None,
    push_all: bool,
    media: Path | None,
) -> None:
    """Build, then import each changed package into a running Anki (AnkiConnect)."""
    from ankigen.build.pipeline import build as run_build
    from ankigen.push import AnkiConnect, changed
    from ankigen.push import push as run_push

    client = AnkiConnect(url, api_key)
    version = client.version()
    result = run_build(banks, out, progress=_terminal_progress(), media_dir=media)
    _warning_summary(len(result.warnings))
    packages = [out / deck.path for deck in result.decks]
    todo = packages if push_all else changed(out, packages, url)
    click.echo(f"AnkiConnect {version} at {url}", err=True)
    for path in packages:
        if path not in todo:
            click.echo(f"unchanged since the last push: {path}")
    for pushed in run_push(client, out, todo):
        click.echo(f"pushed {pushed.path}: Anki replied {json_dumps(pushed.reply)}")
    click.echo(f"{count(len(todo), 'package')} pushed, {len(packages) - len(todo)} unchanged")


def json_dumps(value: object) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)


def _interrupted() -> None:
    """Ctrl-C: one line and status 130, whatever the moment.

    Called once the interrupt's traceback is gone, so that the worker pool (already
    shut down on the way out) is garbage and its semaphores are released here, not
    reported by multiprocessing's resource tracker. Then the process leaves at once:
    Python's own shutdown can turn a Ctrl-C into death by SIGINT (status -2)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    gc.collect()
    click.echo("interrupted", err=True)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(130)


def _import_po(file: Path, banks_dir: Path, out: Path | None, force: bool) -> None:
    from ankigen.bank.workspace import find_bank_paths
    from ankigen.core.userfile import Target, write
    from ankigen.formats.bankyaml import loads_as_bank
    from ankigen.translation.po import REFERENCE_HEADER, TOPIC_HEADER, import_po, read_po
    from ankigen.translation.start import reference_bank

    header = read_po(file).metadata
    topic = header.get(TOPIC_HEADER, "")
    reference, _ = reference_bank(find_bank_paths(banks_dir), topic, header.get(REFERENCE_HEADER))
    done = import_po(file, banks_dir, reference, out)
    for warning in done.warnings:
        click.echo(str(warning), err=True)
    # the bank is edited in place: replaced only while it holds what was read
    bank = Target(
        done.path, "a bank", force, (file,), edits=done.before, check=loads_as_bank(str(done.path))
    )
    wrote = write(bank, done.text.encode("utf-8"))
    if not bank.is_stdout:
        what = "wrote" if wrote else "unchanged"
        click.echo(f"{what} {done.path}: {count(done.translated, 'translation')} from {file}")


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
    from ankigen.bank.project import require_project
    from ankigen.bank.workspace import find_bank_paths
    from ankigen.core.userfile import Target, write
    from ankigen.formats.bankyaml import loads_as_bank
    from ankigen.text import lang
    from ankigen.translation.start import start

    if not lang.is_valid_tag(language):
        raise click.BadParameter(f"{language!r} is not a BCP 47 tag", param_hint="--to")
    paths = find_bank_paths(banks)
    reference_tag = require_project(banks).reference or None
    if po_path is not None:
        from ankigen.translation.po import write_po
        from ankigen.translation.start import load_target, reference_bank, refuse_reference

        reference, _ = reference_bank(paths, topic, reference_tag)
        code = refuse_reference(reference, language)
        target_path = banks / topic / f"{code}.yaml"
        target = load_target(target_path) if target_path.exists() else None
        done = write_po(reference, code, target, po_path, force=force, inputs=tuple(paths))
        if str(po_path) != "-":
            how = "merged into" if done.merged else "wrote"
            how = how if done.wrote else "unchanged"
            click.echo(f"{how} {po_path}: {done.texts} texts, {done.translated} translated")
        return
    started = start(banks, paths, topic, language, update=update, reference=reference_tag)
    if update and not started.added:
        click.echo(f"{started.path}: nothing to add")
        return
    bank = Target(
        started.path,
        "a bank",
        force,
        edits=started.before,
        check=loads_as_bank(str(started.path)),
    )
    write(bank, started.text.encode("utf-8"))
    click.echo(
        f"wrote {started.path}: {count(len(started.added), 'item')} "
        f"{'added' if update else 'to translate'} from {started.reference.path}"
    )


@cli.command("release-notes")
@click.option("--since", "ref", required=True, help="The git revision of the last release.")
@BANKS_ARGUMENT
@output_option("the Markdown")
@FORCE_OPTION
def release_notes(ref: str, banks: Path, out: Path | None, force: bool) -> None:
    """What changed for learners since the git revision REF, deck by deck, in Markdown."""
    from ankigen.bank.files import LOCK_NAME, PROJECT_NAME
    from ankigen.bank.workspace import find_bank_paths
    from ankigen.core.userfile import STDOUT, Target, write
    from ankigen.releasenotes import at_revision, mark, release_notes, working_tree

    paths = find_bank_paths(banks)
    first = mark(banks)
    text = release_notes(at_revision(banks, ref), working_tree(banks, paths), ref, first)
    inputs = (*paths, banks / LOCK_NAME, banks / PROJECT_NAME)
    notes = Target(
        out or Path(STDOUT),
        "release notes",
        force,
        inputs,
        ours=lambda before: before.split(b"\n", 1)[0] == first.encode("utf-8"),
    )
    wrote = write(notes, text.encode("utf-8"))
    if not notes.is_stdout:
        click.echo(f"{'wrote' if wrote else 'unchanged'} {out}", err=True)


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
    if isinstance(status, int) and status:
        sys.exit(status)
    if interrupted:
        # outside the `except`: the interrupt's traceback no longer holds the worker pool
        _interrupted()
