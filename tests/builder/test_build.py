"""`ankigen build`: packages import into real Anki and keep their identity across rebuilds."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.helpers import SRC, AnkiCollection, invoke, item, without_versions, write_bank


def build(
    runner: CliRunner, epoch: int | None = None, monkeypatch: pytest.MonkeyPatch | None = None
) -> str:
    if epoch is not None and monkeypatch is not None:
        monkeypatch.setenv("SOURCE_DATE_EPOCH", str(epoch))
    result = invoke(runner, "build")
    assert result.exit_code == 0, result.output
    return result.output


def test_build_writes_one_package_per_bank_and_says_so(project: Path, runner: CliRunner) -> None:
    write_bank(project / "banks", "demo", "en")
    write_bank(project / "banks", "demo", "de")
    result = invoke(runner, "build")
    assert result.exit_code == 0
    assert without_versions(result.stdout) == (
        "wrote out/demo.de.apkg: 2 notes (2 new, 0 changed, 0 unchanged, 0 removed)\n"
        "wrote out/demo.en.apkg: 2 notes (2 new, 0 changed, 0 unchanged, 0 removed)\n"
    )
    assert sorted(p.name for p in (project / "out").glob("*.apkg")) == [
        "demo.de.apkg",
        "demo.en.apkg",
    ]


def test_notes_and_fields_arrive_in_anki(
    project: Path, runner: CliRunner, collection: AnkiCollection
) -> None:
    write_bank(
        project / "banks",
        items=[
            item("single", answer=2, question="Which <is> right & true?", shuffle=False),
            item("multi", answer=[1, 3], choices=3, tags=["hard"]),
        ],
        tags=["dist"],
        description="About things",
    )
    build(runner)
    log = collection.import_package(project / "out" / "demo.en.apkg")
    assert log.counts() == {"new": 2, "updated": 0, "duplicate": 0, "conflicting": 0}
    single = collection.note_by_item("single")
    assert single["Question"] == "Which &lt;is&gt; right &amp; true?"
    assert without_versions(single["Choices"]) == (
        '<ol><li data-choice="1">single choice 1</li>'
        '<li data-choice="2" data-correct="true">single choice 2</li>'
        '<li data-choice="3">single choice 3</li>'
        '<li data-choice="4">single choice 4</li></ol>'
    )
    assert single["Answer"] == "single choice 2"
    assert single["Correct"] == "2"
    assert single["Shuffle"] == ""
    assert single["Explanation"] == "Explanation: single."
    assert (single["Language"], single["Direction"]) == ("en", "ltr")
    assert single.tags == ["dist"]
    multi = collection.note_by_item("multi")
    assert multi["Correct"] == "1 3"
    assert multi["Answer"] == "multi choice 1<br>multi choice 3"
    assert multi["Shuffle"] == "shuffle"
    assert sorted(multi.tags) == ["dist", "hard"]
    # Anki computes the sort field itself: the browser sorts by question
    sort_fields = collection.col.db.list("select sfld from notes order by sfld")
    assert sort_fields == ["Question multi?", "Which <is> right & true?"]
    assert collection.deck_names() == {"demo quiz (en)"}
    deck = collection.col.decks.by_name("demo quiz (en)")
    assert deck is not None and "About things" in deck["desc"]
    assert {
        c.did for c in (collection.col.get_card(cid) for cid in collection.col.find_cards(""))
    } == {deck["id"]}


def test_editing_one_item_updates_exactly_that_note_and_keeps_reviews(
    project: Path, runner: CliRunner, collection: AnkiCollection, monkeypatch: pytest.MonkeyPatch
) -> None:
    items = [item("one"), item("two", 2), item("three", 3)]
    write_bank(project / "banks", items=items)
    build(runner, 1_700_000_000, monkeypatch)
    package = project / "out" / "demo.en.apkg"
    collection.import_package(package)
    assert collection.review_all() == 3
    reviews = collection.revlog_count()
    assert reviews == 3
    before = {c: collection.col.get_card(c).ivl for c in collection.col.find_cards("")}
    assert all(ivl > 0 for ivl in before.values())
    old_ids = {n.guid: n.id for n in collection.notes()}

    items[1] = item("two", 2, explanation="A better explanation.")
    write_bank(project / "banks", items=items)
    output = build(runner, 1_700_000_500, monkeypatch)
    assert "(0 new, 1 changed, 2 unchanged, 0 removed)" in output
    log = collection.import_package(package)

    assert log.counts() == {"new": 0, "updated": 1, "duplicate": 2, "conflicting": 0}
    assert collection.note_by_item("two")["Explanation"] == "A better explanation."
    assert collection.revlog_count() == reviews
    assert {c: collection.col.get_card(c).ivl for c in collection.col.find_cards("")} == before
    assert {n.guid: n.id for n in collection.notes()} == old_ids


def test_edit_within_the_same_second_is_still_newer(
    project: Path, runner: CliRunner, collection: AnkiCollection
) -> None:
    items = [item("one")]
    write_bank(project / "banks", items=items)
    build(runner)
    collection.import_package(project / "out" / "demo.en.apkg")
    write_bank(project / "banks", items=[item("one", question="Changed?")])
    build(runner)  # same SOURCE_DATE_EPOCH: the clock did not move
    log = collection.import_package(project / "out" / "demo.en.apkg")
    assert log.counts() == {"new": 0, "updated": 1, "duplicate": 0, "conflicting": 0}
    assert collection.note_by_item("one")["Question"] == "Changed?"
    assert collection.col.db.list("select sfld from notes") == ["Changed?"]


def test_adding_an_item_gives_exactly_one_new_note(
    project: Path, runner: CliRunner, collection: AnkiCollection
) -> None:
    write_bank(project / "banks", items=[item("one"), item("two")])
    build(runner)
    collection.import_package(project / "out" / "demo.en.apkg")
    write_bank(project / "banks", items=[item("one"), item("new-one"), item("two")])
    output = build(runner)
    assert "3 notes (1 new, 0 changed, 2 unchanged, 0 removed)" in output
    log = collection.import_package(project / "out" / "demo.en.apkg")
    assert log.counts() == {"new": 1, "updated": 0, "duplicate": 2, "conflicting": 0}
    assert len(collection.notes()) == 3


def test_languages_of_one_topic_never_overwrite_each_other(
    project: Path, runner: CliRunner, collection: AnkiCollection
) -> None:
    write_bank(project / "banks", language="en", items=[item("same", question="English?")])
    write_bank(project / "banks", language="de", items=[item("same", question="Deutsch?")])
    build(runner)
    assert collection.import_package(project / "out" / "demo.en.apkg").new == 1
    assert collection.import_package(project / "out" / "demo.de.apkg").new == 1
    assert collection.note_by_item("same", "en")["Question"] == "English?"
    assert collection.note_by_item("same", "de")["Question"] == "Deutsch?"
    assert collection.deck_names() == {"demo quiz (en)", "demo quiz (de)"}


def test_rebuilding_unchanged_banks_is_byte_identical(
    project: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_bank(project / "banks")
    build(runner, 1_700_000_000, monkeypatch)
    first = (project / "out" / "demo.en.apkg").read_bytes()
    lock = (project / "banks" / "ankigen.lock").read_bytes()
    # a later clock changes nothing when nothing changed
    build(runner, 1_750_000_000, monkeypatch)
    assert (project / "out" / "demo.en.apkg").read_bytes() == first
    assert (project / "banks" / "ankigen.lock").read_bytes() == lock
    # nor does a fresh output folder
    (project / "out" / "demo.en.apkg").unlink()
    build(runner, 1_790_000_000, monkeypatch)
    assert (project / "out" / "demo.en.apkg").read_bytes() == first


def test_packages_are_deflated_with_fixed_times_and_no_temporary_names(
    project: Path, runner: CliRunner
) -> None:
    write_bank(project / "banks")
    build(runner)
    with zipfile.ZipFile(project / "out" / "demo.en.apkg") as archive:
        infos = archive.infolist()
    assert [i.filename for i in infos] == ["collection.anki2", "media"]
    assert all(i.compress_type == zipfile.ZIP_DEFLATED for i in infos)
    assert all(i.date_time == (1980, 1, 1, 0, 0, 0) for i in infos)
    assert infos[0].compress_size < infos[0].file_size / 5


@pytest.mark.parametrize("items", [1, 1_500])
def test_the_collection_has_large_pages_no_indexes_and_no_free_page(
    project: Path, runner: CliRunner, tmp_path: Path, items: int
) -> None:
    """The collection is written without a VACUUM where its notes fill the pages the
    dropped indexes left, and copied where they do not (a small deck)."""
    import sqlite3

    write_bank(project / "banks", items=[item(f"i{n}") for n in range(items)])
    build(runner)
    database = tmp_path / "collection.anki2"
    with zipfile.ZipFile(project / "out" / "demo.en.apkg") as archive:
        database.write_bytes(archive.read("collection.anki2"))
    conn = sqlite3.connect(database)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("PRAGMA page_size").fetchone() == (65536,)
        assert conn.execute("PRAGMA freelist_count").fetchone() == (0,)
        assert conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'").fetchall() == []
        assert conn.execute("SELECT count(*) FROM notes").fetchone() == (items,)
    finally:
        conn.close()


def test_the_archive_reads_back_exactly_within_five_percent_of_zlib_best() -> None:
    import io
    import random

    from ankigen.apkg.package import zip_bytes

    words = [bytes(random.Random(n).choices(b"abcdefgh ", k=7)) for n in range(300)]
    text = b" ".join(random.Random(1).choices(words, k=40_000))
    entries = [("collection.anki2", text), ("media", b"{}"), ("0", b""), ("é.png", b"\x89PNG")]
    data = zip_bytes(entries)
    assert zip_bytes(entries) == data  # the same entries, the same bytes
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert archive.testzip() is None  # every CRC checks out
        infos = archive.infolist()
        assert [(i.filename, archive.read(i)) for i in infos] == entries
    assert all(i.compress_type == zipfile.ZIP_DEFLATED for i in infos)
    assert all(i.date_time == (1980, 1, 1, 0, 0, 0) for i in infos)
    assert all(i.external_attr == 0o644 << 16 and i.create_system == 3 for i in infos)
    by_zlib = io.BytesIO()
    with zipfile.ZipFile(by_zlib, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for name, content in entries:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED  # a ZipInfo is stored by default
            archive.writestr(info, content)
    assert len(by_zlib.getvalue()) < len(text) // 3  # deflated, not stored
    # libdeflate's level 6 (`DEFLATE_LEVEL`): a real deck's package is 3% larger than
    # zlib's best makes it, in a quarter of its time
    assert len(data) <= 1.05 * len(by_zlib.getvalue())


def test_retitled_deck_keeps_cards_where_they_are(
    project: Path, runner: CliRunner, collection: AnkiCollection
) -> None:
    """Anki matches decks by name and never moves existing cards."""
    write_bank(project / "banks", items=[item("one")])
    build(runner)
    collection.import_package(project / "out" / "demo.en.apkg")
    write_bank(project / "banks", items=[item("one"), item("two")], title="Renamed")
    build(runner)
    collection.import_package(project / "out" / "demo.en.apkg")
    assert collection.deck_names() == {"demo quiz (en)", "Renamed (en)"}
    decks = {
        collection.col.decks.name(collection.col.get_card(c).did): collection.col.get_card(
            c
        ).note()["ItemId"]
        for c in collection.col.find_cards("")
    }
    assert decks == {"demo quiz (en)": "one", "Renamed (en)": "two"}


def test_deck_override_and_language_case_keep_identity(
    project: Path, runner: CliRunner, collection: AnkiCollection
) -> None:
    write_bank(project / "banks", language="pt-br", deck="Quizzes::Demo PT")
    build(runner)
    assert (project / "out" / "demo.pt-BR.apkg").exists()
    collection.import_package(project / "out" / "demo.pt-BR.apkg")
    assert "Quizzes::Demo PT" in collection.deck_names()
    (project / "banks" / "demo" / "pt-br.yaml").unlink()
    write_bank(project / "banks", language="PT-BR", deck="Quizzes::Demo PT")
    build(runner)
    log = collection.import_package(project / "out" / "demo.pt-BR.apkg")
    assert log.new == 0


def test_new_templates_update_the_note_type_without_conflicts(
    project: Path, runner: CliRunner, collection: AnkiCollection, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Anki matches the note type by id and field/template names and takes newer templates."""
    from ankigen.apkg import notetype

    write_bank(project / "banks", items=[item("one")])
    build(runner, 1_700_000_000, monkeypatch)
    collection.import_package(project / "out" / "demo.en.apkg")
    # read (and so cached by the anki library) before the update is imported
    before = collection.col.models.by_name("ankigen multiple choice v1")
    assert before is not None and "outline: 1px solid red" not in before["css"]

    original = notetype._read

    def restyled(name: str) -> str:
        text = original(name)
        return text + "\n.ag-card { outline: 1px solid red; }\n" if name == "card.css" else text

    monkeypatch.setattr(notetype, "_read", restyled)
    monkeypatch.setattr(notetype, "_templates", None)
    notetype.schema_hash.cache_clear()
    try:
        write_bank(project / "banks", items=[item("one", question="New?")])
        output = build(runner, 1_700_000_500, monkeypatch)
        log = collection.import_package(project / "out" / "demo.en.apkg")
    finally:
        notetype._templates = None  # made from the restyled file
        notetype.schema_hash.cache_clear()
    assert "(0 new, 1 changed, 0 unchanged, 0 removed)" in output
    assert log.counts() == {"new": 0, "updated": 1, "duplicate": 0, "conflicting": 0}
    models = collection.col.models.all_names_and_ids()
    assert [m.name for m in models if m.name.startswith("ankigen")] == [
        "ankigen multiple choice v1"
    ]
    cached = collection.col.models.by_name("ankigen multiple choice v1")
    assert cached is not None and "outline: 1px solid red" in cached["css"]
    assert "outline: 1px solid red" in collection.note_type("ankigen multiple choice v1")["css"]


