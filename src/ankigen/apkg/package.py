"""Deterministic .apkg packages: their bytes, made in memory (`core.atomic` writes them).

genanki makes the collection database; the zip is made here so that it is deflated,
has fixed entry times and order, and contains no temporary names.
"""

from __future__ import annotations

import functools
import itertools
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ankigen.apkg import notetype
from ankigen.apkg.genanki_loader import load_genanki
from ankigen.apkg.kept import kept_templates, notetype_name
from ankigen.apkg.notetype import NOTETYPE_ID, NOTETYPE_NAME
from ankigen.bank.model import KeptNotetype
from ankigen.core.errors import OutputError

# sqlite3 and deflate are imported where they are used: a build with
# nothing changed writes nothing, and importing them was a tenth of its time

if TYPE_CHECKING:
    import sqlite3

    import genanki

ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)
FORBIDDEN_NAMES = ("collection.apkg",)
FORBIDDEN_PREFIXES = ("backup-",)


@dataclass(frozen=True)
class PackageNote:
    """One note as a package holds it: its fields filled in, ready for the notes table."""

    guid: str
    fields: tuple[str, ...]
    tags: tuple[str, ...]
    mtime: int


@dataclass(frozen=True)
class PackageDeck:
    """A deck's package content: everything its database is made from."""

    deck_id: int
    name: str
    description: str
    notes: tuple[PackageNote, ...]
    first_note_id: int
    notetype_mtime: int
    parents: tuple[tuple[int, str, str], ...] = ()
    """Parent decks as (id, name, description): Anki imports and updates their descriptions."""
    kept: KeptNotetype | None = None
    """The adopted deck's note type that the notes keep, instead of ours (`apkg.kept`)."""


def genanki_model(kept: KeptNotetype | None = None) -> genanki.Model:
    if kept is None:
        return _our_model(notetype.templates())
    genanki = load_genanki()
    t = kept_templates(kept)
    return genanki.Model(
        model_id=kept.id,
        name=notetype_name(kept),
        fields=[{"name": name} for name in kept.fields],
        templates=[{"name": kept.template, "qfmt": t.front, "afmt": t.back}],
        css=t.css,
        sort_field_index=kept.fields.index(kept.sort_field or kept.question),
    )


@functools.cache
def _our_model(t: notetype.Templates) -> genanki.Model:
    """Our note type as genanki's model, made once for its templates: genanki works out
    its required fields (`_req`) by rendering them, 2 ms a package; writing a package
    only fills in what its JSON leaves unset, the same each time."""
    genanki = load_genanki()
    return genanki.Model(
        model_id=NOTETYPE_ID,
        name=NOTETYPE_NAME,
        fields=[{"name": name} for name in notetype.FIELDS],
        templates=[{"name": notetype.TEMPLATE_NAME, "qfmt": t.front, "afmt": t.back}],
        css=t.css,
        sort_field_index=0,
    )


def prepare() -> None:
    """Load what making a package needs, ahead of it: genanki. Done by the one worker of
    an edit once it has sent its check, while the build proper takes the check in and
    sends the deck's job: time it waited idle, and the package took after the plan (10
    to 15 ms of an edit at 10 x 1,000 items). The note type's templates come with the
    job (`notetype.adopt_templates`), and our model is made with the package."""
    load_genanki()


def _note_ids(first: int) -> Iterator[int]:
    # genanki draws a note id, then one id per card; ours have one card each,
    # and a card may share its note's number (they live in different tables)
    for note_id in itertools.count(first):
        yield note_id
        yield note_id


def check_file_name(name: str) -> None:
    lowered = name.lower()
    if lowered in FORBIDDEN_NAMES or lowered.startswith(FORBIDDEN_PREFIXES):
        raise OutputError(
            f"refusing to write {name!r}: Anki treats that name as a whole-collection backup "
            "and would replace the learner's collection on import"
        )


