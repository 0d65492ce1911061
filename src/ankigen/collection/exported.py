"""The notes, note types and decks of a package or collection package that Anki exported.

Anki 2.1.50 and later write the collection as `collection.anki21b`, an SQLite file of
schema 18 compressed with zstd; older versions, and newer ones asked for a legacy export,
write `collection.anki21` (schema 11, note types and decks as JSON in the `col` row); the
oldest write `collection.anki2`. A newer package also holds a `collection.anki2` that
only says "please update Anki": the first of these names found wins, in this order.
The database is read in memory, never opened where it lies, and never written; nothing
larger than the largest collection AnkiWeb syncs is read, and nothing its author wrote
is run (`guarded`): a package is anyone's file.
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass
from pathlib import Path

from ankigen.apkg.limits import COLLECTION_NAMES, MAX_COLLECTION
from ankigen.collection.guarded import GuardedDatabase, Refused, integer, text
from ankigen.core.errors import AnkigenError
from ankigen.core.jsondata import parse_json

_SQLITE = b"SQLite format 3\x00"
_ZSTD = b"\x28\xb5\x2f\xfd"


class ExportedError(AnkigenError):
    """A file that is not a package or collection Anki exported, or one too damaged or
    too strange to read."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason
        """The message without the file's name."""


UNREADABLE = "not an Anki package ankigen can read"


@dataclass(frozen=True)
class Notetype:
    id: int
    name: str
    fields: tuple[str, ...]
    templates: tuple[str, ...]
    sort_field: int = 0
    """The field Anki's browser sorts by (`sortf`), by its number from 0."""


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
        raise ExportedError(path, "no such file") from None
    except (zipfile.BadZipFile, OSError) as error:
        raise ExportedError(
            path, f"not a package Anki exported (.apkg or .colpkg): {error}"
        ) from None
    with archive:
        names = set(archive.namelist())
        found = next((name for name in COLLECTION_NAMES if name in names), None)
        if found is None:
            raise ExportedError(
                path, "a zip file, but not a package Anki exported: it has no collection"
            )
        raw = _member(archive, path, found)
        media = _media(archive, path, names)
    data = _unzstd(path, found, raw) if raw.startswith(_ZSTD) else raw
    try:
        if not data.startswith(_SQLITE):
            raise Refused(f"{found} is not an SQLite database")
        # a database in WAL mode (Anki's are) cannot be opened in memory: its header's
        # read and write versions (bytes 18 and 19) say 2; 1 is the same file with a
        # rollback journal
        with GuardedDatabase(data[:18] + b"\x01\x01" + data[20:]) as database:
            return _read(path, database, media)
    except Refused as error:
        raise ExportedError(path, f"{UNREADABLE}: {error}") from None


def media_file(path: Path, archive: zipfile.ZipFile, member: str, limit: int) -> bytes:
    """A media file of the package `archive` opens, by its zip member (see
    `Exported.media`); an ExportedError if it is missing, damaged or over `limit` bytes."""
    try:
        data = _member(archive, path, member, limit)
    except KeyError as error:
        raise ExportedError(path, f"media file {member} cannot be read: {error}") from None
    # a package of Anki 2.1.50 and later compresses each media file with zstd too
    return _unzstd(path, member, data, limit) if data.startswith(_ZSTD) else data


def _member(archive: zipfile.ZipFile, path: Path, name: str, limit: int = MAX_COLLECTION) -> bytes:
    info = archive.getinfo(name)
    if info.file_size > limit:
        raise ExportedError(path, f"{name} is larger than the {limit >> 20} MiB Anki syncs")
    try:
        with archive.open(info) as member:
            data = member.read(limit + 1)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as error:
        raise ExportedError(path, f"{name} cannot be read: {error}") from None
    if len(data) > limit:
        raise ExportedError(path, f"{name} is larger than the {limit >> 20} MiB Anki syncs")
    return data


def _unzstd(path: Path, name: str, data: bytes, limit: int = MAX_COLLECTION) -> bytes:
    import zstandard

    try:
        with zstandard.ZstdDecompressor().stream_reader(data) as reader:
            out = reader.read(limit + 1)
    except zstandard.ZstdError as error:
        raise ExportedError(path, f"{name} cannot be decompressed: {error}") from None
    if len(out) > limit:
        raise ExportedError(path, f"{name} is larger than the {limit >> 20} MiB Anki syncs")
    return out


_SCHEMA11 = ("col", "notes", "cards")
_SCHEMA18 = ("notetypes", "fields", "templates", "decks", "notes", "cards")


