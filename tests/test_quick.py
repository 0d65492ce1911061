"""A build with nothing to do is answered before click is loaded, exactly as the command
line answers it; anything else is left to the command line."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ankigen.cli.quick import BuildArgs, answer, build_args
from tests.conftest import invoke
from tests.helpers import item, write_bank

SRC = Path(__file__).resolve().parents[1] / "src"


@pytest.fixture
def built(project: Path, runner: CliRunner, settled: None) -> Path:
    """Banks with a warning (Hindi, one item) and a deck whose bank is gone (standing)."""
    write_bank(project / "banks", "one", language="hi", items=[item("a")])
    write_bank(project / "banks", "two")
    gone = write_bank(project / "banks", "three")
    assert invoke(runner, "build").exit_code == 0
    gone.unlink()
    assert invoke(runner, "build").exit_code == 0
    return project


@pytest.mark.parametrize(
    "argv",
    [
        ["build"],
        ["build", "banks"],
        ["build", "-o", "out"],
        ["build", "-oout", "banks"],
        ["build", "--out=out", "--json"],
        ["build", "--json", "banks", "--out", "out"],
    ],
)
def test_answers_as_the_command_line_does(
    built: Path, runner: CliRunner, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    assert answer(argv) == 0
    quick = capsys.readouterr()
    full = invoke(runner, *argv)
    assert full.exit_code == 0
    assert (quick.out, quick.err) == (full.stdout, full.stderr)
    assert "1 warning in the banks" in quick.err
    assert "three" in quick.err  # the deck without a bank, every build
    assert "up to date" in quick.out or '"written": false' in quick.out


def test_the_command_answers_without_loading_click(built: Path) -> None:
    probe = (
        "import atexit, sys\n"
        "atexit.register(lambda: print('click' in sys.modules, file=sys.stderr))\n"
        "sys.argv = ['ankigen', 'build']\n"
        "from ankigen.cli.entry import main\n"
        "main()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.endswith("False\n")
    assert done.stdout.startswith("up to date out/one.hi.apkg: 1 note, version ")
    # the same probe on a form it leaves alone loads the command line
    changed = probe.replace("'build']", "'build', '--prune']")
    done = subprocess.run(
        [sys.executable, "-c", changed], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.endswith("True\n")


def test_a_changed_bank_is_left_to_the_command_line(
    built: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_bank(built / "banks", "two", items=[item("one"), item("two", 3)])
    assert None is answer(["build"])
    assert capsys.readouterr() == ("", "")


def test_a_bank_not_known_by_its_status_is_read_here(
    built: Path, runner: CliRunner, reads: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """The bank an author has just built is not known by its status (it had not settled):
    the build after it reads that bank, without the command line, and knows it from then
    on by its new status."""
    bank = built / "banks" / "two" / "en.yaml"
    os.utime(bank, ns=(bank.stat().st_atime_ns, bank.stat().st_mtime_ns + 1))
    reads.clear()
    assert answer(["build"]) == 0
    assert reads == ["two/en.yaml"]
    quick = capsys.readouterr()
    assert answer(["build"]) == 0
    assert reads == ["two/en.yaml"]  # known now
    assert capsys.readouterr() == quick
    full = invoke(runner, "build")
    assert (quick.out, quick.err) == (full.stdout, full.stderr)


def test_a_bank_whose_size_changed_is_left_unread_to_the_command_line(
    built: Path, runner: CliRunner, reads: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    write_bank(built / "banks", "two", items=[item("one"), item("two", 3), item("x")])
    reads.clear()
    assert None is answer(["build"])
    assert reads == []  # the command line reads it, once
    assert capsys.readouterr() == ("", "")
    built_now = invoke(runner, "build").stdout
    assert built_now.count("wrote ") == 1
    assert "wrote out/two.en.apkg: 3 notes (1 new, 1 changed, 1 unchanged" in built_now
    assert reads == ["two/en.yaml"]


def test_a_bank_changed_in_place_is_read_and_left_to_the_command_line(
    built: Path, runner: CliRunner, reads: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """Same size, new bytes: only reading tells, and then the command line builds it."""
    bank = built / "banks" / "two" / "en.yaml"
    text = bank.read_text(encoding="utf-8")
    bank.write_text(text.replace("Question two?", "Question 2wo?"), encoding="utf-8")
    assert len(bank.read_bytes()) == len(text.encode())
    reads.clear()
    assert None is answer(["build"])
    assert reads == ["two/en.yaml"]
    assert capsys.readouterr() == ("", "")
    built_now = invoke(runner, "build").stdout
    assert "wrote out/two.en.apkg: 2 notes (0 new, 1 changed, 1 unchanged" in built_now


@pytest.mark.parametrize(
    ("env", "argv"),
    [
        ({"SOURCE_DATE_EPOCH": "soon"}, ["build"]),
        ({}, ["build", "elsewhere"]),
        ({}, ["build", "banks/two/en.yaml"]),
        ({}, ["build", "-o", "banks/two/en.yaml"]),
        ({}, ["build", "-o", "nowhere"]),
    ],
)
def test_errors_are_left_to_the_command_line(
    built: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    env: dict[str, str],
    argv: list[str],
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert None is answer(argv)
    assert capsys.readouterr() == ("", "")


def test_text_the_stream_cannot_take_is_left_to_the_command_line(
    built: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """click's echo would replace what it cannot encode; the command line decides."""
    os.rename(built / "out", built / "ünï")
    monkeypatch.setattr(sys, "stderr", io.TextIOWrapper(io.BytesIO(), encoding="utf-8"))
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(io.BytesIO(), encoding="ascii"))
    assert None is answer(["build", "-o", "ünï"])
    assert sys.stdout.tell() == 0
    utf8 = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    monkeypatch.setattr(sys, "stdout", utf8)
    assert answer(["build", "-o", "ünï"]) == 0
    assert utf8.buffer.getvalue().decode().startswith("up to date ünï/one.hi.apkg")


class _ClosedPipe(io.StringIO):
    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


def test_a_closed_pipe_is_reported_as_the_command_line_reports_it(
    built: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdout", _ClosedPipe())
    assert answer(["build"]) == 1
    assert capsys.readouterr().err == (
        "1 warning in the banks; 'ankigen lint' lists them\n"
        "banks/ankigen.lock:13: warning: deck 'three.en' ('three quiz (en)') has no bank any "
        "more; it was last built from three/en.yaml: its entry stays in the lock so that "
        "restoring the bank keeps learners' history; if the deck is gone for good, run "
        "`ankigen build --prune`\n"
        "error: Broken pipe\n"
    )


@pytest.mark.parametrize(
    ("argv", "args"),
    [
        (["build"], BuildArgs(Path("banks"), Path("out"), False)),
        (["build", "b", "-o", "o", "--json"], BuildArgs(Path("b"), Path("o"), True)),
        (["build", "-o=o"], BuildArgs(Path("banks"), Path("=o"), False)),
        (["lint"], None),
        (["build", "--prune"], None),
        (["build", "--media", "m"], None),
        (["build", "a", "b"], None),
        (["build", "-o", "a", "-o", "b"], None),
        (["build", "-o"], None),
        (["build", "-o", "--json"], None),
        (["build", "--", "b"], None),
        (["build", "--json", "--json"], None),
        (["build", "--help"], None),
        (["build", ""], None),
        (["--version"], None),
        ([], None),
    ],
)
def test_only_the_plainest_forms_are_taken(argv: list[str], args: BuildArgs | None) -> None:
    assert build_args(argv) == args
