"""One bank cache entry's bytes: written (`dump`) and read back (`load`, `load_outline`,
`load_parity`) with every value's type checked, so a damaged or forged entry is refused,
never trusted."""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import marshal
import typing
import zlib
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ankigen.bank.files import Source, SourceDigest
from ankigen.bank.model import (
    IMAGE_FIELDS,
    MAX_CHOICES,
    MAX_ID,
    MIN_CHOICES,
    SLUG,
    Bank,
    Item,
    ItemOutline,
    Outline,
    Parity,
    outline,
)
from ankigen.bank.values import shared_keys
from ankigen.core.errors import AnkigenError, Diagnostic
from ankigen.core.jsondata import parse_json
from ankigen.core.secret import mac
from ankigen.core.version import __version__
from ankigen.text import lang

Loaded = tuple[Bank | None, list[Diagnostic]]
Outlined = tuple[Outline | None, list[Diagnostic]]


# 4: items gained `whys` and `recall`, banks `recall`; 5: items stored by field (columns);
# 6: item lines as keys and offsets; 7: items' `chunk` and `seal`; 8: the source languages;
# 9: the bank's outline first, readable without its items; 10: the bank's parity last;
# 11: items' seals made by `marshal`; 12: an item's recall in its parity row;
# 13: diagnostics by column, each path once; 14: items' `anki_fields`; 15: a diagnostic's column;
# 16: a kept note type's `sort_field`; 17: problems in quoted texts at lines within them;
# 18: payloads by `marshal`, not JSON (see `_compress`)
FORMAT = 18


# the fastest level: the cache must cost less to read than the bank costs to parse,
# and stay well under the size of the banks it caches. libdeflate's zlib streams, read
# by zlib: for 10,000 items 0.024 s and 1.41 MB, where zlib's level 1 took 0.077 s
# for 1.52 MB
COMPRESSION = 1


LATER = b""
"""In place of an entry: the worker that checked the bank makes it after the bank's
follow-up, and sends it with the follow-up's outcome, or with the package the follow-up
kept (`checks.incremental.entry_goes_with`); `BankCache.arrive` takes it."""


Languages = tuple[str, ...]
"""The source languages a bank was checked against (`checks.translation.sources_for`): its warnings
about untranslated text depend on them, so an entry holds for those alone."""


def entry_name(source: Source | SourceDigest, languages: Languages) -> str:
    digest = hashlib.sha256(source.digest.encode())
    digest.update(f"\0{source.path}\0{__version__}\0{FORMAT}\0{','.join(languages)}".encode())
    return digest.hexdigest()[:32] + ".json"


_ITEM_FIELDS = {f.name: f for f in dataclasses.fields(Item)}


_BANK_FIELDS = {f.name: f for f in dataclasses.fields(Bank) if f.name != "items"}


def dump(
    source: Source,
    loaded: Loaded,
    languages: Languages,
    outlined: Outline | None = None,
    parity: Parity | None = None,
) -> bytes:
    """A header line (what the entry is for, and a checksum of the rest), then three
    payloads: the bank's outline (`bank.model.outline`) with its settings and problems, its
    items, and its parity if known. A build reads the items of the banks it plans only."""
    bank, diagnostics = loaded
    head: dict[str, Any] | None = None
    items: dict[str, Any] | None = None
    if bank is not None:
        # by hand: dataclasses.asdict deep-copies every value and is several times slower
        head = {name: getattr(bank, name) for name in _BANK_FIELDS}
        if bank.anki_notetype is not None:
            head["anki_notetype"] = dataclasses.asdict(bank.anki_notetype)
        items_outlined = (outlined or outline(bank)).items
        head["outline"] = {
            name: [getattr(item, name) for item in items_outlined] for name in _OUTLINE_COLUMNS
        }
        # by field, not by item: each field's values are checked at once when read
        items = {name: [getattr(item, name) for item in bank.items] for name in _ITEM_FIELDS}
    first = _compress({"bank": head, "diagnostics": _dump_diagnostics(diagnostics)})
    second = _compress(items)
    rows = None if parity is None else [[key, *value] for key, value in parity.items()]
    payload = first + second + _compress(rows)
    header = _header(source, payload, (len(first), len(second)), languages)
    return json.dumps(header, ensure_ascii=False).encode() + b"\n" + payload


def _compress(data: Any) -> bytes:
    """The payload as `marshal` writes its values, by type, in C: a tuple stays a tuple.
    For 1,000 items 1.5 ms to write and 3 to read, where JSON took 5 and 5 (the entry is
    made at the end of an edit's build, and its previous one read at its start), 5%
    larger compressed. Read only once its MAC proves it this user's ankigen's (`_parts`),
    and then checked value by value as the JSON was."""
    import deflate  # imported where used, like the packages' compressor

    return bytes(deflate.zlib_compress(marshal.dumps(data, MARSHAL_VERSION), COMPRESSION))


