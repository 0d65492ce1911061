"""The commands that talk to Anki's side: `push` hands packages to a running Anki, `pull`
brings the fixes made in Anki back into the banks."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ankigen.ankiconnect import AnkiConnect
from ankigen.builder.pipeline import build as run_build
from ankigen.cli.options import BANKS_ARGUMENT, MEDIA_OPTION, out_option
from ankigen.cli.output import connected_line, pull_lines, push_lines, warning_lines
from ankigen.cli.plain import terminal_progress, write_lines
from ankigen.collection.exported import read_exported
from ankigen.pull.connected import from_anki
from ankigen.pull.pull import PullError, Take, plan_pull, write_pulled
from ankigen.push import push_changed

URL_OPTION = click.option(
    "--url",
    default="http://127.0.0.1:8765",
    show_default=True,
    help="Where AnkiConnect listens.",
)
API_KEY_OPTION = click.option("--api-key", help="AnkiConnect's API key, if it is set up with one.")


@click.command()
@BANKS_ARGUMENT
@out_option("out")
@URL_OPTION
@API_KEY_OPTION
@click.option("--all", "push_all", is_flag=True, help="Push every package, changed or not.")
@click.option(
    "--allow-remote",
    is_flag=True,
    help="Push to an AnkiConnect on another machine (it is sent the API key and paths).",
)
@MEDIA_OPTION
def push(
    banks: Path,
    out: Path,
    url: str,
    api_key: str | None,
    push_all: bool,
    allow_remote: bool,
    media: Path | None,
) -> None:
    """Build, then import each changed package into a running Anki (AnkiConnect)."""
    client = AnkiConnect(url, api_key, allow_remote)
    version = client.version()
    result = run_build(banks, out, progress=terminal_progress(), media_dir=media)
    write_lines(warning_lines(len(result.warnings)))
    packages = [out / deck.path for deck in result.decks]
    write_lines([connected_line(version, client.url)])
    write_lines(push_lines(push_changed(client, out, packages, push_all)))


@click.command()
@click.argument("source")
@BANKS_ARGUMENT
@click.option(
    "--take",
    multiple=True,
    metavar="SIDE[:ITEM]",
    help="Settle conflicts: anki or bank for every item, anki:ITEM or bank:ITEM for one "
    "(repeatable).",
)
@click.option("--dry-run", is_flag=True, help="Print the changes as a diff; write nothing.")
@out_option("out")
@URL_OPTION
@API_KEY_OPTION
@MEDIA_OPTION
def pull(
    source: str,
    banks: Path,
    take: tuple[str, ...],
    dry_run: bool,
    out: Path,
    url: str,
    api_key: str | None,
    media: Path | None,
) -> None:
    """Bring the fixes made in Anki back into the banks. SOURCE is a package or collection
    exported from Anki (.apkg, .colpkg), or `anki` for a running Anki (AnkiConnect)."""
    try:
        chosen = Take.parse(take)
    except PullError as error:  # how the option is written: a usage error, status 2
        said = str(error).removeprefix("--take ")
        raise click.BadParameter(said, param_hint="'--take'") from None
    missing: list[str] = []
    unseen: dict[str, int] = {}
    if source == "anki":
        client = AnkiConnect(url, api_key)
        write_lines([connected_line(client.version(), client.url)])
        found = from_anki(client, banks)
        sources, missing, unseen = found.exported, found.missing, found.unseen
    else:
        sources = [read_exported(Path(source))]
    pulled = plan_pull(banks, sources, chosen, out, media)
    if dry_run:
        click.echo(pulled.diff(), nl=False)
        write_lines(pull_lines(pulled, None, missing, unseen))
    else:
        wrote = write_pulled(pulled) if not pulled.conflicts else None
        write_lines(pull_lines(pulled, wrote, missing, unseen))
    if pulled.conflicts:
        sys.exit(1)
