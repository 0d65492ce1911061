"""Shell completion through click's own mechanism, asked as each shell asks it: the
environment variable `_ANKIGEN_COMPLETE` and the words typed so far, in a fresh
`ankigen` process (the console script's entry point)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.helpers import SRC


def complete(words: str, tmp_path: Path, *, shell: str = "bash") -> list[str]:
    """What `shell` offers after `ankigen WORDS` (the last word the one being typed), and
    then, on its own line, which command modules the completion loaded."""
    typed = ["ankigen", *words.split()]
    if words.endswith(" ") or not words:
        typed.append("")
    script = textwrap.dedent(
        """
        import atexit, sys
        atexit.register(lambda: print(
            "LOADED", *sorted(m for m in sys.modules if m.startswith("ankigen.cli.commands."))
        ))
        from ankigen.cli.entry import main
        sys.argv = ["ankigen"]
        main()
        """
    )
    env = dict(os.environ, PYTHONPATH=str(SRC), _ANKIGEN_COMPLETE=f"{shell}_complete")
    if shell == "fish":  # fish sends the word being typed itself, not its index
        env |= {"COMP_WORDS": " ".join(typed), "COMP_CWORD": typed[-1]}
    else:
        env |= {"COMP_WORDS": " ".join(typed), "COMP_CWORD": str(len(typed) - 1)}
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    return done.stdout.splitlines()


def offered(lines: list[str]) -> list[str]:
    """bash's `type,value` lines, without the loaded modules' line."""
    return [line.split(",", 1)[1] for line in lines if not line.startswith("LOADED")]


def test_command_names_complete_without_loading_any_command(tmp_path: Path) -> None:
    lines = complete("tr", tmp_path)
    assert offered(lines) == ["translate"]
    assert lines[-1] == "LOADED"  # no module of `commands/` was imported
    every = offered(complete("", tmp_path))
    assert "build" in every and "release-notes" in every and "lint" in every


def test_translate_to_offers_the_card_languages(tmp_path: Path) -> None:
    languages = offered(complete("translate physics --to ", tmp_path))
    assert {"en", "de", "yo", "ar"} <= set(languages)
    assert offered(complete("translate physics --to y", tmp_path)) == ["yo"]


def test_export_to_offers_the_writable_formats(tmp_path: Path) -> None:
    assert offered(complete("export bank.yaml --to ", tmp_path)) == ["gift", "moodle-xml", "csv"]
    assert offered(complete("export bank.yaml --to m", tmp_path)) == ["moodle-xml"]


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_zsh_and_fish_are_answered_too(shell: str, tmp_path: Path) -> None:
    lines = complete("export bank.yaml --to g", tmp_path, shell=shell)
    assert any("gift" in line for line in lines)
    assert not any("csv" in line for line in lines)


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_each_shell_gets_its_script(shell: str, tmp_path: Path) -> None:
    """The one line docs/ gives each shell evaluates this script."""
    env = dict(os.environ, PYTHONPATH=str(SRC), _ANKIGEN_COMPLETE=f"{shell}_source")
    done = subprocess.run(
        [sys.executable, "-m", "ankigen"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "_ANKIGEN_COMPLETE" in done.stdout
    assert f"{shell}_complete" in done.stdout
