"""A build with nothing to do is a replay of what the last build recorded: it answers
exactly as the build would while every file that build read or wrote is as it was, and
lets the build run as soon as one is not, or the record cannot be trusted."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import ankigen.bank.files
from ankigen.builder.replay import REPLAY_NAME, replayed, settled_banks
from ankigen.cli.quick import answer
from ankigen.core.secret import signed_record, verified_record
from tests.helpers import invoke, item, write_bank
from tests.support.images import line_art


@pytest.fixture
def recorded(project: Path, runner: CliRunner, settled: None) -> Path:
    """Two banks, an image and a project file, built by the command's quick path."""
    line_art(project / "media" / "ring.png")
    (project / "banks" / "ankigen.toml").write_text('deck = "{title}"\n', "utf-8")
    write_bank(project / "banks", "one", items=[item("a", image="ring.png", image_alt="r")])
    write_bank(project / "banks", "two")
    assert answer(["build"]) == 0
    assert (project / "out" / REPLAY_NAME).is_file()
    return project


def test_the_replay_prints_what_the_build_prints(
    recorded: Path, runner: CliRunner, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    for argv in (["build"], ["build", "--json"]):
        assert replayed("banks", "out", "json" if "--json" in argv else "plain") is not None
        assert answer(argv) == 0
        quick = capsys.readouterr()
        full = invoke(runner, *argv)
        assert (quick.out, quick.err) == (full.stdout, full.stderr)
        assert "wrote" not in quick.out


def _touch(path: Path) -> None:
    info = path.stat()
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000))


def _same_size_edit(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data.replace(b"Question one?", b"Question 1ne?"))


CHANGES: dict[str, Callable[[Path], object]] = {
    "a bank edited, same size": lambda root: _same_size_edit(root / "banks/two/en.yaml"),
    "a bank added": lambda root: write_bank(root / "banks", "three"),
    "a bank removed": lambda root: (root / "banks/two/en.yaml").unlink(),
    "a folder named like a bank": lambda root: (root / "banks/x.yaml").mkdir(),
    "a bank renamed": lambda root: (root / "banks/two/en.yaml").rename(root / "banks/two/en.yml"),
    "the lock edited": lambda root: (root / "banks/ankigen.lock").write_text(
        (root / "banks/ankigen.lock").read_text("utf-8") + "\n", "utf-8"
    ),
    "the lock removed": lambda root: (root / "banks/ankigen.lock").unlink(),
    "the project file edited": lambda root: (root / "banks/ankigen.toml").write_text(
        'deck = "Quiz::{title}"\n', "utf-8"
    ),
    "the project file removed": lambda root: (root / "banks/ankigen.toml").unlink(),
    "the image changed": lambda root: line_art(root / "media/ring.png", transparent=True),
    "the image removed": lambda root: (root / "media/ring.png").unlink(),
    "a package touched": lambda root: _touch(root / "out/two.en.apkg"),
    "a package removed": lambda root: (root / "out/two.en.apkg").unlink(),
    "the banks folder gone": lambda root: shutil.rmtree(root / "banks"),
}


@pytest.mark.parametrize("change", CHANGES, ids=list(CHANGES))
def test_any_change_to_what_the_build_read_or_wrote_runs_the_build(
    recorded: Path, change: str
) -> None:
    CHANGES[change](recorded)
    assert replayed("banks", "out", "plain") is None


def test_a_touched_bank_is_replayed(recorded: Path) -> None:
    """Its status changed, its bytes did not: hashing tells."""
    _touch(recorded / "banks/two/en.yaml")
    assert replayed("banks", "out", "plain") is not None


@pytest.mark.parametrize(
    "elsewhere",
    ["SOURCE_DATE_EPOCH", "working folder", "version"],
)
def test_what_else_decides_the_output_is_part_of_the_record(
    recorded: Path, monkeypatch: pytest.MonkeyPatch, elsewhere: str
) -> None:
    assert replayed("banks", "out", "plain") is not None
    if elsewhere == "SOURCE_DATE_EPOCH":
        monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000001")
    elif elsewhere == "working folder":
        (recorded / "sub").mkdir()
        os.symlink(recorded / "banks", recorded / "sub" / "banks")
        os.symlink(recorded / "out", recorded / "sub" / "out")
        monkeypatch.chdir(recorded / "sub")
    else:
        monkeypatch.setattr("ankigen.builder.replay.__version__", "0.0.0")
    assert replayed("banks", "out", "plain") is None


