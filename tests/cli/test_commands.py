"""The command line loads only the command that runs; `--help` lists every command as
click would, from the table in `cli.app`, without loading any."""

from __future__ import annotations

import inspect
import json

import click
import pytest

from ankigen.cli.app import COMMANDS, cli
from tests.helpers import run_probe


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_table_says_what_each_command_says(name: str) -> None:
    command = cli.get_command(click.Context(cli), name)
    assert command is not None and command.name == name
    first_paragraph = inspect.cleandoc(command.help or "").split("\n\n")[0].replace("\n", " ")
    assert COMMANDS[name][2] == first_paragraph


def test_help_lists_the_commands_as_click_would() -> None:
    class Eager(click.Group):
        """click's own listing, from the loaded commands."""

    eager = Eager(commands={name: cli.get_command(click.Context(cli), name) for name in COMMANDS})
    ours = click.Context(cli).get_help()
    theirs = click.Context(eager).get_help()
    assert ours.split("Commands:")[1] == theirs.split("Commands:")[1]


@pytest.mark.parametrize(("argv", "loaded"), [(["--help"], []), (["lint", "--help"], ["lint"])])
def test_only_the_command_that_runs_is_loaded(argv: list[str], loaded: list[str]) -> None:
    done = run_probe(
        f"""
import json, sys
from ankigen.cli.app import cli
try:
    cli.main({argv!r}, prog_name="ankigen")
except SystemExit:
    pass
print(json.dumps(sorted(m for m in sys.modules if m.startswith("ankigen.cli.commands."))))
"""
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.splitlines()[-1])
    assert found == [f"ankigen.cli.commands.{name}" for name in loaded]