def collection_bytes(deck: PackageDeck) -> bytes:
    """The package's database, made in memory: written to a scratch file and read back,
    it cost a temporary folder, 2 MB written and read, and loading tempfile (2 to 3 ms
    of an edit's package at 10 x 1,000 items)."""
    genanki = load_genanki()
    model = genanki_model(deck.kept)
    gdeck = genanki.Deck(deck.deck_id, deck.name, description=deck.description)
    gdeck.add_model(model)  # genanki adds the models of a deck's notes; ours come after
    import sqlite3

    conn = sqlite3.connect(":memory:")
    try:
        # no journal (genanki's scripts commit twice, and each sync cost more than
        # writing the notes)
        conn.execute("PRAGMA journal_mode = OFF")
        # large pages, and no indexes: Anki reads a package's tables whole and never
        # looks rows up by them (the tests import without them); packages about 14%
        # smaller. Set before the first table and dropped while the tables are empty,
        # the notes then fill the pages the indexes left: no VACUUM to copy the file
        # (two fifths of this function's time for 10,000 notes; 0.03% larger deflated)
        conn.execute("PRAGMA page_size = 65536")
        cursor = conn.cursor()
        parents = [genanki.Deck(i, name, description=text) for i, name, text in deck.parents]
        ids = _note_ids(deck.first_note_id)
        genanki.Package([*parents, gdeck]).write_to_db(cursor, deck.notetype_mtime, ids)
        indexes = conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'ix_%'"
        ).fetchall()
        for (name,) in indexes:
            conn.execute(f'DROP INDEX "{name}"')
        notes, cards = _rows(deck, model, ids)
        cursor.executemany("INSERT INTO notes VALUES(?,?,?,?,?,?,?,?,?,?,?)", notes)
        cursor.executemany("INSERT INTO cards VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", cards)
        conn.commit()
        # a small deck leaves some of those pages free: copied away, as before
        if conn.execute("PRAGMA freelist_count").fetchone() != (0,):
            conn.execute("VACUUM")
        return database_bytes(conn)
    finally:
        conn.close()


def database_bytes(conn: sqlite3.Connection) -> bytes:
    """The file an in-memory database would be: sqlite3's `serialize`, where SQLite has
    it (every SQLite since 3.36 builds it in); else copied to a scratch file and read
    back, as an older SQLite (Ubuntu 20.04's, RHEL 8's) must."""
    if hasattr(conn, "serialize"):
        data: bytes = conn.serialize()
        return data
    import sqlite3
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory(prefix="ankigen-") as folder:
        path = Path(folder) / "collection.anki2"
        copy = sqlite3.connect(path)
        try:
            conn.backup(copy)
        finally:
            copy.close()
        return path.read_bytes()


# ivl, factor, reps, lapses, left, odue, odid, flags, data
_NEW_CARD = (0, 0, 0, 0, 0, 0, 0, 0, "")


def _rows(
    deck: PackageDeck, model: genanki.Model, ids: Iterator[int]
) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    """The notes' and cards' rows, as genanki's `Note.write_to_db` makes them, with each
    note's own modification time, and an empty sort field (every Anki importer computes
    it again: 2% smaller; a test checks the browser still sorts by question). Made here
    rather than through a genanki note per item: a fifth of the time of a package."""
    notes: list[tuple[object, ...]] = []
    cards: list[tuple[object, ...]] = []
    count = len(model.fields)
    templates = [
        (template, any if which == "any" else all, fields) for template, which, fields in model._req
    ]
    for position, note in enumerate(deck.notes, start=1):
        fields = note.fields
        if len(fields) != count or any(" " in tag for tag in note.tags):
            raise ValueError(f"note {note.guid!r}: {len(fields)} fields, tags {note.tags!r}")
        note_id = next(ids)
        tags = " " + " ".join(note.tags) + " "
        flds = "\x1f".join(fields)
        # id, guid, mid, mod, usn, tags, flds, sfld, csum, flags, data
        notes.append((note_id, note.guid, model.model_id, note.mtime, -1, tags, flds, "", 0, 0, ""))
        for template, which, required in templates:
            if which(fields[i] for i in required):
                # id, nid, did, ord, mod, usn, type, queue, due, then nothing studied yet
                card = (next(ids), note_id, deck.deck_id, template, note.mtime, -1, 0, 0, position)
                cards.append((*card, *_NEW_CARD))
    return notes, cards


