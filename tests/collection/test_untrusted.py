"""Hostile input to `pull` and `import --from apkg`: packages whose SQLite was written to
hang, crash or fool the reader, and an AnkiConnect that answers in shapes it never sends.

Each package starts as a real one (ankigen's build, or exported by the real Anki backend)
and has its SQLite altered; each command runs as its own process, as a user runs it, with
a timeout that only bounds a failure: a finished command is read at once.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import zipfile
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import zstandard
from anki.collection import ExportAnkiPackageOptions
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import SRC, AnkiCollection, write_bank
from tests.support.ankiconnect import answer, asked

LIMIT = 60.0
"""Seconds a command may take before the test fails: it finishes in one or two."""
UNREADABLE = "not an Anki package ankigen can read: "


def ankigen(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`ankigen ARGS` in its own process, with this checkout's code."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    return subprocess.run(
        [sys.executable, "-m", "ankigen", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=LIMIT,
        check=False,
    )


def files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project built once (banks, lock, out/demo.en.apkg: ankigen's schema 11 package)
    and, beside it, the same deck exported by the real Anki backend (`anki21b.apkg`,
    zstd, schema 18) with one explanation edited in Anki's way, and its legacy export."""
    root = tmp_path_factory.mktemp("made")
    project = root / "project"
    write_bank(project / "banks")
    built = ankigen(project, "build")
    assert built.returncode == 0, built.stderr
    anki = AnkiCollection(root / "anki")
    try:
        anki.import_package(project / "out" / "demo.en.apkg")
        note = anki.note_by_item("one")
        note["Explanation"] = "Edited in Anki."
        anki.col.update_note(note)
        for name, legacy in (("anki21b.apkg", False), ("legacy.apkg", True)):
            options = ExportAnkiPackageOptions(
                with_scheduling=False, with_deck_configs=False, with_media=False, legacy=legacy
            )
            anki.col.export_anki_package(out_path=str(root / name), options=options, limit=None)
    finally:
        anki.close()
    return root


@pytest.fixture
def project(made: Path, tmp_path: Path) -> Path:
    """This test's own copy of the built project, with the Anki exports in it."""
    shutil.copytree(made / "project", tmp_path / "project")
    for name in ("anki21b.apkg", "legacy.apkg"):
        shutil.copy(made / name, tmp_path / "project" / name)
    return tmp_path / "project"


def altered(source: Path, target: Path, *statements: str) -> Path:
    """`source` with its collection changed by SQL statements (the schema writable)."""
    with zipfile.ZipFile(source) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    name = next(
        n for n in ("collection.anki21b", "collection.anki21", "collection.anki2") if n in members
    )
    packed = members[name].startswith(b"\x28\xb5\x2f\xfd")
    data = (
        zstandard.ZstdDecompressor().stream_reader(members[name]).read()
        if packed
        else members[name]
    )
    scratch = target.with_suffix(".db")
    scratch.write_bytes(data)
    database = sqlite3.connect(scratch)
    # Anki's own collation for deck and note type names, as Rust's unicase compares
    database.create_collation(
        "unicase", lambda a, b: (a.casefold() > b.casefold()) - (a.casefold() < b.casefold())
    )
    database.execute("PRAGMA journal_mode = DELETE")
    database.execute("PRAGMA writable_schema = ON")
    for statement in statements:
        database.execute(statement)
    database.commit()
    database.close()
    data = scratch.read_bytes()
    scratch.unlink()
    members[name] = zstandard.ZstdCompressor().compress(data) if packed else data
    with zipfile.ZipFile(target, "w") as archive:
        for member, content in members.items():
            archive.writestr(member, content)
    return target


ENDLESS = (
    "ALTER TABLE notes RENAME TO kept",
    "CREATE VIEW notes AS WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) "
    "SELECT x AS id, 'g' AS guid, 1 AS mid, 'f' AS flds, '' AS tags, 0 AS mod FROM r",
)
NOT_UTF8 = "CAST(X'ff41' AS TEXT)"