MARSHAL_VERSION = 2
"""Each value written whole, by type: the same bank makes the same entry in a worker as
here. From version 3 on, a value referred to more than once is written once, and what
is shared depends on the process that made the values."""


def _header(
    source: Source | SourceDigest, payload: bytes, sizes: tuple[int, int], languages: Languages
) -> dict[str, Any]:
    """What an entry is for (these bank bytes, checked against these source languages, by
    this version), the sizes of its outline and items, and a MAC of it all."""
    header: dict[str, Any] = {
        "version": __version__,
        "format": FORMAT,
        "digest": source.digest,
        "path": str(source.path),
        "sources": list(languages),
        "outline": sizes[0],
        "items": sizes[1],
    }
    # keyed with this user's secret, kept outside OUT: an entry made elsewhere, where a
    # plain checksum could be recomputed, is never used
    header["checksum"] = mac(json.dumps(header, sort_keys=True).encode(), payload)
    return header


class BadEntry(Exception):
    """A cache entry that is not exactly what this version writes."""


class CacheError(AnkigenError):
    """A bank whose cache entry proved unusable cannot be read again as it was."""


def _checker(kind: Any) -> Callable[[Any], Any]:
    """A function that returns a value if it has the type `kind` (as annotated on Bank
    and Item), else raises BadEntry:
    made once per field, since asking `typing` about every value made reading an entry
    cost half as much as parsing the bank."""
    origin = typing.get_origin(kind)
    if kind is str or kind is int or kind is bool:

        def scalar(value: Any) -> Any:
            if type(value) is not kind:
                raise BadEntry(kind)
            return value

        return scalar
    if origin is tuple:
        (element, _) = typing.get_args(kind)
        if element is str or element is int:

            def flat(value: Any) -> Any:
                if type(value) is not tuple or any(type(v) is not element for v in value):
                    raise BadEntry(kind)
                return value

            return flat
        check_element = _checker(element)

        def nested(value: Any) -> Any:
            if type(value) is not tuple:
                raise BadEntry(kind)
            return tuple(check_element(v) for v in value)

        return nested
    if origin is dict:
        check_key, check_value = (_checker(k) for k in typing.get_args(kind))

        def mapping(value: Any) -> Any:
            if not isinstance(value, dict):
                raise BadEntry(kind)
            return {check_key(k): check_value(v) for k, v in value.items()}

        return mapping

    if dataclasses.is_dataclass(kind):
        return _record_checker(kind)
    arguments = typing.get_args(kind)
    if len(arguments) == 2 and arguments[1] is type(None):
        check_present = _checker(arguments[0])
        return lambda value: None if value is None else check_present(value)

    def refused(value: Any) -> Any:
        raise BadEntry(kind)

    return refused


def _record_checker(kind: Any) -> Callable[[Any], Any]:
    """A frozen dataclass such as `KeptNotetype`, from a mapping of its fields."""
    checkers = {name: _checker(hint) for name, hint in typing.get_type_hints(kind).items()}
    return lambda value: kind(**_record(value, checkers))


def _record(data: Any, checkers: dict[str, Callable[[Any], Any]]) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise BadEntry("not a mapping")
    if data.keys() != checkers.keys():
        raise BadEntry("wrong fields")
    return {name: check(data[name]) for name, check in checkers.items()}


def _column_checker(kind: Any) -> Callable[[Any], list[Any]]:
    """Like `_checker`, for a list of values of the type `kind`: the common types are
    checked by C loops over the whole list instead of a call per value."""
    origin = typing.get_origin(kind)
    flat = origin is tuple and typing.get_args(kind)[0] in (str, int)
    if kind is str or kind is int or kind is bool or flat:
        element = typing.get_args(kind)[0] if flat else kind

        def column(values: Any) -> list[Any]:
            if type(values) is not list:
                raise BadEntry(kind)
            if flat:
                if not set(map(type, values)) <= {tuple} or not set(
                    map(type, itertools.chain.from_iterable(values))
                ) <= {element}:
                    raise BadEntry(kind)
                return values
            if not set(map(type, values)) <= {element}:
                raise BadEntry(kind)
            return values

        return column
    check = _checker(kind)

    def each(values: Any) -> list[Any]:
        if type(values) is not list:
            raise BadEntry(kind)
        if origin is tuple and values.count(()) == len(values):  # items' `anki_fields`: in C
            return values
        return list(map(check, values))

    return each


