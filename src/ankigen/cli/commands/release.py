"""`ankigen release-notes`: what changed for learners since a git revision."""

from __future__ import annotations

from pathlib import Path

import click

from ankigen.cli.options import BANKS_ARGUMENT, FORCE_OPTION, output_option
from ankigen.cli.output import release_notes_lines
from ankigen.cli.plain import write_lines
from ankigen.releasenotes import write_release_notes


@click.command("release-notes")
@click.option("--since", "ref", required=True, help="The git revision of the last release.")
@BANKS_ARGUMENT
@output_option("the Markdown")
@FORCE_OPTION
def release_notes(ref: str, banks: Path, out: Path | None, force: bool) -> None:
    """What changed for learners since the git revision REF, deck by deck, in Markdown."""
    write_lines(release_notes_lines(out, write_release_notes(banks, ref, out, force)))
