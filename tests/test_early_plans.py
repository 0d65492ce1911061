"""Decks planned as soon as their bank is checked, while other banks still are: each
deck planned once, the same bytes as planned in turn, and never from evidence that
another build replaced meanwhile."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PIL import Image

import ankigen.bankcache
import ankigen.decks
import ankigen.lint
import ankigen.parallel
from ankigen.build import build
from ankigen.identity import ISSUED_NAME, Issued, Stamp
from ankigen.lock import LOCK_NAME, parse_lock
from tests.helpers import item, write_bank


def three_kinds(banks: Path) -> None:
    """A deck planned early, one with a generated parent deck, one with an image."""
    write_bank(banks, "plain", items=[item(f"p{n}") for n in range(30)])
    write_bank(banks, "nested", deck="Course::Nested", items=[item(f"n{n}") for n in range(30)])
    write_bank(banks, "pictured", items=[item("a", image="dot.png", image_alt="A dot")])
    media = banks.parent / "media"
    media.mkdir(exist_ok=True)
    Image.new("RGB", (4, 4)).save(media / "dot.png")


def planned(
    monkeypatch: pytest.MonkeyPatch, workers: bool = False
) -> tuple[list[str], dict[str, bool]]:
    """The bank of each deck job run in this process (not counted with `workers`: the
    function is sent to them), and whether each deck's plan was taken from those made
    early."""
    jobs: list[str] = []
    early: dict[str, bool] = {}
    run, take = ankigen.decks.run_deck_job, ankigen.decks.EarlyPlans.take

    def running(job: Any) -> Any:
        jobs.append(job.bank_path)
        return run(job)

    def taking(self: Any, job: Any) -> Any:
        plan = take(self, job)
        early[job.bank_path] = plan is not None
        return plan

    if not workers:
        monkeypatch.setattr(ankigen.decks, "run_deck_job", running)
    monkeypatch.setattr(ankigen.decks.EarlyPlans, "take", taking)
    return jobs, early


def test_each_deck_is_planned_once_and_plain_decks_early(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    three_kinds(project / "banks")
    jobs, early = planned(monkeypatch)
    result = build(project / "banks", project / "out")
    assert sorted(d.path for d in result.decks) == [
        "nested.en.apkg",
        "pictured.en.apkg",
        "plain.en.apkg",
    ]
    assert sorted(jobs) == ["nested/en.yaml", "pictured/en.yaml", "plain/en.yaml"]
    assert early == {"nested/en.yaml": False, "pictured/en.yaml": False, "plain/en.yaml": True}


def test_a_bank_checked_here_is_not_loaded_again_for_its_deck(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its deck's job runs next in the process that checked it, and takes the bank as
    checked instead of loading it again from its cache entry."""
    for topic in ("a", "b", "c"):
        write_bank(project / "banks", topic, items=[item(f"{topic}{n}") for n in range(20)])
    loaded: list[str] = []
    real_load = ankigen.bankcache.load

    def counting(source: Any, *rest: Any) -> Any:
        loaded.append(str(source.path))
        return real_load(source, *rest)

    monkeypatch.setattr(ankigen.bankcache, "load", counting)
    jobs, early = planned(monkeypatch)
    build(project / "banks", project / "out")
    assert sorted(jobs) == ["a/en.yaml", "b/en.yaml", "c/en.yaml"]
    assert all(early.values())
    assert loaded == []
    assert ankigen.lint._checked_here == {}  # nothing left held


def outputs(project: Path) -> dict[str, bytes]:
    out = project / "out"
    found = {p.name: p.read_bytes() for p in sorted(out.glob("*.apkg"))}
    found[ISSUED_NAME] = (out / ISSUED_NAME).read_bytes()
    found[LOCK_NAME] = (project / "banks" / LOCK_NAME).read_bytes()
    return found


def test_worker_processes_change_no_byte(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    """Worker processes (forced here for small banks) plan most decks early; the packages,
    lock and issued record are those of a build in one process."""
    topics = ("a", "b", "c", "d", "e", "f")
    early = {}
    for name, least in (("alone", 1 << 40), ("workers", 0)):
        banks = tmp_path / name / "banks"
        three_kinds(banks)
        for topic in topics:
            write_bank(banks, topic, items=[item(f"{topic}{n}") for n in range(40)])
        with monkeypatch.context() as patched:
            patched.setattr(ankigen.parallel, "MIN_PARALLEL_BYTES", least)
            _, early[name] = planned(patched, workers=True)
            build(banks, tmp_path / name / "out")
    assert outputs(tmp_path / "workers") == outputs(tmp_path / "alone")
    plain = {f"{topic}/en.yaml" for topic in (*topics, "plain")}
    assert {path for path, made_early in early["workers"].items() if made_early} == plain


def test_evidence_written_by_another_build_meanwhile_is_read_again(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another build into the same folder may issue a newer time for a note while this one
    checks its banks, before it holds the folder's lock: the plans made from the record as
    it was read then are dropped, and the note gets a time newer than that one."""
    banks, out = project / "banks", project / "out"
    write_bank(banks, items=[item("a")])
    build(banks, out)
    write_bank(banks, items=[item("a", explanation="Changed.")])
    (guid, stamp), *_ = Issued(out / ISSUED_NAME).notes.items()
    meanwhile = Stamp(stamp.hash, stamp.mtime + 50)
    real_check = ankigen.lint.check_outlines

    def checked_while_another_build_ran(*args: Any, **kwargs: Any) -> Any:
        checked = real_check(*args, **kwargs)
        other = Issued(out / ISSUED_NAME)
        other.note(guid, meanwhile)
        (out / ISSUED_NAME).write_bytes(other.to_bytes())
        return checked

    monkeypatch.setattr(ankigen.lint, "check_outlines", checked_while_another_build_ran)
    build(banks, out)
    lock, problems = parse_lock(LOCK_NAME, (banks / LOCK_NAME).read_bytes())
    assert problems == []
    [new] = lock.decks["demo.en"].items.values()
    assert new.hash != stamp.hash
    assert new.mtime == meanwhile.mtime + 1