def _items(data: Any) -> tuple[Item, ...]:
    if not isinstance(data, dict) or data.keys() != _ITEM_COLUMNS.keys():
        raise BadEntry("items")
    columns = [check(data[name]) for name, check in _ITEM_COLUMNS.items()]
    columns[_LINE_KEYS] = list(map(shared_keys, columns[_LINE_KEYS]))
    if list(map(len, columns[_LINE_KEYS])) != list(map(len, columns[_LINE_OFFSETS])):
        raise BadEntry("items: a line for every key")
    if len({len(column) for column in columns}) != 1:
        raise BadEntry("items: columns of different lengths")
    items = []
    ids, choices, answers, whys = (
        columns[list(_ITEM_COLUMNS).index(name)] for name in ("id", "choices", "answer", "whys")
    )
    for item_id, texts, answer, why in zip(ids, choices, answers, whys, strict=True):
        if (
            not SLUG.fullmatch(item_id)
            or len(item_id) > MAX_ID
            or not MIN_CHOICES <= len(texts) <= MAX_CHOICES
            or not answer
            or list(answer) != sorted(set(answer))
            or not 1 <= answer[0] <= answer[-1] <= len(texts)
            or (why and len(why) != len(texts))
        ):
            raise BadEntry("items: not an item the reader would accept")
    for row in zip(*columns, strict=True):
        # every field was just checked: setting them at once skips the frozen dataclass's
        # __init__, which sets each one through object.__setattr__
        item = object.__new__(Item)
        item.__dict__.update(zip(_ITEM_COLUMNS, row, strict=True))
        items.append(item)
    return tuple(items)


_ITEM_COLUMNS = {name: _column_checker(kind) for name, kind in typing.get_type_hints(Item).items()}


_LINE_KEYS = list(_ITEM_COLUMNS).index("line_keys")
_LINE_OFFSETS = list(_ITEM_COLUMNS).index("line_offsets")


_BANK_CHECKS = {
    name: _checker(kind) for name, kind in typing.get_type_hints(Bank).items() if name != "items"
}


def load(source: Source | SourceDigest, raw: bytes, languages: Languages) -> Loaded:
    """The cached result for exactly these bytes checked against these languages;
    BadEntry for anything else."""
    first, second, _ = _parts(source, raw, languages)
    head, found = _head(first)
    items = _unpack(second)
    if head is None:
        if items is not None:
            raise BadEntry("items of no bank")
        return None, found
    _outline_items(head.pop("outline", None))  # of the right shape, as `load_outline` wants
    return _settings(head, source, _items(items)), found


def load_outline(source: Source | SourceDigest, raw: bytes, languages: Languages) -> Outlined:
    """Like `load`, the bank's outline only: its items are not even decompressed."""
    first, _, _ = _parts(source, raw, languages)
    head, found = _head(first)
    if head is None:
        return None, found
    items = _outline_items(head.pop("outline", None))
    return Outline(_settings(head, source, ()), items), found


def _parts(
    source: Source | SourceDigest, raw: bytes, languages: Languages
) -> tuple[bytes, bytes, bytes]:
    """The three payloads of an entry that is for exactly these bytes and languages."""
    head, _, payload = raw.partition(b"\n")
    try:
        header = parse_json(head)
    except ValueError:
        raise BadEntry("not JSON") from None
    if not isinstance(header, dict):
        raise BadEntry("not a header")
    first, second = header.get("outline"), header.get("items")
    if (
        type(first) is not int
        or type(second) is not int
        or not 0 < first < first + second < len(payload)
        or header != _header(source, payload, (first, second), languages)
    ):
        raise BadEntry("for other bytes, another version, or changed since written")
    return payload[:first], payload[first : first + second], payload[first + second :]


def load_parity(source: Source | SourceDigest, raw: bytes, languages: Languages) -> Parity | None:
    """The bank's parity as its entry keeps it, or None where it keeps none."""
    _, _, last = _parts(source, raw, languages)
    rows = _unpack(last)
    if rows is None:
        return None
    if type(rows) is not list:
        raise BadEntry("parity")
    if not rows:
        return {}
    # checked a column at a time, by the types the column holds: a row at a time, the
    # parity of an unchanged reference cost 0.05 s for 10,000 items
    if _types(rows) != {list} or set(map(len, rows)) != {6}:
        raise BadEntry("parity")
    ids, counts, answers, whys, questions, explanations = zip(*rows, strict=True)
    if not (
        _types(ids) == {str}
        and _types(answers) == {tuple}
        and _types(itertools.chain.from_iterable(answers)) <= {int}
        and all(_types(column) == {int} for column in (counts, whys, questions, explanations))
    ):
        raise BadEntry("parity")
    rows_now = zip(counts, answers, whys, questions, explanations, strict=True)
    return dict(zip(ids, rows_now, strict=True))