def apkg_bytes(
    deck: PackageDeck,
    media: Sequence[tuple[str, bytes]] = (),
    compressing: Callable[[], object] | None = None,
) -> bytes:
    """The complete package; the same input gives the same bytes. `compressing` is called
    once the database is made, as its compression starts: libdeflate leaves the
    interpreter to other threads for the rest, about half of a package's time."""
    database = collection_bytes(deck)
    if compressing is not None:
        compressing()
    entries: list[tuple[str, bytes]] = [("collection.anki2", database)]
    media_sorted = sorted(media)
    entries.append(
        ("media", json.dumps({str(i): name for i, (name, _) in enumerate(media_sorted)}).encode())
    )
    entries.extend((str(i), data) for i, (_, data) in enumerate(media_sorted))
    return zip_bytes(entries)


# libdeflate's level 6 (its default, as zlib's): a database of 1,000 notes in 10 ms,
# where level 7 took 18 (packages 5% smaller) and zlib's best (level 9) 35 (1% smaller
# than level 7). After one edit the package is compressed at the end of the critical
# path, beside the bank's cache entry and the lock being written: level 7 was 9 ms of
# an edit's 0.21 s at 10 x 1,000 items, and a tenth of a cold build
DEFLATE_LEVEL = 6
_DOS_DATE = (ZIP_EPOCH[0] - 1980) << 9 | ZIP_EPOCH[1] << 5 | ZIP_EPOCH[2]
_DOS_TIME = ZIP_EPOCH[3] << 11 | ZIP_EPOCH[4] << 5 | ZIP_EPOCH[5] // 2
_VERSION = 20  # what deflate needs: zip 2.0
_MADE_ON_UNIX = 3 << 8 | _VERSION  # the permissions are Unix ones
_MODE = 0o644 << 16


def zip_bytes(entries: Sequence[tuple[str, bytes]]) -> bytes:
    """A zip archive of `entries` in their order, each deflated (by libdeflate, which
    `zipfile` cannot use), with fixed times and permissions: the same entries give the
    same bytes."""
    import struct

    import deflate

    if len(entries) >= 0xFFFF:  # more would need zip64: no bank comes near
        raise OutputError(f"a package holds fewer than 65,535 files; this one {len(entries)}")
    body = bytearray()
    directory = bytearray()
    for name, data in entries:
        if len(data) >= 0xFFFFFFFF:  # zip64 again
            raise OutputError(f"{name}: a file in a package is limited to 4 GiB")
        packed = deflate.deflate_compress(data, DEFLATE_LEVEL)
        encoded = name.encode()
        flags = 0 if name.isascii() else 0x800  # the name is UTF-8
        crc = deflate.crc32(data)
        common = (flags, 8, _DOS_TIME, _DOS_DATE, crc, len(packed), len(data), len(encoded))
        directory += struct.pack(
            "<IHHHHHHIIIHHHHHII",
            0x02014B50,
            _MADE_ON_UNIX,
            _VERSION,
            *common,
            0,  # extra field
            0,  # comment
            0,  # disk
            0,  # internal attributes
            _MODE,
            len(body),
        )
        directory += encoded
        body += struct.pack("<IHHHHHIIIHH", 0x04034B50, _VERSION, *common, 0)
        body += encoded
        body += packed
    if len(body) + len(directory) >= 0xFFFFFFFF:  # zip64 again
        raise OutputError("a package is limited to 4 GiB")
    end = struct.pack(
        "<IHHHHIIH", 0x06054B50, 0, 0, len(entries), len(entries), len(directory), len(body), 0
    )
    return bytes(body + directory + end)