def _run_python(script: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`script` in a fresh interpreter, with this checkout's ankigen: what a process
    loads is seen only from its start."""
    env = dict(os.environ, PYTHONPATH=str(SRC))
    return subprocess.run(
        [sys.executable, "-c", script], cwd=cwd, env=env, capture_output=True, text=True
    )


def test_genanki_is_imported_without_asyncio(tmp_path: Path) -> None:
    """genanki's `cached_property` package imports asyncio; while genanki is imported the
    standard library's descriptor stands in, and only then (the package stays usable)."""
    write_bank(tmp_path / "banks", "demo", "en")
    script = """
import sys
from pathlib import Path
from ankigen.builder.pipeline import build
build(Path("banks"), Path("out"))
assert Path("out/demo.en.apkg").is_file()
import functools, genanki.model
print("asyncio" in sys.modules, "cached_property" in sys.modules,
      genanki.model.cached_property is functools.cached_property)
import cached_property
print(hasattr(cached_property, "threaded_cached_property"))
"""
    done = _run_python(script, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "False False True\nTrue\n"


def test_genanki_is_imported_without_zipfile_and_tempfile(tmp_path: Path) -> None:
    """genanki imports them for its own package writer, which ankigen never calls: they
    are imported only when genanki uses them, and its writer still works."""
    script = """
import sys
from ankigen.apkg.genanki_loader import load_genanki
genanki = load_genanki()
print("zipfile" in sys.modules, "tempfile" in sys.modules)
model = genanki.Model(1, "M", fields=[{"name": "F"}], templates=[
    {"name": "C", "qfmt": "{{F}}", "afmt": "{{F}}"}])
deck = genanki.Deck(2, "D")
deck.add_note(genanki.Note(model=model, fields=["x"]))
genanki.Package(deck).write_to_file("written.apkg")
import zipfile
print(zipfile.ZipFile("written.apkg").namelist()[:1], type(sys.modules["zipfile"]).__name__)
"""
    done = _run_python(script, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "False False\n['collection.anki2'] module\n"


def test_a_database_is_read_the_same_where_sqlite_cannot_serialize(tmp_path: Path) -> None:
    """An SQLite older than 3.36 has no `serialize`: the in-memory database is copied to a
    scratch file instead, with the same tables and rows."""
    import sqlite3

    from ankigen.apkg.package import database_bytes

    memory = sqlite3.connect(":memory:")
    memory.execute("PRAGMA page_size = 65536")
    memory.execute("CREATE TABLE notes (id integer primary key, flds text)")
    memory.executemany("INSERT INTO notes VALUES (?, ?)", [(n, "x" * n) for n in range(500)])
    memory.commit()

    class WithoutSerialize:
        def backup(self, target: sqlite3.Connection) -> None:
            memory.backup(target)

    def rows(data: bytes, name: str) -> list[tuple[object, ...]]:
        path = tmp_path / name
        path.write_bytes(data)
        with contextlib.closing(sqlite3.connect(path)) as read:
            assert read.execute("PRAGMA page_size").fetchone() == (65536,)
            return read.execute("SELECT * FROM notes ORDER BY id").fetchall()

    serialized = database_bytes(memory)
    copied = database_bytes(WithoutSerialize())  # type: ignore[arg-type]
    assert rows(copied, "copied.db") == rows(serialized, "serialized.db")
    assert len(rows(copied, "copied.db")) == 500


def test_banks_their_entries_stand_for_are_not_held_while_others_are_checked(
    project: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bank read only to be hashed (its status not settled yet, as after a checkout)
    whose bank cache entry stands for it is let go before the banks are checked: ten
    banks of 10,000 items were 65 MB held to the end of an edit, counted twice once the
    worker was forked. Only the edited bank is held; the build is the same."""
    from ankigen.builder import pipeline

    write_bank(project / "banks", items=[item("one"), item("two", 2)])
    write_bank(project / "banks", language="de", items=[item("one"), item("two", 2)])
    assert invoke(runner, "build").exit_code == 0
    write_bank(
        project / "banks", language="de", items=[item("one", question="Eins?"), item("two", 2)]
    )
    held: dict[str, bool] = {}
    real = pipeline.check_outlines

    def spy(sources: Any, *args: Any, **kwargs: Any) -> Any:
        held.update({Path(s.shown).name: s.data != b"" for s in sources})
        return real(sources, *args, **kwargs)

    monkeypatch.setattr(pipeline, "check_outlines", spy)
    result = invoke(runner, "build")
    assert result.exit_code == 0, result.output
    assert held == {"en.yaml": False, "de.yaml": True}
    with zipfile.ZipFile(project / "out" / "demo.de.apkg") as archive:
        assert b"Eins?" in archive.read("collection.anki2")
    assert "wrote out/demo.en.apkg" not in result.output