# name: (the package altered, its statements, what the error says after "PATH: ")
HOSTILE: dict[str, tuple[str, tuple[str, ...], str]] = {
    "endless-view": ("out/demo.en.apkg", ENDLESS, "its collection's notes is a view, not a table"),
    "endless-view-anki21b": (
        "anki21b.apkg",
        ENDLESS,
        "its collection's notes is a view, not a table",
    ),
    "cross-join-cards": (
        "anki21b.apkg",
        (
            "ALTER TABLE cards RENAME TO kept",
            "CREATE VIEW cards AS SELECT a.* FROM kept a, kept b, kept c, kept d",
        ),
        "its collection's cards is a view, not a table",
    ),
    "virtual-notes": (
        "out/demo.en.apkg",
        (
            "ALTER TABLE notes RENAME TO kept",
            "CREATE VIRTUAL TABLE notes USING fts5(id, guid, mid, flds, tags, mod)",
        ),
        "its collection's notes is a virtual table, not a table",
    ),
    "computed-column": (
        "out/demo.en.apkg",
        (
            "ALTER TABLE notes RENAME TO kept",
            "CREATE TABLE notes (id integer primary key, guid text, mid integer, mod integer, "
            "tags text, flds text AS (printf('%.*c', 100000000, 'x')))",
        ),
        "its collection's notes table has computed columns",
    ),
    "field-not-utf8": (
        "out/demo.en.apkg",
        (f"UPDATE notes SET flds = {NOT_UTF8} || flds",),
        "'s fields: not UTF-8 (byte 0xff at 0)",
    ),
    "field-not-utf8-anki21b": (
        "anki21b.apkg",
        (f"UPDATE notes SET flds = {NOT_UTF8} || flds",),
        "'s fields: not UTF-8 (byte 0xff at 0)",
    ),
    "schema-sql-not-utf8": (
        "out/demo.en.apkg",
        (
            f"UPDATE sqlite_master SET sql = replace(sql, 'graves', 'graves ' || {NOT_UTF8}) WHERE name = 'graves'",
        ),
        'its collection cannot be read by SQLite (malformed database schema (graves) - near "\\xffA"',
    ),
    "flds-column-not-utf8": (
        "anki21b.apkg",
        (
            f"UPDATE sqlite_master SET sql = replace(sql, 'flds', 'fl' || {NOT_UTF8}) WHERE name = 'notes'",
        ),
        "its collection cannot be read by SQLite (no such column: flds)",
    ),
    # a note type without its fields' `ord` (a tool's package Anki refuses too): said
    # plainly, where the message was Python's KeyError('ord')
    "model-field-without-ord": (
        "out/demo.en.apkg",
        ("UPDATE col SET models = replace(models, '\"ord\"', '\"place\"')",),
        "its note types lack 'ord', which Anki needs",
    ),
    "notetype-name-not-utf8": (
        "anki21b.apkg",
        ("DROP INDEX idx_notetypes_name", f"UPDATE notetypes SET name = {NOT_UTF8} || name"),
        "'s name: not UTF-8 (byte 0xff at 0)",
    ),
    "deck-name-not-utf8": (
        "anki21b.apkg",
        ("DROP INDEX idx_decks_name", f"UPDATE decks SET name = {NOT_UTF8} || name"),
        "'s name: not UTF-8 (byte 0xff at 0)",
    ),
    "models-not-utf8": (
        "out/demo.en.apkg",
        (f"UPDATE col SET models = {NOT_UTF8} || models",),
        "its note types (col.models): not UTF-8 (byte 0xff at 0)",
    ),
    "note-type-as-text": (
        "out/demo.en.apkg",
        ("UPDATE notes SET mid = 'x'",),
        "'s note type: not a whole number",
    ),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_package_is_refused_plainly_and_promptly(project: Path, case: str) -> None:
    """Status 1 and one line naming the file, never a traceback or a hang, nothing
    written: by `pull FILE` and, for the three kinds issue 50 found, by `import`."""
    source, statements, said = HOSTILE[case]
    package = altered(project / source, project / f"{case}.apkg", *statements)
    before = files(project)
    commands = [("pull", package.name)]
    if case in ("endless-view", "field-not-utf8-anki21b", "schema-sql-not-utf8"):
        commands.append(("import", package.name, "--from", "apkg", "--topic", "t", "--lang", "en"))
    for command in commands:
        done = ankigen(project, *command)
        assert done.returncode == 1, (command, done.stdout, done.stderr)
        lines = done.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"error: {package.name}: {UNREADABLE}"), (
            lines
        )
        assert said in lines[0], lines
        assert "Traceback" not in done.stderr and "internal error" not in done.stderr
        assert files(project) == before


