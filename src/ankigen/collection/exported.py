"""The notes, note types and decks of a package or collection package that Anki exported.

Anki 2.1.50 and later write the collection as `collection.anki21b`, an SQLite file of
schema 18 compressed with zstd; older versions, and newer ones asked for a legacy export,
write `collection.anki21` (schema 11, note types and decks as JSON in the `col` row); the
oldest write `collection.anki2`. A newer package also holds a `collection.anki2` that
only says "please update Anki": the first of these names found wins, in this order.
The database is read in memory, never opened where it lies, and never written; nothing
larger than the largest collection AnkiWeb syncs is read.
"""

from __future__ import annotations

import io
import json
import sqlite3
import zipfile
from dataclasses import dataclass
from pathlib import Path

from ankigen.apkg.limits import COLLECTION_NAMES, MAX_COLLECTION
from ankigen.core.errors import AnkigenError

_SQLITE = b"SQLite format 3\x00"
_ZSTD = b"\x28\xb5\x2f\xfd"


class ExportedError(AnkigenError):
    """A file that is not a package or collection Anki exported, or one too damaged to read."""


@dataclass(frozen=True)
class Notetype:
    id: int
    name: str
    fields: tuple[str, ...]
    templates: tuple[str, ...]


@dataclass(frozen=True)
class AnkiNote:
    id: int
    guid: str
    notetype: int
    fields: tuple[str, ...]
    tags: tuple[str, ...]
    deck: str
    """The deck of its first card, its levels joined by `::` ("" if it has no card)."""
    modified: int


@dataclass(frozen=True)
class Exported:
    path: Path
    notetypes: dict[int, Notetype]
    notes: tuple[AnkiNote, ...]
    media: dict[str, str]
    """Media file name -> the zip member that holds it."""

    def fields_of(self, note: AnkiNote) -> dict[str, str]:
        """A note's fields by name."""
        names = self.notetypes[note.notetype].fields
        return dict(zip(names, note.fields, strict=False))


def read_exported(path: Path, data: bytes | None = None) -> Exported:
    """What `path` holds, or `data` read from it; an ExportedError saying why it cannot
    be read."""
    try:
        archive = zipfile.ZipFile(path if data is None else io.BytesIO(data))
    except FileNotFoundError:
        raise ExportedError(f"{path}: no such file") from None
    except (zipfile.BadZipFile, OSError) as error:
        raise ExportedError(
            f"{path}: not a package Anki exported (.apkg or .colpkg): {error}"
        ) from None
    with archive:
        names = set(archive.namelist())
        found = next((name for name in COLLECTION_NAMES if name in names), None)
        if found is None:
            raise ExportedError(
                f"{path}: a zip file, but not a package Anki exported: it has no collection"
            )
        raw = _member(archive, path, found)
        media = _media(archive, path, names)
    database = _database(path, found, raw)
    try:
        return _read(path, database, media)
    except sqlite3.DatabaseError as error:
        raise ExportedError(f"{path}: its collection cannot be read: {error}") from None
    finally:
        database.close()


def media_file(path: Path, archive: zipfile.ZipFile, member: str, limit: int) -> bytes:
    """A media file of the package `archive` opens, by its zip member (see
    `Exported.media`); an ExportedError if it is missing, damaged or over `limit` bytes."""
    try:
        data = _member(archive, path, member, limit)
    except KeyError as error:
        raise ExportedError(f"{path}: media file {member} cannot be read: {error}") from None
    # a package of Anki 2.1.50 and later compresses each media file with zstd too
    return _unzstd(path, member, data, limit) if data.startswith(_ZSTD) else data


def _member(archive: zipfile.ZipFile, path: Path, name: str, limit: int = MAX_COLLECTION) -> bytes:
    info = archive.getinfo(name)
    if info.file_size > limit:
        raise ExportedError(f"{path}: {name} is larger than the {limit >> 20} MiB Anki syncs")
    try:
        with archive.open(info) as member:
            data = member.read(limit + 1)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as error:
        raise ExportedError(f"{path}: {name} cannot be read: {error}") from None
    if len(data) > limit:
        raise ExportedError(f"{path}: {name} is larger than the {limit >> 20} MiB Anki syncs")
    return data


def _unzstd(path: Path, name: str, data: bytes, limit: int = MAX_COLLECTION) -> bytes:
    import zstandard

    try:
        with zstandard.ZstdDecompressor().stream_reader(data) as reader:
            out = reader.read(limit + 1)
    except zstandard.ZstdError as error:
        raise ExportedError(f"{path}: {name} cannot be decompressed: {error}") from None
    if len(out) > limit:
        raise ExportedError(f"{path}: {name} is larger than the {limit >> 20} MiB Anki syncs")
    return out


def _database(path: Path, name: str, raw: bytes) -> sqlite3.Connection:
    data = _unzstd(path, name, raw) if raw.startswith(_ZSTD) else raw
    if not data.startswith(_SQLITE):
        raise ExportedError(f"{path}: {name} is not an SQLite database")
    # a database in WAL mode (Anki's are) cannot be opened in memory: its header's read
    # and write versions (bytes 18 and 19) say 2; 1 is the same file with a rollback journal
    data = data[:18] + b"\x01\x01" + data[20:]
    database = sqlite3.connect(":memory:")
    try:
        database.deserialize(data)
        database.execute("PRAGMA query_only = ON")
        database.execute("SELECT count(*) FROM notes").fetchone()
    except sqlite3.DatabaseError as error:
        database.close()
        raise ExportedError(f"{path}: its collection cannot be read: {error}") from None
    return database