def _read(path: Path, database: GuardedDatabase, media: dict[str, str]) -> Exported:
    tables = {name for (name,) in database.rows("SELECT name FROM sqlite_master")}
    if b"notetypes" in tables:
        database.require_tables(_SCHEMA18)
        notetypes, decks = _schema18(database)
    else:
        database.require_tables(_SCHEMA11)
        notetypes, decks = _schema11(database)
    first_deck: dict[int, int] = {}
    for nid, did in database.rows("SELECT nid, did FROM cards ORDER BY nid, ord DESC"):
        first_deck[nid] = did
    notes = []
    for row in database.rows("SELECT id, guid, mid, flds, tags, mod FROM notes ORDER BY id"):
        nid = integer(row[0], "a note's id")
        mid = integer(row[2], f"note {nid}'s note type")
        if mid not in notetypes:
            raise Refused(f"note {nid} has a note type the collection lacks")
        notes.append(
            AnkiNote(
                nid,
                text(row[1], f"note {nid}'s GUID"),
                mid,
                tuple(text(row[3], f"note {nid}'s fields").split("\x1f")),
                tuple(text(row[4], f"note {nid}'s tags").split()),
                decks.get(first_deck.get(nid, -1), ""),
                integer(row[5], f"note {nid}'s time"),
            )
        )
    return Exported(path, notetypes, tuple(notes), media)


_Kinds = tuple[dict[int, Notetype], dict[int, str]]
"""Note types by id, and deck names by id."""


def _schema18(database: GuardedDatabase) -> _Kinds:
    names: dict[str, dict[int, list[str]]] = {"fields": {}, "templates": {}}
    for table, found in names.items():
        for ntid, name in database.rows(f"SELECT ntid, name FROM {table} ORDER BY ntid, ord"):
            kind = integer(ntid, f"a note type's {table}")
            found.setdefault(kind, []).append(text(name, f"note type {kind}'s {table}"))
    notetypes = {}
    for ntid, name, config in database.rows("SELECT id, name, config FROM notetypes"):
        kind = integer(ntid, "a note type's id")
        notetypes[kind] = Notetype(
            kind,
            text(name, f"note type {kind}'s name"),
            tuple(names["fields"].get(kind, ())),
            tuple(names["templates"].get(kind, ())),
            _sort_field(config),
        )
    decks = {
        integer(did, "a deck's id"): text(name, f"deck {did}'s name").replace("\x1f", "::")
        for did, name in database.rows("SELECT id, name FROM decks")
    }
    return notetypes, decks


def _sort_field(config: object) -> int:
    """`Notetype.Config`'s `sort_field_idx` (field 2); 0, the first field, where the
    blob says none or is not one."""
    try:
        sort = dict(_protobuf(config)).get(2, 0) if isinstance(config, bytes) else 0
    except ValueError:
        return 0
    return sort if isinstance(sort, int) else 0


def _schema11(database: GuardedDatabase) -> _Kinds:
    rows = database.rows("SELECT models, decks FROM col")
    if not rows:
        raise Refused("its collection has no col row")
    try:
        models = parse_json(text(rows[0][0], "its note types (col.models)"))
        decks = parse_json(text(rows[0][1], "its decks (col.decks)"))
        notetypes = {
            int(key): Notetype(
                int(key),
                str(model["name"]),
                tuple(str(f["name"]) for f in sorted(model["flds"], key=lambda f: f["ord"])),
                tuple(str(t["name"]) for t in sorted(model["tmpls"], key=lambda t: t["ord"])),
                int(model.get("sortf", 0)),
            )
            for key, model in models.items()
        }
        names = {int(key): str(deck["name"]) for key, deck in decks.items()}
    except KeyError as error:  # Anki too refuses a package whose note types lack these
        raise Refused(f"its note types lack {error.args[0]!r}, which Anki needs") from None
    except (TypeError, ValueError, AttributeError) as error:
        raise Refused(f"its note types cannot be read: {error}") from None
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
            raise ExportedError(path, f"its media list cannot be read: {error.reason}") from None
        except ValueError as error:
            raise ExportedError(path, f"its media list cannot be read: {error}") from None
        return {name: str(index) for index, name in enumerate(entries) if str(index) in names}
    try:
        mapping = parse_json(raw.decode("utf-8") or "{}")
    except ValueError as error:  # UnicodeDecodeError too
        raise ExportedError(path, f"its media list cannot be read: {error}") from None
    if not isinstance(mapping, dict):
        raise ExportedError(path, "its media list is not a list of files")
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
                raise ValueError("a damaged media list")
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
                raise ValueError("a damaged media list")
            fields.append((number, data[at : at + size]))
            at += size
        elif kind in (1, 5):
            at += 8 if kind == 1 else 4
        else:
            raise ValueError("a damaged media list")
    return fields
