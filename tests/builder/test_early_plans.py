"""Decks planned as soon as their bank is checked, while other banks still are: the
same bytes as planned in turn, the bank at hand, and never from evidence that another
build replaced meanwhile."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

import ankigen.bank.files
import ankigen.builder.locked
import ankigen.builder.pipeline
import ankigen.checks.bankcache
import ankigen.checks.cache_entry
import ankigen.checks.incremental
import ankigen.checks.run
import ankigen.core.parallel
from ankigen.bank.folder import LOCK_NAME
from ankigen.builder.handoff import DeckPlan
from ankigen.builder.pipeline import build
from ankigen.builder.result import BANK_CACHE
from ankigen.identity.issued import ISSUED_NAME, Issued
from ankigen.identity.lockfile import parse_lock
from ankigen.identity.stamp import Stamp
from tests.helpers import item, write_bank
from tests.support.workers import with_workers


def three_kinds(banks: Path) -> None:
    """A deck planned early, one with a generated parent deck, one with an image."""
    write_bank(banks, "plain", items=[item(f"p{n}") for n in range(30)])
    write_bank(banks, "nested", deck="Course::Nested", items=[item(f"n{n}") for n in range(30)])
    write_bank(banks, "pictured", items=[item("a", image="dot.png", image_alt="A dot")])
    media = banks.parent / "media"
    media.mkdir(exist_ok=True)
    Image.new("RGB", (4, 4)).save(media / "dot.png")


def planned_early(monkeypatch: pytest.MonkeyPatch) -> dict[str, bool]:
    """Whether each deck's plan was taken from those made early, by bank."""
    early: dict[str, bool] = {}
    take = ankigen.builder.jobs.EarlyPlans.take

    def taking(self: Any, job: Any) -> Any:
        plan = take(self, job)
        early[job.bank_path] = plan is not None
        return plan

    monkeypatch.setattr(ankigen.builder.jobs.EarlyPlans, "take", taking)
    return early