def test_a_record_not_made_with_this_users_key_is_not_replayed(
    recorded: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = recorded / "out" / REPLAY_NAME
    record = verified_record(path.read_bytes())
    assert record  # the test reads the record the build wrote
    path.write_bytes(signed_record(record))
    assert replayed("banks", "out", "plain") is not None  # as written with this user's key
    with monkeypatch.context() as elsewhere:
        elsewhere.setattr("ankigen.core.secret.cache_key", lambda: b"k" * 32)
        path.write_bytes(signed_record(record))
    assert replayed("banks", "out", "plain") is None
    path.write_bytes(b'{"mac": "0", "version": "0.1.0"}\n{}')
    assert replayed("banks", "out", "plain") is None


def test_a_bank_saved_while_the_build_reads_it_is_not_vouched_for(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The record holds the bytes the build took, not the file as it is when the build
    ends: a save in between makes the next build a real one."""
    bank = write_bank(project / "banks", "two")
    real = ankigen.bank.files.read_bank_file
    saved: list[Path] = []

    def save_after_reading(path: Path) -> bytes:
        data = real(path)
        if path == Path("banks/two/en.yaml") and not saved:
            saved.append(path)
            _same_size_edit(bank)
        return data

    with monkeypatch.context() as saving:
        saving.setattr(ankigen.bank.files, "read_bank_file", save_after_reading)
        assert answer(["build"]) == 0
    assert saved  # the save happened during the build
    capsys.readouterr()
    assert replayed("banks", "out", "plain") is None
    assert answer(["build"]) == 0
    assert "wrote out/two.en.apkg" in capsys.readouterr().out


def test_a_build_of_chosen_banks_records_nothing(project: Path) -> None:
    from ankigen import build

    write_bank(project / "banks", "one")
    bank = write_bank(project / "banks", "two")
    result = build(Path("banks"), Path("out"), bank_paths=[bank])
    assert result.watched is None
    assert not (project / "out" / REPLAY_NAME).exists()


def test_banks_a_replay_saw_settle_are_not_read_by_the_next_edit(
    project: Path, monkeypatch: pytest.MonkeyPatch, reads: list[str]
) -> None:
    """The first build after a checkout cannot know the banks by their statuses (they had
    not settled), nor can the build cache it writes; a build with nothing to do, replayed,
    sees them settle and records them, and the next edit reads only the bank it changed."""
    import ankigen.bank.folder

    monkeypatch.setattr(ankigen.bank.folder, "SETTLE_NS", 10**18)  # none settled yet
    write_bank(project / "banks", "one")
    write_bank(project / "banks", "two")
    assert answer(["build"]) == 0
    assert settled_banks("banks", "out") == {}
    monkeypatch.setattr(ankigen.bank.folder, "SETTLE_NS", 0)  # every one settled now
    assert answer(["build"]) == 0  # replayed: the banks hashed, their statuses recorded
    assert sorted(settled_banks("banks", "out")) == ["banks/one/en.yaml", "banks/two/en.yaml"]
    reads.clear()
    write_bank(project / "banks", "two", items=[item("one", question="Edited?"), item("two", 2)])
    assert answer(["build"]) == 0
    assert reads == ["two/en.yaml"]


def test_a_bank_whose_size_changed_is_not_read_to_be_sure(
    recorded: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bank whose recorded status holds another size has certainly changed: the build
    runs, and reads it then, not the replay to hash it first. One of the same size, as
    any edit that keeps the size, is hashed to tell."""
    import hashlib

    import ankigen.builder.replay

    hashed: list[int] = []
    real = hashlib.sha256

    def counting(data: bytes = b"") -> Any:
        hashed.append(len(data))
        return real(data)

    monkeypatch.setattr(ankigen.builder.replay.hashlib, "sha256", counting)
    bank = recorded / "banks" / "two" / "en.yaml"
    _same_size_edit(bank)
    assert replayed("banks", "out", "plain") is None
    assert hashed == [bank.stat().st_size]
    hashed.clear()
    bank.write_bytes(bank.read_bytes() + b"\n# longer\n")
    assert replayed("banks", "out", "plain") is None
    assert hashed == []