def _types(values: Iterable[object]) -> set[type]:
    return set(map(type, values))


def _unpack(part: bytes) -> Any:
    try:
        return marshal.loads(zlib.decompress(part))
    except (ValueError, EOFError, TypeError, zlib.error):
        raise BadEntry("not a payload") from None


def _head(first: bytes) -> tuple[dict[str, Any] | None, list[Diagnostic]]:
    """The bank's settings and outline (None if the bank did not load), and its problems."""
    data = _unpack(first)
    if not isinstance(data, dict) or set(data) != {"bank", "diagnostics"}:
        raise BadEntry("wrong shape")
    found = _diagnostics(data["diagnostics"])
    head = data["bank"]
    if head is not None and not isinstance(head, dict):
        raise BadEntry("not a mapping")
    return head, found


def _settings(head: dict[str, Any], source: Source | SourceDigest, items: tuple[Item, ...]) -> Bank:
    bank = Bank(**_record(head, _BANK_CHECKS), items=items)
    # what the reader would refuse, refused here too: an output path is made from these
    if (
        not SLUG.fullmatch(bank.topic)
        or len(bank.topic) > MAX_ID
        or bank.topic.startswith("backup-")
        or not lang.is_valid_tag(bank.language)
        or lang.canonical_tag(bank.language) != bank.language
        or not bank.title.strip()
    ):
        raise BadEntry("bank: not a bank the reader would accept")
    if bank.path != str(source.path):
        raise BadEntry("path")
    return bank


def _images(values: Any) -> list[tuple[tuple[str, str, int], ...]]:
    """The `images` column of an outline: per item, (field, path, line) of each image."""
    if type(values) is not list:
        raise BadEntry("images")
    if values.count(()) == len(values):  # no item with an image: compared in C
        return values
    column = []
    for value in values:
        if type(value) is not tuple:
            raise BadEntry("images")
        row = []
        for image in value:
            if not (
                type(image) is tuple
                and len(image) == 3
                and image[0] in IMAGE_FIELDS
                and type(image[1]) is str
                and type(image[2]) is int
            ):
                raise BadEntry("image")
            row.append((image[0], image[1], image[2]))
        column.append(tuple(row))
    return column


_OUTLINE_COLUMNS: dict[str, Callable[[Any], list[Any]]] = {
    "id": _column_checker(str),
    "formerly": _column_checker(tuple[str, ...]),
    "retired": _column_checker(bool),
    "images": _images,
}


def _outline_items(data: Any) -> tuple[ItemOutline, ...]:
    if not isinstance(data, dict) or data.keys() != _OUTLINE_COLUMNS.keys():
        raise BadEntry("outline")
    columns = [check(data[name]) for name, check in _OUTLINE_COLUMNS.items()]
    if len({len(column) for column in columns}) != 1:
        raise BadEntry("outline: columns of different lengths")
    return tuple(map(ItemOutline._make, zip(*columns, strict=True)))


_DIAGNOSTIC_COLUMNS = ("paths", "path", "line", "severity", "message", "column")


def _dump_diagnostics(diagnostics: Sequence[Diagnostic]) -> dict[str, list[Any]]:
    """By column, each path once (an index into `paths`): a half-translated bank has a
    warning for every other text, all of its own file, and a build reads those of every
    bank; made into diagnostics and checked by column, they cost a fifth as much."""
    paths = list(dict.fromkeys(d.path for d in diagnostics))
    index = {path: n for n, path in enumerate(paths)}
    return {
        "paths": paths,
        "path": [index[d.path] for d in diagnostics],
        "line": [d.line for d in diagnostics],
        "severity": [d.severity for d in diagnostics],
        "message": [d.message for d in diagnostics],
        "column": [d.column for d in diagnostics],
    }


def _diagnostics(data: Any) -> list[Diagnostic]:
    if not isinstance(data, dict) or tuple(data) != _DIAGNOSTIC_COLUMNS:
        raise BadEntry("diagnostics")
    paths, path, line, severity, message, column = data.values()
    try:
        if not (
            all(type(values) is list for values in data.values())
            and len(path) == len(line) == len(severity) == len(message) == len(column)
            and set(map(type, paths)) <= {str}
            and set(map(type, path)) <= {int}
            and (not path or (min(path) >= 0 and max(path) < len(paths)))
            and set(map(type, line)) <= {int}
            and set(severity) <= {"error", "warning"}
            and set(map(type, message)) <= {str}
            and set(map(type, column)) <= {int}
        ):
            raise BadEntry("diagnostic")
    except TypeError:  # a value that cannot be hashed or compared
        raise BadEntry("diagnostic") from None
    return list(map(Diagnostic, map(paths.__getitem__, path), line, severity, message, column))