def built_with_a_plain_bank(project: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`three_kinds` and a plain bank "c" of 40 items, built once in one process; the
    banks folder."""
    banks = project / "banks"
    three_kinds(banks)
    write_bank(banks, "c", items=[item(f"c{n}") for n in range(40)])
    with monkeypatch.context() as patched:
        patched.setenv("SOURCE_DATE_EPOCH", "1700000000")
        build(banks, project / "out")
    return banks


def test_a_bank_checked_here_is_not_loaded_again_for_its_deck(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its deck's job runs next in the process that checked it, and takes the bank as
    checked instead of loading it again from its cache entry (seen here in this process;
    a worker does the same)."""
    for topic in ("a", "b", "c", "d"):
        write_bank(project / "banks", topic, items=[item(f"{topic}{n}") for n in range(20)])
    with_workers(monkeypatch)
    loaded: list[str] = []
    found: list[bool] = []
    real_load, real_found = ankigen.checks.cache_entry.load, ankigen.builder.jobs.checked_here

    def counting(source: Any, *rest: Any) -> Any:
        loaded.append(str(source.path))
        return real_load(source, *rest)

    def finding(digest: str) -> Any:
        bank = real_found(digest)
        found.append(bank is not None)
        return bank

    released: list[str] = []
    release = ankigen.bank.files.Source.release

    def releasing(self: Any) -> None:
        released.append(self.path.parent.name)
        release(self)

    # the store and the check in a worker each look it up in their own module
    for module in (ankigen.checks.bankcache, ankigen.checks.cache_entry):
        monkeypatch.setattr(module, "load", counting)
    monkeypatch.setattr(ankigen.builder.jobs, "checked_here", finding)
    monkeypatch.setattr(ankigen.bank.files.Source, "release", releasing)
    early = planned_early(monkeypatch)
    build(project / "banks", project / "out")
    assert early == {f"{topic}/en.yaml": True for topic in "abcd"}
    assert sorted(released) == list("abcd")  # the banks' bytes, let go once checked
    assert found and all(found)  # this process planned the decks it checked, as checked
    assert loaded == []
    assert ankigen.checks.incremental._checked_here == {}  # nothing left held
    # the control: an edited bank, checked in this process, loads its previous entry
    # (for the items it reuses) through the patched name, so a load would have been seen
    monkeypatch.setattr(ankigen.core.parallel, "MIN_PARALLEL_BYTES", 1 << 40)
    write_bank(project / "banks", "a", items=[item(f"a{n}", 2) for n in range(20)])
    build(project / "banks", project / "out")
    assert [Path(path).relative_to(project).as_posix() for path in loaded] == ["banks/a/en.yaml"]


def outputs(project: Path) -> dict[str, bytes]:
    out = project / "out"
    found = {p.name: p.read_bytes() for p in sorted(out.glob("*.apkg"))}
    found[ISSUED_NAME] = (out / ISSUED_NAME).read_bytes()
    found[LOCK_NAME] = (project / "banks" / LOCK_NAME).read_bytes()
    return found


def test_plain_decks_are_planned_early_by_workers_and_change_no_byte(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With worker processes, the decks that need nothing from other banks are planned as
    soon as their bank is checked; decks with a generated parent deck or an image in
    their turn; and a bank edited alone is checked and planned in a worker. The
    packages, lock and issued record are those of builds in one process, which plans
    every deck in its turn."""
    topics = ("a", "b", "c", "d", "e", "f")
    early: dict[str, list[dict[str, bool]]] = {"alone": [], "workers": []}
    for name in early:
        banks = tmp_path / name / "banks"
        three_kinds(banks)
        for topic in topics:
            write_bank(banks, topic, items=[item(f"{topic}{n}") for n in range(40)])
        for epoch, edit in (("1700000000", None), ("1700000100", "c")):
            if edit:
                items = [item(f"{edit}{n}", explanation=f"Edited {n}.") for n in range(40)]
                write_bank(banks, edit, items=items)
            with monkeypatch.context() as patched:
                patched.setenv("SOURCE_DATE_EPOCH", epoch)
                if name == "workers":
                    with_workers(patched)
                early[name].append(planned_early(patched))
                build(banks, tmp_path / name / "out")
            if not edit:
                cold = outputs(tmp_path / name)
        assert cold != outputs(tmp_path / name)
    assert outputs(tmp_path / "workers") == outputs(tmp_path / "alone")
    plain = {f"{topic}/en.yaml": True for topic in (*topics, "plain")}
    assert early["workers"][0] == plain | {"nested/en.yaml": False, "pictured/en.yaml": False}
    assert early["workers"][1] == {"c/en.yaml": True}
    assert not any(made for built in early["alone"] for made in built.values())


def test_evidence_written_by_another_build_meanwhile_is_read_again(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another build into the same folder may issue a newer time for a note while this one
    checks its banks, before it holds the folder's lock: the plans made from the record as
    it was read then are dropped, and the note gets a time newer than that one."""
    banks, out = project / "banks", project / "out"
    write_bank(banks, items=[item("a")])
    write_bank(banks, "other", items=[item("b")])
    build(banks, out)
    write_bank(banks, items=[item("a", explanation="Changed.")])
    write_bank(banks, "other", items=[item("b", explanation="Changed.")])
    with_workers(monkeypatch)
    made: list[object] = []
    collect = ankigen.builder.jobs.EarlyPlans.collect
    monkeypatch.setattr(
        ankigen.builder.jobs.EarlyPlans,
        "collect",
        lambda self, source, outcome: made.append(outcome) or collect(self, source, outcome),
    )
    early = planned_early(monkeypatch)
    before, _ = parse_lock(LOCK_NAME, (banks / LOCK_NAME).read_bytes())
    guid, stamp = before.decks["demo.en"].guids["a"], before.decks["demo.en"].items["a"]
    meanwhile = Stamp(stamp.hash, stamp.mtime + 50)
    real_check = ankigen.checks.incremental.check_outlines

    def checked_while_another_build_ran(*args: Any, **kwargs: Any) -> Any:
        checked = real_check(*args, **kwargs)
        other = Issued(out / ISSUED_NAME)
        other.note(guid, meanwhile)
        (out / ISSUED_NAME).write_bytes(other.to_bytes())
        return checked

    monkeypatch.setattr(ankigen.builder.pipeline, "check_outlines", checked_while_another_build_ran)
    build(banks, out)
    lock, problems = parse_lock(LOCK_NAME, (banks / LOCK_NAME).read_bytes())
    assert problems == []
    [new] = lock.decks["demo.en"].items.values()
    assert new.hash != stamp.hash
    assert new.mtime == meanwhile.mtime + 1
    assert len(made) == 2 and early == {}  # planned early, then again


def test_a_small_bank_edited_alone_is_checked_and_planned_here(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Below `LONE_BANK_FOR_A_WORKER` a worker's start and the bank's trip would cost more
    than checking and planning it here, in turn."""
    for topic in ("a", "b", "c"):
        write_bank(project / "banks", topic, items=[item(f"{topic}{n}") for n in range(20)])
    build(project / "banks", project / "out")
    write_bank(project / "banks", "b", items=[item(f"b{n}", 2) for n in range(20)])
    monkeypatch.setattr(ankigen.core.parallel, "MIN_PARALLEL_BYTES", 0)
    early = planned_early(monkeypatch)
    pools: list[Any] = []
    real_pool = ankigen.core.parallel.Pool.submit

    def submitting(self: Any, *args: Any) -> Any:
        pools.append(self)
        return real_pool(self, *args)

    monkeypatch.setattr(ankigen.core.parallel.Pool, "submit", submitting)
    result = build(project / "banks", project / "out")
    assert [d.path for d in result.decks if d.written] == ["b.en.apkg"]
    assert early == {"b/en.yaml": False} and pools == []


def cache_entries(project: Path) -> dict[str, bytes]:
    folder = project / "out" / BANK_CACHE
    return {p.name: p.read_bytes() for p in sorted(folder.glob("*.json"))}


def test_a_bank_edited_alone_sends_its_entry_with_its_plan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bank edited alone is checked in a worker, which makes its cache entry while the
    check's result travels and sends it with the deck's plan, or alone for a deck not
    planned early (a generated parent deck): the entries are the bytes a build in one
    process makes, and the next build finds nothing to do."""
    arrived: list[str] = []
    arrive = ankigen.checks.bankcache.BankCache.arrive

    def noting(self: Any, source: Any, entry: bytes | None) -> None:
        arrived.append(f"{source.path.parent.name} {'entry' if entry else 'none'}")
        arrive(self, source, entry)

    project = tmp_path / "project"  # one folder: an entry names its bank's path
    made: dict[str, tuple[dict[str, bytes], dict[str, bytes]]] = {}
    for name in ("one process", "workers"):
        shutil.rmtree(project, ignore_errors=True)
        banks = built_with_a_plain_bank(project, monkeypatch)
        for edited, epoch in (("c", "1700000100"), ("nested", "1700000200")):
            deck = {"deck": "Course::Nested"} if edited == "nested" else {}
            items = [item(f"{edited[0]}{n}", explanation=f"Edited {n}.") for n in range(30)]
            write_bank(banks, edited, items=items, **deck)
            with monkeypatch.context() as patched:
                patched.setenv("SOURCE_DATE_EPOCH", epoch)
                if name == "workers":
                    with_workers(patched)
                    patched.setattr(ankigen.checks.bankcache.BankCache, "arrive", noting)
                build(banks, project / "out")
        made[name] = cache_entries(project), outputs(project)
    assert arrived == ["c entry", "nested entry"]
    assert made["workers"] == made["one process"]
    # the next build, another bank edited, reads the entries the worker sent
    read: dict[str, bool] = {}
    get = ankigen.checks.bankcache.BankCache.get

    def reading(self: Any, source: Any) -> Any:
        found = get(self, source)
        read[source.path.parent.name] = found is not None
        return found

    write_bank(project / "banks", "plain", items=[item(f"p{n}") for n in range(31)])
    with monkeypatch.context() as patched:
        patched.setattr(ankigen.checks.bankcache.BankCache, "get", reading)
        result = build(project / "banks", project / "out")
    assert read == {"c": True, "nested": True, "pictured": True}
    assert [deck.path for deck in result.decks if deck.written] == ["plain.en.apkg"]


def test_an_entry_that_never_comes_is_made_from_the_banks_bytes(tmp_path: Path) -> None:
    """An entry a worker was to send (`LATER`) is waited for where it is needed, whether
    it comes before or after the bank's result is kept; one that never comes (its
    follow-up failed) is made in this process, the bytes the worker would have sent."""
    import hashlib

    from ankigen.bank.files import Source
    from ankigen.bank.model import outline
    from ankigen.checks.bankcache import BankCache
    from ankigen.checks.cache_entry import LATER, dump
    from ankigen.checks.parity import parity
    from ankigen.checks.rules import load_and_check

    path = write_bank(tmp_path / "banks", items=[item("a"), item("b")])
    data = path.read_bytes()
    source = Source(path, data, hashlib.sha256(data).hexdigest())
    bank, found = load_and_check(source, ("en",))
    assert bank is not None
    made = dump(source, (bank, found), ("en",), outline(bank), parity(bank))

    never = BankCache(tmp_path / "never", ("en",))
    never.expect(source)
    never.put(source, LATER, None, parity(bank))
    never.arrive(source, None)
    assert never.entry(source) == made

    early = BankCache(tmp_path / "early", ("en",))
    early.expect(source)
    early.arrive(source, made)  # before the bank's result is kept
    early.put(source, LATER, None, parity(bank))
    assert early.checked_entry(source) == made

    waiting = BankCache(tmp_path / "waiting", ("en",))
    waiting.expect(source)
    waiting.put(source, LATER, None, parity(bank))
    threading.Timer(0.2, waiting.arrive, (source, made)).start()
    waiting.save()  # waits for it
    assert [p.read_bytes() for p in (tmp_path / "waiting").glob("*.json")] == [made]


def _made_where(folder: Path) -> Any:
    """`decks._packaged`, noting the process that made each package in `folder`."""
    real = ankigen.builder.jobs._packaged

    def noting(*args: Any, **kwargs: Any) -> Any:
        after = "after" if (folder / "plan-in").exists() else "before"
        (folder / f"packaged-{os.getpid()}-{after}-the-plan").write_text("")
        return real(*args, **kwargs)

    return noting


def _noting_plans(folder: Path) -> Any:
    """`EarlyPlans.collect`, noting in `folder` when a plan is in."""
    real = ankigen.builder.jobs.EarlyPlans.collect

    def collect(self: Any, source: Any, outcome: object, *rest: Any) -> None:
        if isinstance(outcome, DeckPlan):
            (folder / "plan-in").write_text("")
        real(self, source, outcome, *rest)

    return collect


def _never_kept(token: str) -> None:
    return None


_TESTS_PID = os.getpid()


def _broken(token: str) -> Any:
    """Fails in a worker; here, as it is."""
    if os.getpid() != _TESTS_PID:
        raise RuntimeError("the worker died")
    return _KEPT(token)


_KEPT = ankigen.builder.jobs.run_held_package


@pytest.mark.parametrize("worker", ["keeps", "lost it", "fails", "lost the entry"])
def test_a_lone_decks_package_is_made_by_its_worker_as_the_plan_travels(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, worker: str
) -> None:
    """A bank edited alone is planned in its worker, which sends the plan and makes the
    package meanwhile: the package is asked for as soon as the plan is in, and the
    build proper ends its own work (the lock, the issued record) while it is made. A
    worker that does not have it, or fails, leaves it to this process. Every way, the
    bytes of a build in one process."""
    made: dict[str, dict[str, bytes]] = {}
    where = tmp_path / "where"
    where.mkdir()
    made_here: list[str] = []
    real_made_here = ankigen.checks.bankcache.BankCache._made_here

    def noting_made_here(self: Any, source: Any) -> bytes:
        made_here.append(source.path.name)
        return real_made_here(self, source)

    monkeypatch.setattr(ankigen.checks.bankcache.BankCache, "_made_here", noting_made_here)
    for name in ("one process", "workers"):
        project = tmp_path / name
        banks = built_with_a_plain_bank(project, monkeypatch)
        write_bank(banks, "c", items=[item(f"c{n}", explanation="Edited.") for n in range(40)])
        with monkeypatch.context() as patched:
            patched.setenv("SOURCE_DATE_EPOCH", "1700000100")
            if name == "workers":
                with_workers(patched)
                patched.setattr(ankigen.builder.jobs, "_packaged", _made_where(where))
                patched.setattr(ankigen.builder.jobs.EarlyPlans, "collect", _noting_plans(where))
                if worker == "lost the entry":
                    patched.setattr(ankigen.builder.jobs, "run_held_entry", _never_kept)
                elif worker != "keeps":
                    # asked for by the build proper and by the thread feeding the worker
                    for module in (ankigen.builder.locked, ankigen.builder.jobs):
                        patched.setattr(
                            module,
                            "run_held_package",
                            _never_kept if worker == "lost it" else _broken,
                        )
            result = build(banks, project / "out")
        assert [deck.path for deck in result.decks if deck.written] == ["c.en.apkg"]
        made[name] = outputs(project)
    assert made["workers"] == made["one process"]
    makers = {p.name.removeprefix("packaged-") for p in where.glob("packaged-*")}
    if worker in ("keeps", "lost the entry"):  # made in the worker, once it made the plan
        [maker] = makers
        assert not maker.startswith(f"{os.getpid()}-")
    else:  # planned again here, and made here: what the worker made is never used
        assert f"{os.getpid()}-after-the-plan" in makers
    # the edited bank's cache entry: made in the worker after the package, and asked for
    # on its own, so it comes even where the package does not; made here from the
    # bank's bytes if it never comes
    assert made_here == (["en.yaml"] if worker == "lost the entry" else [])
    edited = hashlib.sha256((tmp_path / "workers" / "banks" / "c" / "en.yaml").read_bytes())
    headers = [
        json.loads(entry.read_bytes().split(b"\n", 1)[0])
        for entry in (tmp_path / "workers" / "out" / BANK_CACHE).glob("*.json")
        if entry.name != "across.json"
    ]
    assert edited.hexdigest() in {header["digest"] for header in headers}


def test_an_outcome_that_cannot_be_collected_stops_the_build_with_its_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plan that arrives after the banks' results, from the thread that feeds the
    workers, and fails there as it is taken in: the build proper, which waits for that
    plan, meets the failure instead of waiting for ever."""

    banks = built_with_a_plain_bank(tmp_path / "project", monkeypatch)
    write_bank(banks, "c", items=[item(f"c{n}", explanation="Edited.") for n in range(40)])
    submit = ankigen.core.parallel.Pool.submit

    def refusing(self: Any, fn: Any, arg: Any) -> Any:
        if fn is ankigen.builder.jobs.run_held_package:
            raise ValueError("no package today")
        return submit(self, fn, arg)

    with_workers(monkeypatch)
    monkeypatch.setattr(ankigen.core.parallel.Pool, "submit", refusing)
    outcome: list[BaseException | None] = []

    def building() -> None:
        try:
            build(banks, tmp_path / "project" / "out")
        except BaseException as exc:
            outcome.append(exc)
        else:
            outcome.append(None)

    builder = threading.Thread(target=building, daemon=True)
    builder.start()
    builder.join(timeout=60)
    assert not builder.is_alive(), "the build waits for a plan that never comes"
    [failure] = outcome
    assert isinstance(failure, ValueError)
    assert str(failure) == "no package today"


def test_an_edit_s_worker_takes_the_templates_from_the_build_proper(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The note type's templates are made once, by the build proper while the worker
    checks the edited bank, and come to the worker with its deck's job: the worker never
    makes them (it would between its check and its plan), and its package is the one a
    build in one process makes."""
    import ankigen.apkg.notetype

    banks = built_with_a_plain_bank(project, monkeypatch)
    alone = project.parent / "alone"
    shutil.copytree(project, alone)
    makers = project.parent / "makers"
    made = ankigen.apkg.notetype._made_templates

    def noting_who() -> Any:
        with makers.open("a", encoding="utf-8") as noted:  # the worker's too
            noted.write(f"{os.getpid()}\n")
        return made()

    items = [item(f"c{n}", explanation=f"Edited {n}.") for n in range(40)]
    for where in (project, alone):
        write_bank(where / "banks", "c", items=items)
    with monkeypatch.context() as patched:
        patched.setenv("SOURCE_DATE_EPOCH", "1700000100")
        build(alone / "banks", alone / "out")
        with_workers(patched)
        patched.setattr(ankigen.apkg.notetype, "_templates", None)
        patched.setattr(ankigen.apkg.notetype, "_made_templates", noting_who)
        early = planned_early(patched)
        build(banks, project / "out")
    assert early == {"c/en.yaml": True}  # checked and planned in the worker
    # by this process alone (its two threads may both make them, as the first to ask)
    assert set(makers.read_text(encoding="utf-8").split()) == {str(os.getpid())}
    assert outputs(project) == outputs(alone)


def test_an_edit_s_bank_entry_is_made_while_its_package_is_compressed() -> None:
    """In the worker, the bank's cache entry is made once the package's database is made,
    while libdeflate compresses it without the interpreter lock, and is ready when the
    package is: the build proper no longer waits for it after the package."""
    import ankigen.builder.jobs as jobs
    from ankigen.apkg.notetype import FIELDS
    from ankigen.apkg.package import PackageDeck, PackageNote
    from ankigen.checks.incremental import EntryLater

    fields = tuple(f"{name} text" for name in FIELDS)
    notes = tuple(PackageNote(f"g{n}", fields, (), 1) for n in range(3))
    packaging = jobs.Packaging(PackageDeck(7, "Deck", "About", notes, 1, 2), (), None)
    when: list[bool] = []

    def entry() -> bytes:
        when.append(packaging.compressing.is_set())
        return b"entry"

    later = EntryLater(entry)
    jobs._held["t"], jobs._entries_held["t"] = packaging, later
    packaged = jobs.run_held_package("t")
    assert packaged is not None and packaged.data is not None
    assert when == [True] and later.entry == b"entry"  # made before the package was given
    assert jobs.run_held_entry("t") == b"entry" and when == [True]  # and not made again


def test_a_package_known_to_differ_from_the_one_in_place_has_its_key_made_while_compressed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An edited deck's new version is in its description, so its package cannot be the
    one in place of another version: it is made at once, and its key is made while it is
    compressed. The same package and key as made key first; and a deck whose package in
    place may be the same is still asked key first, and not made again."""
    import ankigen.builder.jobs as jobs
    from ankigen.apkg.notetype import FIELDS
    from ankigen.apkg.package import PackageDeck, PackageNote, apkg_bytes
    from ankigen.builder.deckplan import package_key

    fields = tuple(f"{name} text" for name in FIELDS)
    notes = tuple(PackageNote(f"g{n}", fields, (), 1) for n in range(3))
    package = PackageDeck(7, "Deck", "About", notes, 1, 2)
    happened: list[str] = []

    def keying(made: Any) -> str:
        happened.append("key")
        return package_key(made)

    def making(made: Any, media: Any, compressing: Any) -> bytes:
        happened.append("made")
        return apkg_bytes(made, media, lambda: happened.append("compressing") or compressing())

    monkeypatch.setattr(jobs, "package_key", keying)
    monkeypatch.setattr(jobs, "apkg_bytes", making)
    jobs._held["t"] = jobs.Packaging(package, (), "another version's key", differs=True)
    assert jobs.run_held_package("t") == jobs.Packaged(package_key(package), apkg_bytes(package))
    assert happened == ["made", "compressing", "key"]  # once, while or once compressed
    happened.clear()
    jobs._held["t"] = jobs.Packaging(package, (), package_key(package))
    assert jobs.run_held_package("t") == jobs.Packaged(package_key(package), None)
    assert happened == ["key"]  # first, and the package in place kept
