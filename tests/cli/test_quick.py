"""`ankigen build` and `ankigen build --json` run before click is loaded, exactly as the
command line runs them: with nothing to do, with changes, with errors. Any other form is
left to the command line, which alone parses arguments."""

from __future__ import annotations

import io
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from ankigen.bank.folder import status_of
from ankigen.builder.replay import REPLAY_NAME
from ankigen.cli.output import Line
from ankigen.cli.plain import write_lines
from ankigen.cli.quick import PLAIN_FORMS, answer
from ankigen.core.secret import verified_record
from tests.helpers import invoke, item, run_probe, write_bank


def make_built(root: Path, runner: CliRunner) -> None:
    """Banks with a warning (Hindi, one item) and a deck whose bank is gone (standing)."""
    write_bank(root / "banks", "one", language="hi", items=[item("a")])
    write_bank(root / "banks", "two")
    gone = write_bank(root / "banks", "three")
    assert invoke(runner, "build").exit_code == 0
    gone.unlink()
    assert invoke(runner, "build").exit_code == 0


@pytest.fixture
def built(project: Path, runner: CliRunner, settled: None) -> Path:
    make_built(project, runner)
    return project


@pytest.fixture
def twins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runner: CliRunner, settled: None
) -> dict[str, Path]:
    """The `built` project twice, built alike: one for `answer`, one for the command line."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    made = {}
    for name in ("quick", "click"):
        root = tmp_path / name / "project"
        (root / "banks").mkdir(parents=True)
        monkeypatch.chdir(root)
        make_built(root, runner)
        made[name] = root
    return made


def both(
    twins: dict[str, Path],
    runner: CliRunner,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    change: Callable[[Path], object],
    argv: list[str],
) -> tuple[int | None, str, str]:
    """The same change made to each twin, then `answer` in one and the command line in the
    other: what `answer` did, which must be what the command line did, files included."""
    monkeypatch.chdir(twins["quick"])
    change(twins["quick"])
    capsys.readouterr()
    status = answer(argv)
    quick = capsys.readouterr()
    monkeypatch.chdir(twins["click"])
    change(twins["click"])
    full = invoke(runner, *argv)
    assert (status, quick.out, quick.err) == (full.exit_code, full.stdout, full.stderr)
    assert packages(twins["quick"]) == packages(twins["click"])
    return status, quick.out, quick.err


def packages(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.apkg"))}


@pytest.mark.parametrize("argv", [["build"], ["build", "--json"]])
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


def test_the_command_builds_without_loading_click(built: Path) -> None:
    probe = (
        "import atexit, sys\n"
        "atexit.register(lambda: print('click' in sys.modules, file=sys.stderr))\n"
        "sys.argv = ['ankigen', 'build']\n"
        "from ankigen.cli.entry import main\n"
        "main()\n"
    )
    done = run_probe(probe)
    assert done.returncode == 0, done.stderr
    assert done.stderr.endswith("False\n")
    assert done.stdout.startswith("up to date out/one.hi.apkg: 1 note, version ")
    # and a build with something to do
    write_bank(built / "banks", "two", items=[item("one"), item("two", 3)])
    done = run_probe(probe)
    assert done.returncode == 0, done.stderr
    assert done.stderr.endswith("False\n")
    assert "wrote out/two.en.apkg: 2 notes (0 new, 1 changed, 1 unchanged" in done.stdout
    # the same probe on a form it leaves alone loads the command line
    changed = probe.replace("'build']", "'build', '--prune']")
    done = run_probe(changed)
    assert done.returncode == 0, done.stderr
    assert done.stderr.endswith("True\n")


def test_a_changed_bank_is_built_as_the_command_line_builds_it(
    twins: dict[str, Path],
    runner: CliRunner,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def change(root: Path) -> None:
        write_bank(root / "banks", "two", items=[item("one"), item("two", 3)])

    status, out, err = both(twins, runner, capsys, monkeypatch, change, ["build"])
    assert status == 0
    assert "wrote out/two.en.apkg: 2 notes (0 new, 1 changed, 1 unchanged" in out
    assert "up to date out/one.hi.apkg" in out and "1 warning in the banks" in err


def test_a_bank_not_known_by_its_status_is_replayed_and_known_from_then_on(
    built: Path, runner: CliRunner, reads: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """A bank whose status changed but not its bytes (a `touch`, a checkout of the same
    text): the replay hashes it, answers without the build, and records its new status,
    so the next replay need not read it."""
    bank = built / "banks" / "two" / "en.yaml"
    os.utime(bank, ns=(bank.stat().st_atime_ns, bank.stat().st_mtime_ns + 1))
    reads.clear()
    assert answer(["build"]) == 0
    assert reads == []  # the build did not run
    quick = capsys.readouterr()
    entry = _replay_entry(built, "banks/two/en.yaml")
    assert entry[1] == list(status_of(bank.stat()))  # known by its new status now
    assert answer(["build"]) == 0
    assert capsys.readouterr() == quick
    full = invoke(runner, "build")
    assert (quick.out, quick.err) == (full.stdout, full.stderr)


def _replay_entry(root: Path, path: str) -> list[object]:
    record = verified_record((root / "out" / REPLAY_NAME).read_bytes())
    files = record["files"]
    assert isinstance(files, list)
    return next(entry for entry in files if entry[0] == path)


def test_a_bank_whose_size_changed_is_read_once(
    built: Path, reads: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """Its status tells that it changed: it is read by the build alone."""
    write_bank(built / "banks", "two", items=[item("one"), item("two", 3), item("x")])
    reads.clear()
    assert answer(["build"]) == 0
    assert reads == ["two/en.yaml"]
    built_now = capsys.readouterr().out
    assert built_now.count("wrote ") == 1
    assert "wrote out/two.en.apkg: 3 notes (1 new, 1 changed, 1 unchanged" in built_now


def test_a_bank_changed_in_place_is_read_and_built(
    built: Path, reads: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """Same size, new bytes: only reading tells (the replay hashes it), and the build
    then reads it."""
    bank = built / "banks" / "two" / "en.yaml"
    text = bank.read_text(encoding="utf-8")
    bank.write_text(text.replace("Question two?", "Question 2wo?"), encoding="utf-8")
    assert len(bank.read_bytes()) == len(text.encode())
    reads.clear()
    assert answer(["build"]) == 0
    assert reads == ["two/en.yaml"]
    built_now = capsys.readouterr().out
    assert "wrote out/two.en.apkg: 2 notes (0 new, 1 changed, 1 unchanged" in built_now


def broken(root: Path) -> None:
    (root / "banks" / "two" / "en.yaml").write_text("topic: two\nitems: [\n", encoding="utf-8")


@pytest.mark.parametrize(
    ("env", "change", "argv", "status"),
    [
        ({"SOURCE_DATE_EPOCH": "soon"}, None, ["build"], 1),
        ({}, lambda root: shutil.rmtree(root / "banks"), ["build"], 1),
        ({}, broken, ["build"], 1),
        ({}, broken, ["build", "--json"], 1),
    ],
)
def test_errors_are_reported_as_the_command_line_reports_them(
    twins: dict[str, Path],
    runner: CliRunner,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    env: dict[str, str],
    change: Callable[[Path], object] | None,
    argv: list[str],
    status: int,
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    done = both(twins, runner, capsys, monkeypatch, change or (lambda root: None), argv)
    assert done[0] == status
    if status:
        assert ("error: " in done[2] or ": error: " in done[2]) and not done[1]


def test_what_click_refuses_is_left_to_it(built: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (built / "out").rename(built / "elsewhere")
    (built / "out").write_text("a file where OUT should be", encoding="utf-8")
    assert None is answer(["build"])
    assert capsys.readouterr() == ("", "")


def test_text_the_stream_cannot_take_goes_through_clicks_echo(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """click's echo writes what an ASCII stream cannot take as UTF-8; so does `answer`."""
    ascii_out = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    monkeypatch.setattr(sys, "stdout", ascii_out)
    write_lines([Line("up to date ünï/one.hi.apkg")])
    ascii_out.flush()
    assert ascii_out.buffer.getvalue().decode() == "up to date ünï/one.hi.apkg\n"


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
    "argv",
    [
        ["build", "b"],
        ["build", "-o", "o", "--json"],
        ["build", "-o=o"],
        ["build", "--json", "--json"],
        ["build", "--prune"],
        ["build", "--media", "m"],
        ["build", "--help"],
        ["build", ""],
        ["lint"],
        ["--version"],
        [],
    ],
)
def test_every_other_form_is_the_command_lines(
    built: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    assert tuple(argv) not in PLAIN_FORMS
    assert answer(argv) is None
    assert capsys.readouterr() == ("", "")


def test_a_form_with_arguments_still_builds_through_the_command_line(
    built: Path, runner: CliRunner
) -> None:
    done = invoke(runner, "build", "banks", "-o", "out", "--json")
    assert done.exit_code == 0 and '"written": false' in done.stdout