def test_what_ankigen_does_not_read_may_be_anything(project: Path) -> None:
    """Bytes that are not UTF-8 in a table or column name ankigen never reads, and a
    trigger (which runs only when a table is written): the package pulls as before."""
    junk = altered(
        project / "anki21b.apkg",
        project / "junk.apkg",
        "CREATE TABLE junkq (a, bq)",
        "CREATE TRIGGER t AFTER INSERT ON notes BEGIN DELETE FROM cards; END",
        f"UPDATE sqlite_master SET name = 'junk' || {NOT_UTF8}, tbl_name = 'junk' || {NOT_UTF8}, "
        f"sql = replace(replace(sql, 'junkq', 'junk' || {NOT_UTF8}), 'bq', 'b' || {NOT_UTF8}) "
        "WHERE name = 'junkq'",
    )
    done = ankigen(project, "pull", junk.name, "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "+" in done.stdout and "Edited in Anki." in done.stdout


@pytest.mark.parametrize("name", ["out/demo.en.apkg", "anki21b.apkg", "legacy.apkg"])
def test_genuine_packages_still_pull(project: Path, name: str) -> None:
    """ankigen's own package (nothing to pull) and the real Anki backend's exports, new and
    legacy (the edited explanation comes back)."""
    done = ankigen(project, "pull", name)
    assert done.returncode == 0, done.stderr
    bank = (project / "banks" / "demo" / "en.yaml").read_text("utf-8")
    assert ("Edited in Anki." in bank) == (name != "out/demo.en.apkg"), done.stderr


def test_a_hostile_package_in_out_is_skipped_with_a_warning(project: Path) -> None:
    """OUT/ only tells which notes the last build issued: a hostile file there is named
    in a warning and skipped, and the pull from a genuine export goes on."""
    altered(project / "out" / "demo.en.apkg", project / "out" / "endless.apkg", *ENDLESS)
    schema = HOSTILE["schema-sql-not-utf8"][1]
    altered(project / "out" / "demo.en.apkg", project / "out" / "schema.apkg", *schema)
    done = ankigen(project, "pull", "anki21b.apkg")
    assert done.returncode == 0, done.stderr
    assert (
        f"out/endless.apkg: warning: skipped: {UNREADABLE}its collection's notes is a view"
        in done.stderr
    )
    assert (
        f"out/schema.apkg: warning: skipped: {UNREADABLE}its collection cannot be read by SQLite"
        in done.stderr
    )
    assert "Edited in Anki." in (project / "banks" / "demo" / "en.yaml").read_text("utf-8")


# ---- the budget, and Ctrl-C inside a query


def _database() -> bytes:
    memory = sqlite3.connect(":memory:")
    memory.execute("CREATE TABLE notes (id integer primary key)")
    data = memory.serialize()
    memory.close()
    return data


ENDLESS_QUERY = (
    "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT count(*) FROM r"
)


def test_a_query_is_stopped_at_its_budget_of_steps_or_time() -> None:
    """Behind the schema's checks, every read has a budget: a query that never ends is
    stopped at the steps allowed, or at the time."""
    from ankigen.collection.guarded import GuardedDatabase, Refused

    for steps, seconds, said in (
        (2_000_000, 3600.0, "2,000,000 of SQLite's steps"),
        (10**15, 0.5, "0.5 s"),
    ):
        started = time.monotonic()
        with (
            GuardedDatabase(_database(), steps, seconds) as database,
            pytest.raises(Refused) as refused,
        ):
            database.rows(ENDLESS_QUERY)
        assert f"reading its collection took more than {said}" in str(refused.value)
        assert time.monotonic() - started < LIMIT


def test_ctrl_c_stops_a_long_query_at_once(tmp_path: Path) -> None:
    """Python runs its Ctrl-C handler inside SQLite's progress handler, where sqlite3
    would swallow the KeyboardInterrupt: it comes out of the query all the same."""
    (tmp_path / "db").write_bytes(_database())
    script = f"""
import sys
from pathlib import Path
from ankigen.collection.guarded import GuardedDatabase

database = GuardedDatabase(Path({str(tmp_path / "db")!r}).read_bytes(), 10**15, 3600.0)
# the test's own view of the connection: a function that says the query has begun
database._connection.create_function("begun", 0, lambda: print("begun", flush=True) or 1)
try:
    database.rows({ENDLESS_QUERY.replace("SELECT 1", "SELECT begun()")!r})
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(130)
"""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    process = subprocess.Popen(
        [sys.executable, "-c", script],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        stdout = process.stdout
        assert stdout is not None
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.append(stdout.readline()), daemon=True)
        reader.start()
        reader.join(LIMIT)
        if lines != ["begun\n"]:
            process.kill()
            pytest.fail(f"the query never began: {process.communicate()}")
        process.send_signal(signal.SIGINT)
        interrupted = time.monotonic()
        out, err = process.communicate(timeout=LIMIT)
        assert (process.returncode, out) == (130, "interrupted\n"), err
        assert time.monotonic() - interrupted < 10
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


# ---- AnkiConnect answering in shapes it never sends


class Hostile(BaseHTTPRequestHandler):
    """Answers `version` with 6, `findCards` with no card (none in a filtered deck), and
    every other action with what the test chose."""

    answers: dict[str, Any]

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        action = asked(self)["action"]
        answer(self, self.answers.get(action, {"version": 6, "findCards": []}.get(action)))


@pytest.fixture
def hostile() -> Iterator[tuple[str, dict[str, Any]]]:
    answers: dict[str, Any] = {}
    server = ThreadingHTTPServer(("127.0.0.1", 0), type("H", (Hostile,), {"answers": answers}))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", answers
    server.shutdown()
    server.server_close()
    thread.join(5)


@pytest.mark.parametrize(
    ("action", "answer", "said"),
    [
        ("deckNames", True, "answered deckNames with true; expected a list of deck names"),
        ("deckNames", None, "answered deckNames with null; expected a list of deck names"),
        (
            "deckNames",
            [["demo"]],
            'answered deckNames with [["demo"]]; expected a list of deck names',
        ),
        (
            "deckNames",
            {"demo": 1},
            'answered deckNames with {"demo": 1}; expected a list of deck names',
        ),
        (
            "deckNames",
            ["x" * 100, 7],
            f'answered deckNames with ["{"x" * 75}...; expected a list of deck names',
        ),
        ("version", True, "answered version with true; expected a version number"),
        ("version", [6], "answered version with [6]; expected a version number"),
    ],
    ids=["true", "null", "nested", "object", "long", "version-true", "version-list"],
)
def test_an_answer_of_the_wrong_shape_is_an_error(
    project: Path, hostile: tuple[str, dict[str, Any]], action: str, answer: Any, said: str
) -> None:
    url, answers = hostile
    answers[action] = answer
    done = ankigen(project, "pull", "anki", "--url", url)
    assert done.returncode == 1, done.stderr
    # after "AnkiConnect 6 at URL", once the version was read
    assert done.stderr.splitlines()[-1] == f"error: AnkiConnect at {url} {said}", done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(JSON, JSON)
def test_any_result_is_taken_or_refused_with_a_message(result: Any, error: Any) -> None:
    """Every request the client makes, answered with any result and any error: the
    result it returns has the shape asked for, or an AnkiConnectError says why not."""
    from ankigen.ankiconnect import AnkiConnect, AnkiConnectError

    body = json.dumps({"result": result, "error": error}).encode()

    class Answering(AnkiConnect):
        def _post(self, body_sent: bytes, timeout: float) -> tuple[int, str, bytes]:
            return 200, "OK", body

    client = Answering()
    asks = {
        "version": (client.version, lambda got: isinstance(got, int) and got >= 6),
        "deckNames": (client.deck_names, lambda got: all(isinstance(n, str) for n in got)),
        "exportPackage": (
            lambda: client.export_package("d", Path("x.apkg")),
            lambda got: got is None,
        ),
        "findCards": (
            lambda: client.filtered_decks_holding("d"),
            lambda got: all(isinstance(name, str) for name in got),
        ),
        "importPackage": (
            lambda: client.import_package(Path("x.apkg")),
            lambda got: got["result"] is True,
        ),
    }
    for action, (ask, shaped) in asks.items():
        try:
            got = ask()
        except AnkiConnectError as refused:
            assert 0 < len(str(refused)) < 600, action
        else:
            assert shaped(got), (action, got)


def test_where_sqlite_cannot_open_bytes_a_scratch_copy_is_read_alike(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An SQLite older than 3.36 cannot deserialize: the collection is copied to a scratch
    file, opened read-only and immutable, read alike, and removed; a hostile one is
    refused alike."""
    import tempfile

    import ankigen.collection.guarded
    from ankigen.collection.exported import ExportedError, read_exported

    hostile = altered(project / "anki21b.apkg", project / "endless.apkg", *ENDLESS)
    scratch = project / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    opened: list[str] = []
    connect = sqlite3.connect

    def spying(database: str, **options: Any) -> sqlite3.Connection:
        opened.append(str(database))
        return connect(database, **options)

    monkeypatch.setattr(sqlite3, "connect", spying)
    read = {}
    for in_memory in (True, False):
        monkeypatch.setattr(ankigen.collection.guarded, "IN_MEMORY", in_memory)
        read[in_memory] = [read_exported(project / n) for n in ("anki21b.apkg", "out/demo.en.apkg")]
        with pytest.raises(ExportedError, match="notes is a view, not a table"):
            read_exported(hostile)
        assert list(scratch.iterdir()) == []
    assert opened[:3] == [":memory:"] * 3
    assert len(opened) == 6 and all(
        o.startswith(scratch.as_uri()) and o.endswith("?mode=ro&immutable=1") for o in opened[3:]
    ), opened
    assert read[False] == read[True]
    assert len(read[True][0].notes) == 2 and read[True][0].notes[0].fields
