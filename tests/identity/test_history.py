"""Identity and time through a team's history: reverts, renames, retirements, bad clocks.

Every rule is checked against the real Anki importer with review history present.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.helpers import REPO, AnkiCollection, invoke, item, write_bank


def build(runner: CliRunner, *args: str) -> str:
    result = invoke(runner, "build", *args)
    assert result.exit_code == 0, result.output
    return result.output


def git(cwd: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.org",
    }
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


def test_a_git_revert_reaches_learners_with_history_kept(
    project: Path, runner: CliRunner, collection: AnkiCollection, monkeypatch: pytest.MonkeyPatch
) -> None:
    git(project, "init", "-q")
    write_bank(project / "banks", items=[item("one"), item("two", 2)])
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    build(runner)
    git(project, "add", "banks")
    git(project, "commit", "-qm", "v1")
    package = project / "out" / "demo.en.apkg"
    collection.import_package(package)
    collection.review_all()
    reviews = collection.revlog_count()

    write_bank(project / "banks", items=[item("one", question="A bad edit?"), item("two", 2)])
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000100")
    build(runner)
    git(project, "commit", "-qam", "bad edit")
    assert collection.import_package(package).updated == 1
    assert collection.note_by_item("one")["Question"] == "A bad edit?"

    git(project, "revert", "--no-edit", "HEAD")
    # an output folder of another machine: only the lock's git history knows the bad edit
    shutil.rmtree(project / "out")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000200")
    output = build(runner)
    assert "2 notes (0 new, 1 changed, 1 unchanged, 0 removed)" in output
    log = collection.import_package(package)
    assert log.counts() == {"new": 0, "updated": 1, "duplicate": 1, "conflicting": 0}
    assert collection.note_by_item("one")["Question"] == "Question one?"
    assert collection.revlog_count() == reviews
    assert all(collection.col.get_card(c).ivl > 0 for c in collection.col.find_cards(""))


def test_git_is_asked_for_the_locks_history_only_where_a_repository_could_be(
    project: Path, runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = tmp_path / "git-calls"
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "git").write_text(f'#!/bin/sh\necho "$*" >> "{calls}"\nexit 128\n')
    (fake / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("GIT_DIR", raising=False)
    write_bank(project / "banks", items=[item("one")])
    build(runner)
    assert not calls.exists()  # no repository above the project: git never started

    (project / ".git").mkdir()
    write_bank(project / "banks", items=[item("one", question="Edited?")])
    build(runner)
    assert calls.read_text().startswith("log --all")


def test_an_undo_outside_git_reaches_learners_through_the_output_folder(
    project: Path, runner: CliRunner, collection: AnkiCollection, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_bank(project / "banks", items=[item("one")])
    build(runner)
    lock = project / "banks" / "ankigen.lock"
    old_lock = lock.read_bytes()
    collection.import_package(project / "out" / "demo.en.apkg")
    write_bank(project / "banks", items=[item("one", question="Edited?")])
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000100")
    build(runner)
    collection.import_package(project / "out" / "demo.en.apkg")
    write_bank(project / "banks", items=[item("one")])  # undone by hand, lock too
    lock.write_bytes(old_lock)
    output = build(runner)
    assert "1 note(s) went back to an earlier text" in output
    assert collection.import_package(project / "out" / "demo.en.apkg").updated == 1
    assert collection.note_by_item("one")["Question"] == "Question one?"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("0", "0 is not a time after 1970"),
        ("-5", "-5 is not a time after 1970"),
        ("1.5e9", "'1.5e9' is not a whole number of seconds"),
        ("soon", "'soon' is not a whole number of seconds"),
        ("1700000000000", "1700000000000 looks like milliseconds"),
        ("4102444800", "4102444800 is more than a day in the future"),
        ("9" * 40, "is not a whole number of seconds"),
        ("12345", "12345 is before 2001"),
    ],
)
def test_bad_source_date_epoch_is_a_clear_error(
    project: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch, value: str, message: str
) -> None:
    write_bank(project / "banks")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", value)
    result = invoke(runner, "build")
    assert result.exit_code == 1
    assert result.output.startswith("error: SOURCE_DATE_EPOCH: ")
    assert message in result.output
    assert not (project / "out").exists()
    assert not (project / "banks" / "ankigen.lock").exists()


@pytest.mark.parametrize(
    ("edit", "line", "message"),
    [
        (lambda d: d["decks"]["demo.en"].update(created=0), 6, "created: 0 is not a time"),
        (
            lambda d: d["decks"]["demo.en"]["items"]["two"].__setitem__(1, 4102444800),
            9,
            "item 'two': 4102444800 is more than a day in the future",
        ),
        (
            lambda d: d["decks"]["demo.en"]["items"]["one"].__setitem__(1, 1700000000000),
            8,
            "item 'one': 1700000000000 looks like milliseconds",
        ),
        (lambda d: d["notetype"].update(mtime="x"), 3, "note type time: 'x' is not a whole"),
    ],
)
def test_bad_times_in_the_lock_are_errors_at_their_line(
    project: Path, runner: CliRunner, edit: object, line: int, message: str
) -> None:
    write_bank(project / "banks")
    build(runner)
    lock = project / "banks" / "ankigen.lock"
    data = json.loads(lock.read_text(encoding="utf-8"))
    edit(data)  # type: ignore[operator]
    text = json.dumps(data, indent=1)
    lock.write_text(text, encoding="utf-8")
    package = (project / "out" / "demo.en.apkg").read_bytes()
    write_bank(project / "banks", items=[item("one", question="Changed?"), item("two", 2)])
    result = invoke(runner, "build")
    assert result.exit_code == 1
    expected_line = next(
        n
        for n, text_line in enumerate(text.splitlines(), start=1)
        if {
            6: '"created"',
            9: '"two"',
            8: '"one"',
            3: '"notetype"',
        }[line]
        in text_line
    )
    assert f"banks/ankigen.lock:{expected_line}: error: {message}" in result.output
    assert (project / "out" / "demo.en.apkg").read_bytes() == package
    assert lock.read_text(encoding="utf-8") == text


def test_every_shipped_deck_passes_ankis_check_database(
    tmp_path: Path, runner: CliRunner, collection: AnkiCollection, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(REPO / "banks", tmp_path / "banks")
    monkeypatch.chdir(tmp_path)
    build(runner)
    for package in sorted((tmp_path / "out").glob("*.apkg")):
        collection.import_package(package)
    assert collection.col.db.scalar("select min(id) from notes") > 0
    assert collection.col.db.scalar("select min(id) from cards") > 0
    assert collection.col.db.scalar("select max(mod) from notes") <= int(__import__("time").time())
    problems, ok = collection.col.fix_integrity()
    assert ok
    # what Anki says when it found nothing to fix
    assert problems.splitlines() == ["Database rebuilt and optimized."]


def test_a_topic_rename_with_formerly_keeps_notes_and_history(
    project: Path, runner: CliRunner, collection: AnkiCollection
) -> None:
    banks = project / "banks"
    write_bank(banks, "fsdp", items=[item("one"), item("two", 2)], deck="Training::FSDP")
    build(runner)
    collection.import_package(project / "out" / "fsdp.en.apkg")
    collection.review_all()
    reviews = collection.revlog_count()
    guids = {n["ItemId"]: n.guid for n in collection.notes()}

    shutil.rmtree(banks / "fsdp")
    write_bank(
        banks,
        "fully-sharded",
        items=[item("one"), item("second", 2, formerly=["two"])],
        deck="Training::FSDP",
        formerly={"topic": "fsdp"},
    )
    output = build(runner)
    assert "2 notes (0 new, 1 changed, 1 unchanged, 0 removed)" in output
    assert not (project / "out" / "fsdp.en.apkg").exists()
    lock = json.loads((banks / "ankigen.lock").read_text(encoding="utf-8"))
    assert list(lock["decks"]) == ["fully-sharded.en"]
    log = collection.import_package(project / "out" / "fully-sharded.en.apkg")
    assert log.counts() == {"new": 0, "updated": 1, "duplicate": 1, "conflicting": 0}
    assert {n["ItemId"]: n.guid for n in collection.notes()} == {
        "one": guids["one"],
        "second": guids["two"],
    }
    assert collection.revlog_count() == reviews


def test_a_language_tag_rename_with_formerly_keeps_the_notes(
    project: Path, runner: CliRunner, collection: AnkiCollection
) -> None:
    write_bank(project / "banks", language="en", items=[item("one")], deck="Demo")
    build(runner)
    collection.import_package(project / "out" / "demo.en.apkg")
    (project / "banks" / "demo" / "en.yaml").unlink()
    write_bank(
        project / "banks",
        language="en-US",
        items=[item("one")],
        deck="Demo",
        formerly={"language": "en"},
    )
    build(runner)
    log = collection.import_package(project / "out" / "demo.en-US.apkg")
    assert (log.new, log.updated) == (0, 1)  # the Language field changed to en-US
    assert [n["Language"] for n in collection.notes()] == ["en-US"]


def test_renames_without_formerly_are_warned_with_the_line_to_add(
    project: Path, runner: CliRunner
) -> None:
    banks = project / "banks"
    write_bank(banks, "fsdp", items=[item("a"), item("b"), item("c")])
    build(runner)
    shutil.rmtree(banks / "fsdp")
    write_bank(banks, "fully-sharded", items=[item("a"), item("b"), item("c")])
    result = invoke(runner, "build")
    assert result.exit_code == 0
    assert (
        "banks/fully-sharded/en.yaml:1: warning: this new deck 'fully-sharded.en' shares 3 of "
        "the 3 item ids of the deck 'fsdp.en', whose bank is gone: if it was renamed, add "
        "`formerly: {topic: fsdp}` to this bank" in result.stderr
    )
    assert (
        "banks/ankigen.lock:5: warning: deck 'fsdp.en' ('fsdp quiz (en)') has no bank any more; "
        "it was last built from fsdp/en.yaml" in result.stderr
    )
    lock = json.loads((banks / "ankigen.lock").read_text(encoding="utf-8"))
    assert sorted(lock["decks"]) == ["fsdp.en", "fully-sharded.en"]  # the old entry is kept


def test_an_item_renamed_without_formerly_is_warned(project: Path, runner: CliRunner) -> None:
    write_bank(project / "banks", items=[item("old-name"), item("b")])
    build(runner)
    renamed = item("old-name") | {"id": "new-name"}
    write_bank(project / "banks", items=[renamed, item("b")])
    result = invoke(runner, "build")
    assert (
        "banks/demo/en.yaml:5: warning: item 'new-name' has the content of the removed item "
        "'old-name': if it was renamed, add `formerly: [old-name]` to it" in result.stderr
    )


def test_swapped_ids_are_warned(project: Path, runner: CliRunner) -> None:
    a, b = item("a"), item("b", question="Another question?")
    write_bank(project / "banks", items=[a, b])
    build(runner)
    write_bank(project / "banks", items=[b | {"id": "a"}, a | {"id": "b"}])
    result = invoke(runner, "build")
    assert "items 'a' and 'b' swapped their content" in result.stderr
    assert "swap the ids back" in result.stderr


@pytest.mark.parametrize(
    ("bank_formerly", "item_formerly", "message"),
    [
        (None, ["b"], "formerly 'b' is the id of a live item"),
        (None, ["a"], "formerly names the item itself"),
        ({"topic": "other"}, None, "formerly: 'other.en' is the live bank"),
    ],
)
def test_formerly_clashes_are_errors_at_their_line(
    project: Path,
    runner: CliRunner,
    bank_formerly: dict[str, str] | None,
    item_formerly: list[str] | None,
    message: str,
) -> None:
    extra = {"formerly": bank_formerly} if bank_formerly else {}
    first = item("a", formerly=item_formerly) if item_formerly else item("a")
    write_bank(project / "banks", items=[first, item("b")], **extra)
    write_bank(project / "banks", "other")
    result = invoke(runner, "build")
    assert result.exit_code == 1
    assert message in result.output
    assert ": error: " in result.output
    assert not (project / "out").exists()


def test_a_bank_that_disappears_keeps_its_lock_entry_until_pruned(
    project: Path, runner: CliRunner
) -> None:
    write_bank(project / "banks", "one")
    write_bank(project / "banks", "two")
    build(runner)
    lock = project / "banks" / "ankigen.lock"
    (project / "banks" / "two" / "en.yaml").rename(project / "banks" / "two" / "en.yaml.bak")
    result = invoke(runner, "build")
    assert result.exit_code == 0
    assert "deck 'two.en' ('two quiz (en)') has no bank any more" in result.stderr
    assert "two.en" in json.loads(lock.read_text(encoding="utf-8"))["decks"]
    # a no-op build says it again
    assert "deck 'two.en'" in invoke(runner, "build").stderr
    pruned = invoke(runner, "build", "--prune")
    assert pruned.exit_code == 0
    assert "pruned deck 'two.en' from the lock" in pruned.stderr
    assert "two.en" not in json.loads(lock.read_text(encoding="utf-8"))["decks"]
    assert not (project / "out" / "two.en.apkg").exists()


def test_upper_case_extensions_are_banks(project: Path, runner: CliRunner) -> None:
    path = write_bank(project / "banks")
    path.rename(path.with_name("en.YAML"))
    result = invoke(runner, "build")
    assert result.exit_code == 0
    assert (project / "out" / "demo.en.apkg").exists()


@pytest.mark.parametrize("kind", ["dangling", "folder", "fifo"])
def test_a_path_named_like_a_bank_that_is_no_file_is_an_error(
    project: Path, runner: CliRunner, kind: str
) -> None:
    write_bank(project / "banks")
    odd = project / "banks" / "demo" / "x.yaml"
    if kind == "dangling":
        odd.symlink_to(project / "nowhere.yaml")
    elif kind == "folder":
        odd.mkdir()
    else:
        os.mkfifo(odd)
    result = invoke(runner, "build")
    assert result.exit_code == 1
    assert result.output.startswith("banks/demo/x.yaml: error: ")
    assert not (project / "out").exists()


def test_retired_cards_say_so_on_both_sides_and_are_not_counted(
    project: Path, runner: CliRunner, collection: AnkiCollection
) -> None:
    write_bank(
        project / "banks",
        language="ur",
        items=[item("live"), item("old", retired=True), item("older", retired=True)],
    )
    build(runner)
    collection.import_package(project / "out" / "demo.ur.apkg")
    card = collection.col.get_card(collection.col.find_cards("ItemId:old")[0])
    for side in (card.question(), card.answer()):
        assert 'class="ag-retired" data-retired="true"' in side
        assert "ہٹایا گیا سوال" in side and "tag:ankigen::retired" in side
    live = collection.col.get_card(collection.col.find_cards("ItemId:live")[0])
    assert 'class="ag-retired"' not in live.question()
    deck = collection.col.decks.by_name("demo quiz (ur)")
    assert deck is not None
    assert "سوالات: 1 " in deck["desc"]
    assert "ہٹائے گئے سوالات، اوپر شمار نہیں: 2" in deck["desc"]


def test_a_deck_reuse_key_changes_with_any_note_stamp_issued(tmp_path: Path) -> None:
    """The reuse key names only the notes whose issued stamp is not their lock stamp,
    yet tells apart every state of what was issued: none, the lock's, an older or a
    newer one, for any note."""
    from ankigen.bank.files import SourceDigest
    from ankigen.builder.deckplan import reuse_key
    from ankigen.identity.issued import Issued
    from ankigen.identity.lockfile import DeckLock
    from ankigen.identity.resolve import DeckIdentity, ItemIdentity
    from ankigen.identity.stamp import Stamp
    from ankigen.images.process import Prepared

    lock = DeckLock("Demo", 1_700_000_000)
    for n in range(3):
        lock.items[f"i{n}"] = Stamp(f"h{n}", 1_700_000_000 + n)
        lock.guids[f"i{n}"] = f"g{n}"
    items = {
        f"i{n}": ItemIdentity(f"g{n}", lock.items.get(f"i{n}"), f"i{n}", None) for n in range(4)
    }
    ident = DeckIdentity.of("demo.en", "demo.en", lock, 1, items)  # i3 is new: no lock stamp

    def key(**issued_stamps: Stamp) -> str | None:
        issued = Issued(tmp_path / "none.json")
        issued.notes.update(issued_stamps)
        source = SourceDigest(Path("banks/demo/en.yaml"), "0" * 64)
        return reuse_key(source, ident, issued, Stamp("t", 1), Prepared({}, ()), lock)

    as_locked = {f"g{n}": lock.items[f"i{n}"] for n in range(3)}
    states = [
        key(),
        key(**as_locked),
        key(**as_locked | {"g1": Stamp("h1", 1_690_000_000)}),
        key(**as_locked | {"g1": Stamp("other", 1_800_000_000)}),
        key(**as_locked | {"g3": Stamp("h3", 1_700_000_000)}),
        key(**{g: s for g, s in as_locked.items() if g != "g2"}),
    ]
    assert None not in states and len(set(states)) == len(states)
    assert key(**as_locked) == states[1]  # the same state, the same key


def test_an_issued_record_of_version_1_keeps_its_evidence(tmp_path: Path) -> None:
    """Earlier versions wrote the record note by note; its stamps still count, and it is
    written back by column."""
    from ankigen.identity.issued import ISSUED_NAME, Issued
    from ankigen.identity.stamp import Stamp

    path = tmp_path / ISSUED_NAME
    notes = {"Abc": ["h1", 1_700_000_000], "x#Y": ["h2", 1_700_000_500]}
    path.write_text(json.dumps({"version": 1, "notes": notes, "blobs": ["ab" * 20]}))
    issued = Issued(path)
    assert issued.notes == {"Abc": Stamp("h1", 1_700_000_000), "x#Y": Stamp("h2", 1_700_000_500)}
    assert issued.blobs == {"ab" * 20}
    path.write_bytes(issued.to_bytes())
    written = json.loads(path.read_text())
    assert written["version"] == 2 and written["guids"] == ["Abc", "x#Y"]
    again = Issued(path)
    assert (again.notes, again.blobs) == (issued.notes, issued.blobs)


def test_lock_text_made_elsewhere_is_used_only_for_its_own_entry() -> None:
    """A deck's entry in the lock is written where the deck is planned (a worker) and
    joined here: only for the very entry it was made from."""
    from ankigen.identity.lockfile import DeckLock, Lock, deck_text
    from ankigen.identity.stamp import Stamp

    entry = DeckLock("Deck", 5, "d/en.yaml", {"a": Stamp("ab" * 8, 9)}, {"a": "g-a"})
    twin = DeckLock("Deck", 5, "d/en.yaml", {"a": Stamp("ab" * 8, 9)}, {"a": "g-a"})
    lock = Lock(decks={"d.en": entry, "e.en": twin})
    plain = lock.to_bytes()
    assert lock.to_bytes({"d.en": (entry, deck_text("d.en", entry))}) == plain
    marked = lock.to_bytes({"d.en": (entry, "MADE"), "e.en": (entry, "NOT ITS OWN")})
    assert marked.decode().count("MADE") == 1 and b"NOT ITS OWN" not in marked


def _lock_of_two_decks() -> bytes:
    from ankigen.identity.lockfile import DeckLock, Lock
    from ankigen.identity.stamp import Stamp

    lock = Lock(Stamp("cd" * 8, 1_700_000_000))
    for key in ("a.en", "b.en"):
        entry = lock.decks[key] = DeckLock(f"Deck {key}", 1_700_000_000, f"{key[0]}/en.yaml")
        for n in range(3):
            entry.items[f"i{n}"] = Stamp(f"{n}" * 16, 1_700_000_000 + n)
            entry.guids[f"i{n}"] = f"g{key[0]}{n}"
    return lock.to_bytes()


_ITEM_1 = '    "i1": ["1111111111111111", 1700000001, "ga1"],\n'
_ITEM_2 = '    "i2": ["2222222222222222", 1700000002, "ga2"]\n'


@pytest.mark.parametrize(
    ("edit", "kept"),
    [
        (lambda t: t, {"a.en", "b.en"}),
        # JSON reads each of these as an entry `deck_text` writes otherwise
        (lambda t: t.replace(_ITEM_1 + _ITEM_2, _ITEM_2[:-1] + ",\n" + _ITEM_1[:-2] + "\n"), set()),
        (lambda t: t.replace(_ITEM_1, _ITEM_1 + _ITEM_1.replace("1111", "9999")), set()),
        (lambda t: t.replace('"Deck a.en"', '"\\u0044eck a.en"'), set()),
        (lambda t: t.replace('"a/en.yaml"', '"a\\/en.yaml"'), set()),
        (lambda t: t.replace('  "b.en": {', '  "a.en": {', 1), set()),  # a.en twice
        (lambda t: json.dumps(json.loads(t), indent=2) + "\n", set()),
        (lambda t: t.replace('"i1"', '"\\u0069\\u0031"'), set()),
        (lambda t: t.replace('  },\n  "b.en"', '  } ,  "b.en"'), set()),
        (lambda t: t[:-1], set()),
        (lambda t: t + "\n", set()),
        (lambda t: t.replace(' "version": 2,\n', ' "version": 2, "x": 1,\n'), set()),
    ],
)
def test_lock_entries_are_kept_as_read_only_when_written_so(edit: object, kept: set[str]) -> None:
    """A build writes a kept entry's text as it was read, not made again, only where it
    is what `deck_text` would make of the entry read: anything else in the file, however
    JSON reads it, and the whole lock is made afresh."""
    from ankigen.identity.lockfile import deck_text, parse_lock

    assert callable(edit)
    raw = edit(_lock_of_two_decks().decode()).encode()
    lock, problems = parse_lock("ankigen.lock", raw)
    assert not problems
    assert set(lock.texts) == kept
    for key, (entry, text) in lock.texts.items():
        assert lock.decks[key] is entry and text == deck_text(key, entry)
    if kept:
        assert lock.to_bytes(lock.texts) == raw


def test_two_decks_whose_notes_resolve_to_one_guid_are_an_error(
    project: Path, runner: CliRunner
) -> None:
    """A lock merged by hand can give a note of one deck another deck's GUID: Anki would
    make the two one note, so the build stops and names both."""
    write_bank(project / "banks", "one", items=[item("a"), item("b")])
    write_bank(project / "banks", "two", items=[item("c"), item("d")])
    build(runner)
    lock_path = project / "banks" / "ankigen.lock"
    lock = json.loads(lock_path.read_text(encoding="utf-8"))
    taken = lock["decks"]["one.en"]["items"]["b"][2]  # [hash, mtime, guid]
    lock["decks"]["two.en"]["items"]["d"][2] = taken
    lock_path.write_text(json.dumps(lock, indent=2), encoding="utf-8")
    packages = {path.name: path.read_bytes() for path in (project / "out").glob("*.apkg")}
    result = invoke(runner, "build")
    assert result.exit_code == 1, result.output
    assert result.output == (
        f"banks/ankigen.lock: error: one.en:b and two.en:d resolve to one note (GUID {taken}): "
        "check their `formerly:` names\n1 error; nothing was written\n"
    )
    assert {path.name: path.read_bytes() for path in (project / "out").glob("*.apkg")} == packages
