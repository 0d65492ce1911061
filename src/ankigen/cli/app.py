"""The command line: a thin layer over the library. Each command parses its options,
makes one library call and echoes the lines `output` words.

Each command is a module of `commands/`, loaded when it runs: `--help`, and every
command, load click and the one command's part of the library (the formats alone take
a tenth of a second). `COMMANDS` names each command's module and its one-line help, so
that `--help` lists them without loading any (`tests/cli/test_entry.py` checks the
lines against the commands' own)."""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click
import click.shell_completion

from ankigen.cli.plain import failure_status, leave_interrupted
from ankigen.core.errors import AnkigenError
from ankigen.core.process import from_an_interrupt
from ankigen.core.version import __version__

COMMANDS: dict[str, tuple[str, str, str]] = {
    "build": (
        "build",
        "build",
        "Build one .apkg per bank in BANKS into OUT.",
    ),
    "export": (
        "convert",
        "export",
        "Write a bank (BANK, a .yaml file) as GIFT, Moodle XML or CSV.",
    ),
    "import": (
        "convert",
        "import_",
        "Turn a quiz file (FILE) into a bank: a quiz page, GIFT, Aiken, Moodle XML or "
        "CSV; adopt a multiple-choice deck from an Anki package, its notes' GUIDs kept in"
        " the lock; or write a PO file's translations (from `translate --po`) back into "
        "its bank.",
    ),
    "lint": (
        "lint",
        "lint",
        "Report every problem in every bank, one line each.",
    ),
    "preview": (
        "preview",
        "preview",
        "Write an HTML page per deck showing every card, front and back.",
    ),
    "pull": (
        "roundtrip",
        "pull",
        "Bring the fixes made in Anki back into the banks. SOURCE is a package or "
        "collection exported from Anki (.apkg, .colpkg), or `anki` for a running Anki "
        "(AnkiConnect).",
    ),
    "push": (
        "roundtrip",
        "push",
        "Build, then import each changed package into a running Anki (AnkiConnect).",
    ),
    "release-notes": (
        "release",
        "release_notes",
        "What changed for learners since the git revision REF, deck by deck, in Markdown.",
    ),
    "schema": (
        "schema",
        "schema",
        "Print the JSON Schema (draft 2020-12) of a bank (`bank`) or of the project file, "
        "ankigen.toml (`project`).",
    ),
    "serve": (
        "serve",
        "serve",
        "Serve a live preview on 127.0.0.1: every open page follows each save of a bank, "
        "the project file or an image. Writes nothing; Ctrl-C stops it.",
    ),
    "status": (
        "status",
        "status",
        "Translation coverage of every topic in every language.",
    ),
    "translate": (
        "translate",
        "translate",
        "Start the translation of TOPIC into a language, from its reference bank.",
    ),
}
"""Command name -> its module in `commands/`, the command's name there, and the first
paragraph of its help, which `--help` shortens as click does."""


class Commands(click.Group):
    """The commands, each loaded when it runs; the library's errors (`AnkigenError`) are
    shown here, as click shows its own: the message on standard error, then the error's
    exit status."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        found = COMMANDS.get(cmd_name)
        if found is None:
            return None
        module, name, _ = found
        command = getattr(importlib.import_module(f"ankigen.cli.commands.{module}"), name)
        assert isinstance(command, click.Command)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands' lines as click words them, from `COMMANDS`: no command is loaded."""
        limit = formatter.width - 6 - max(map(len, COMMANDS))
        rows = [
            (name, click.Command(name, help=text).get_short_help_str(limit))
            for name, (_, _, text) in COMMANDS.items()
        ]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def shell_complete(
        self, ctx: click.Context, incomplete: str
    ) -> list[click.shell_completion.CompletionItem]:
        """The command names from `COMMANDS`, as click offers them, loading none: a
        completion runs at every Tab, and the formats alone take a tenth of a second."""
        limit = 45  # click's own default for a command's short help
        results = [
            click.shell_completion.CompletionItem(
                name, help=click.Command(name, help=text).get_short_help_str(limit)
            )
            for name, (_, _, text) in COMMANDS.items()
            if name.startswith(incomplete)
        ]
        # the group's own options (--help, --version), which click.Command completes
        results.extend(click.Command.shell_complete(self, ctx, incomplete))
        return results

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
        if not from_an_interrupt(exc):
            sys.exit(failure_status(exc))
        interrupted = True
    if isinstance(status, int) and status:
        sys.exit(status)
    if interrupted:
        # outside the `except`: the interrupt's traceback no longer holds the worker pool
        leave_interrupted()