def _read(path: Path, database: sqlite3.Connection, media: dict[str, str]) -> Exported:
    tables = {row[0] for row in database.execute("SELECT name FROM sqlite_master")}
    if "notetypes" in tables:
        notetypes, decks = _schema18(database)
    else:
        notetypes, decks = _schema11(path, database)
    first_deck: dict[int, int] = {}
    for nid, did in database.execute("SELECT nid, did FROM cards ORDER BY nid, ord DESC"):
        first_deck[nid] = did
    notes = []
    rows = database.execute("SELECT id, guid, mid, flds, tags, mod FROM notes ORDER BY id")
    for nid, guid, mid, fields, tags, modified in rows:
        if mid not in notetypes:
            raise ExportedError(f"{path}: note {nid} has a note type the collection lacks")
        notes.append(
            AnkiNote(
                int(nid),
                str(guid),
                int(mid),
                tuple(str(fields).split("\x1f")),
                tuple(str(tags).split()),
                decks.get(first_deck.get(nid, -1), ""),
                int(modified),
            )
        )
    return Exported(path, notetypes, tuple(notes), media)


_Kinds = tuple[dict[int, Notetype], dict[int, str]]
"""Note types by id, and deck names by id."""


def _schema18(database: sqlite3.Connection) -> _Kinds:
    fields: dict[int, list[str]] = {}
    for ntid, name in database.execute("SELECT ntid, name FROM fields ORDER BY ntid, ord"):
        fields.setdefault(ntid, []).append(str(name))
    templates: dict[int, list[str]] = {}
    for ntid, name in database.execute("SELECT ntid, name FROM templates ORDER BY ntid, ord"):
        templates.setdefault(ntid, []).append(str(name))
    notetypes = {
        int(ntid): Notetype(
            int(ntid), str(name), tuple(fields.get(ntid, ())), tuple(templates.get(ntid, ()))
        )
        for ntid, name in database.execute("SELECT id, name FROM notetypes")
    }
    decks = {
        int(did): str(name).replace("\x1f", "::")
        for did, name in database.execute("SELECT id, name FROM decks")
    }
    return notetypes, decks


def _schema11(path: Path, database: sqlite3.Connection) -> _Kinds:
    row = database.execute("SELECT models, decks FROM col").fetchone()
    try:
        models, decks = json.loads(row[0]), json.loads(row[1])
        notetypes = {
            int(key): Notetype(
                int(key),
                str(model["name"]),
                tuple(str(f["name"]) for f in sorted(model["flds"], key=lambda f: f["ord"])),
                tuple(str(t["name"]) for t in sorted(model["tmpls"], key=lambda t: t["ord"])),
            )
            for key, model in models.items()
        }
        names = {int(key): str(deck["name"]) for key, deck in decks.items()}
    except (TypeError, ValueError, KeyError, AttributeError) as error:
        raise ExportedError(f"{path}: its note types cannot be read: {error!r}") from None
    return notetypes, names


def _media(archive: zipfile.ZipFile, path: Path, names: set[str]) -> dict[str, str]:
    """The package's media map: JSON in older packages, zstd-compressed protobuf
    (`MediaEntries`) in newer ones; each file is the zip member named by its index."""
    if "media" not in names:
        return {}
    raw = _member(archive, path, "media", 64 * 1024 * 1024)
    if raw.startswith(_ZSTD):
        try:
            entries = _media_entries(_unzstd(path, "media", raw))
        except ExportedError as error:
            raise ExportedError(f"{path}: its media list cannot be read: {error}") from None
        return {name: str(index) for index, name in enumerate(entries) if str(index) in names}
    try:
        mapping = json.loads(raw.decode("utf-8") or "{}")
    except ValueError as error:
        raise ExportedError(f"{path}: its media list cannot be read: {error}") from None
    if not isinstance(mapping, dict):
        raise ExportedError(f"{path}: its media list is not a list of files")
    return {str(name): str(key) for key, name in mapping.items() if str(key) in names}


def _media_entries(data: bytes) -> list[str]:
    """The names in Anki's `MediaEntries` message (repeated `MediaEntry entries = 1`,
    each with `string name = 1`): protobuf's wire format, read for these two fields."""
    names = []
    for field, value in _protobuf(data):
        if field == 1 and isinstance(value, bytes):
            entry = dict(_protobuf(value))
            name = entry.get(1, b"")
            names.append(name.decode("utf-8", "replace") if isinstance(name, bytes) else "")
    return names


def _protobuf(data: bytes) -> list[tuple[int, int | bytes]]:
    fields: list[tuple[int, int | bytes]] = []
    at = 0

    def varint() -> int:
        nonlocal at
        shift = value = 0
        while True:
            if at >= len(data) or shift > 63:
                raise ExportedError("a damaged media list")
            byte = data[at]
            at += 1
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                return value
            shift += 7

    while at < len(data):
        key = varint()
        kind, number = key & 7, key >> 3
        if kind == 0:
            fields.append((number, varint()))
        elif kind == 2:
            size = varint()
            if at + size > len(data):
                raise ExportedError("a damaged media list")
            fields.append((number, data[at : at + size]))
            at += size
        elif kind in (1, 5):
            at += 8 if kind == 1 else 4
        else:
            raise ExportedError("a damaged media list")
    return fields
