"""A build knows a bank it read before by its file's status, as git's index does: only a
bank whose status changed is read again, and no change to a bank's bytes goes unseen."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

import ankigen.bank.folder
from ankigen.bank.files import Source, parse_known
from ankigen.builder.replay import REPLAY_NAME
from ankigen.core.secret import signed_record, verified_record
from tests.helpers import (
    invoke,
    item,
    read_build_cache,
    without_versions,
    write_bank,
    write_build_cache,
)


def build(runner: CliRunner) -> str:
    result = invoke(runner, "build")
    assert result.exit_code == 0, result.output
    return without_versions(result.stdout)


def recorded(project: Path) -> dict[str, object]:
    cache = read_build_cache(project / "out" / ".ankigen-cache.json")
    banks = cache["banks"]
    assert isinstance(banks, dict)
    return banks


def test_only_the_bank_whose_status_changed_is_read(
    project: Path, runner: CliRunner, reads: list[str], settled: None
) -> None:
    write_bank(project / "banks", "demo", "en")
    german = write_bank(project / "banks", "demo", "de")
    build(runner)
    assert sorted(reads) == ["demo/de.yaml", "demo/en.yaml"]
    assert sorted(recorded(project)) == ["banks/demo/de.yaml", "banks/demo/en.yaml"]
    reads.clear()
    assert build(runner).startswith("up to date out/demo.de.apkg")
    assert reads == []  # nothing changed, nothing read
    write_bank(project / "banks", "demo", "de", items=[item("one"), item("two", 3)])
    assert german.stat().st_size == (project / "banks/demo/en.yaml").stat().st_size
    assert build(runner) == (
        "wrote out/demo.de.apkg: 2 notes (0 new, 1 changed, 1 unchanged, 0 removed)\n"
        "up to date out/demo.en.apkg: 2 notes\n"
    )
    assert reads == ["demo/de.yaml"]


def test_a_bank_rewritten_with_its_old_size_and_time_is_read_again(
    project: Path, runner: CliRunner, reads: list[str], settled: None
) -> None:
    """A tool that sets the modification time back (an archive, `touch -d`) still changes
    the file's change time, which no one can set."""
    bank = write_bank(project / "banks", "demo", "en")
    build(runner)
    before = bank.stat()
    bank.write_bytes(bank.read_bytes().replace(b"answer: 2", b"answer: 3"))
    os.utime(bank, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = bank.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    reads.clear()
    assert build(runner) == (
        "wrote out/demo.en.apkg: 2 notes (0 new, 1 changed, 1 unchanged, 0 removed)\n"
    )
    assert reads == ["demo/en.yaml"]


def test_a_status_too_recent_vouches_for_nothing(
    project: Path, runner: CliRunner, reads: list[str]
) -> None:
    """A second write within the file system's timestamp step would leave the status as
    it was: a bank written in the last seconds is read by every build."""
    write_bank(project / "banks", "demo", "en")
    build(runner)
    assert recorded(project) == {}
    reads.clear()
    build(runner)
    assert reads == ["demo/en.yaml"]


def test_a_bank_known_by_status_without_its_cache_entry_is_read(
    project: Path, runner: CliRunner, reads: list[str], settled: None
) -> None:
    write_bank(project / "banks", "demo", "en")
    write_bank(project / "banks", "demo", "de")
    build(runner)
    english = (project / "out" / "demo.en.apkg").read_bytes()
    for entry in (project / "out" / ".ankigen-banks").iterdir():
        entry.unlink()
    write_bank(project / "banks", "demo", "de", items=[item("one"), item("two", 3)])
    reads.clear()
    assert build(runner).endswith("up to date out/demo.en.apkg: 2 notes\n")
    assert sorted(reads) == ["demo/de.yaml", "demo/en.yaml"]
    assert (project / "out" / "demo.en.apkg").read_bytes() == english


def test_a_bank_whose_bytes_are_not_the_ones_vouched_for_is_taken_as_read(
    tmp_path: Path,
) -> None:
    path = tmp_path / "en.yaml"
    path.write_bytes(b"topic: other\n")
    old = hashlib.sha256(b"topic: demo\n").hexdigest()
    status = (12, 1, 2, 3, 4)
    source = Source(path, b"", old, signature=status, unread=True, size=12)
    source.read()
    assert (source.data, source.unread, source.signature) == (b"topic: other\n", False, None)
    assert source.digest == hashlib.sha256(b"topic: other\n").hexdigest()
    vouched = Source(path, b"", source.digest, signature=status, unread=True, size=13)
    vouched.read()
    assert (vouched.digest, vouched.signature) == (source.digest, status)


@pytest.mark.parametrize(
    "record",
    [
        None,
        [],
        {"banks/demo/en.yaml": [1, 2, 3, 4, 5]},
        {"banks/demo/en.yaml": [1, 2, 3, 4, 5.0, "ab"]},
        {"banks/demo/en.yaml": [1, 2, 3, 4, True, "ab"]},
        {"banks/demo/en.yaml": "ab"},
        {"banks/demo/en.yaml": [1, 2, 3, 4, 5, 6]},
    ],
)
def test_a_record_of_another_shape_is_ignored(record: object) -> None:
    assert parse_known(record) == {}


@pytest.mark.parametrize("damaged", ["build cache", "replay record"])
def test_a_damaged_record_costs_a_read_not_a_wrong_build(
    project: Path, runner: CliRunner, reads: list[str], settled: None, damaged: str
) -> None:
    """A record that gives the bank's status with a digest of other bytes, as no ankigen
    writes it: no cache entry has that digest, so the bank is read, and its bytes decide.
    Both records know the banks by their statuses (the replay's those that settled since
    the build): the other one is left without them."""
    bank = write_bank(project / "banks", "demo", "en")
    build(runner)
    package = (project / "out" / "demo.en.apkg").read_bytes()
    cache_path, replay_path = project / "out" / ".ankigen-cache.json", project / "out" / REPLAY_NAME
    if damaged == "build cache":
        cache = read_build_cache(cache_path)
        status = cache["banks"]["banks/demo/en.yaml"][:5]
        cache["banks"]["banks/demo/en.yaml"] = [*status, "0" * 64]
        write_build_cache(cache_path, cache)
        replay_path.unlink()
    else:
        record = verified_record(replay_path.read_bytes())
        [entry] = [f for f in record["files"] if f[0] == "banks/demo/en.yaml"]  # type: ignore[attr-defined]
        entry[2] = "0" * 64
        replay_path.write_bytes(signed_record(record))
        cache = read_build_cache(cache_path)
        cache["banks"] = {}
        write_build_cache(cache_path, cache)
    reads.clear()
    assert build(runner) == "up to date out/demo.en.apkg: 2 notes\n"
    assert reads == ["demo/en.yaml"]
    assert (project / "out" / "demo.en.apkg").read_bytes() == package
    digest = hashlib.sha256(bank.read_bytes()).hexdigest()
    assert recorded(project).get("banks/demo/en.yaml", [digest])[-1] == digest


def test_a_build_with_nothing_changed_records_the_statuses_settled_since(
    project: Path, runner: CliRunner, reads: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """As git refreshes its index: a bank read because its status was too recent is known
    by it once it has settled, and the cache is rewritten only then."""
    write_bank(project / "banks", "demo", "en")
    build(runner)
    assert recorded(project) == {}
    monkeypatch.setattr(ankigen.bank.folder, "SETTLE_NS", 0)
    reads.clear()
    assert build(runner) == "up to date out/demo.en.apkg: 2 notes\n"
    assert reads == ["demo/en.yaml"]
    assert sorted(recorded(project)) == ["banks/demo/en.yaml"]
    cache = project / "out" / ".ankigen-cache.json"
    before = cache.stat()
    reads.clear()
    assert build(runner) == "up to date out/demo.en.apkg: 2 notes\n"
    assert reads == []
    after = cache.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
