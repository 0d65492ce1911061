"""The lock file: what the previous build issued, so modification times only move
forward for notes whose content changed, and GUIDs survive renames.

It sits beside the banks (`BANKS/ankigen.lock`) and is committed, like a
package manager's lock file, so builds on different machines agree. Every time
in it is checked; a bad one is reported at its line.
"""

from __future__ import annotations

import bisect
import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from ankigen.bank.files import read_lock_bytes, shown_path
from ankigen.core.errors import Diagnostic, LockError
from ankigen.core.jsondata import parse_json
from ankigen.core.times import build_time, clock, time_problem
from ankigen.identity.guid import GUID, all_guids, note_guid, split_deck_key
from ankigen.identity.stamp import Stamp, sane_rows, stamp_columns, stamps, stamps_of

LOCK_VERSION = 2
READABLE_VERSIONS = (1, 2)


@dataclass
class DeckLock:
    """One deck's entry in the lock file: its name, creation time, bank, and the time
    and GUID issued for each item."""

    name: str
    created: int
    path: str = ""
    """The bank file this deck was last built from, relative to the banks folder."""
    items: dict[str, Stamp] = field(default_factory=dict)
    guids: dict[str, str] = field(default_factory=dict)
    """Item id -> the GUID its note was issued under."""

    def __reduce__(self) -> tuple[object, ...]:
        """Pickled by column, to and from worker processes: five times faster than a
        named tuple at a time (a 10,000-item entry in 20 ms instead of 0.1 s)."""
        ids = list(self.items)
        hashes, mtimes = stamp_columns(list(self.items.values()))
        return _deck_lock, (self.name, self.created, self.path, ids, hashes, mtimes, self.guids)


def _deck_lock(
    name: str,
    created: int,
    path: str,
    ids: list[str],
    hashes: list[str],
    mtimes: list[int],
    guids: dict[str, str],
) -> DeckLock:
    return DeckLock(name, created, path, dict(zip(ids, stamps(hashes, mtimes), strict=True)), guids)


Texts = Mapping[str, tuple[DeckLock, str]]
"""Deck key -> an entry and its `deck_text`, known without making it again."""


@dataclass
class Lock:
    """The lock file: the note type's stamp and every deck's entry."""

    notetype: Stamp | None = None
    decks: dict[str, DeckLock] = field(default_factory=dict)
    read_from: str = field(default="", compare=False, repr=False)
    """The text of the lock file it was read from, if it was read without a problem."""

    @functools.cached_property
    def texts(self) -> dict[str, tuple[DeckLock, str]]:
        """The entries read from a lock file laid out as this version writes it, each with
        its text there (`Texts`): a build that keeps an entry needs no text made for it.
        Found when first asked for: a deck planned early waits for the lock, not for
        this (0.05 s for 10 x 10,000 items)."""
        return _as_written(self.read_from, self) if self.read_from else {}

    def to_bytes(self, made: Texts | None = None) -> bytes:
        """Stable JSON with one item per line, so the lock diffs well in review. `made`:
        texts of entries made elsewhere (a worker) or read (`texts`), used for the entries
        that are the very ones in this lock."""
        dump = json.dumps
        out = ["{", f' "version": {LOCK_VERSION},']
        if self.notetype:
            out.append(
                f' "notetype": {{"hash": {dump(self.notetype.hash)}, '
                f'"mtime": {self.notetype.mtime}}},'
            )
        out.append(' "decks": {')
        decks = sorted(self.decks.items())
        for d, (key, deck) in enumerate(decks):
            out.append(text_of(key, deck, made or {}))
            if d < len(decks) - 1:
                out[-1] += ","
        out.append(" }")
        out.append("}")
        return ("\n".join(out) + "\n").encode("utf-8")


def text_of(key: str, deck: DeckLock, known: Texts) -> str:
    """`deck_text`, taken from `known` if it holds this very entry."""
    entry, text = known.get(key, (None, ""))
    return text if entry is deck else deck_text(key, deck)


def deck_text(key: str, deck: DeckLock) -> str:
    """A deck's lines in the lock file, without the comma that may follow them."""
    dump = json.dumps
    # json.dumps of a string, without its call through the encoder: a third of the time
    quote = json.encoder.encode_basestring_ascii
    out = [
        f"  {dump(key)}: {{",
        f'   "name": {dump(deck.name, ensure_ascii=False)},',
        f'   "path": {dump(deck.path, ensure_ascii=False)},',
        f'   "created": {deck.created},',
        '   "items": {',
    ]
    items = sorted(deck.items.items())
    for i, (item_id, stamp) in enumerate(items):
        comma = "," if i < len(items) - 1 else ""
        guid = quote(deck.guids[item_id])
        out.append(f"    {quote(item_id)}: [{quote(stamp.hash)}, {stamp.mtime}, {guid}]{comma}")
    out.append("   }")
    out.append("  }")
    return "\n".join(out)


def read_lock(path: Path) -> Lock:
    """The lock file at `path`; LockError if it is damaged or holds an impossible time."""
    return checked_lock(str(path), read_lock_bytes(path))


def checked_lock(shown: str, raw: bytes | None) -> Lock:
    """The lock in `raw`, read from `shown`; LockError as `read_lock` raises it."""
    lock, problems = parse_lock(shown, raw)
    if problems:
        raise LockError("\n".join(str(p) for p in problems))
    return lock


CONFLICT_MARKERS = (b"<<<<<<< ", b"=======", b">>>>>>> ")


def _damaged(shown: str, raw: bytes = b"") -> LockError:
    for number, line in enumerate(raw.splitlines(), start=1):
        if line.startswith(CONFLICT_MARKERS):
            return LockError.at(
                shown,
                number,
                "the lock file holds git merge conflict markers "
                "(<<<<<<<, =======, >>>>>>>). Either fix is safe: take one side whole "
                f"(git checkout --ours {shown}, or --theirs) or delete the lock, then build "
                "again: the build takes every time ever issued from git history and the "
                "output folder, so no learner's note goes back in time",
            )
    return LockError.at(
        shown,
        0,
        "the lock file is damaged; restore it from version control, or delete it and build "
        "again (times already issued are found in git history and the output folder)",
    )


def lock_problems(path: Path) -> list[Diagnostic]:
    """What a build refuses in the lock at `path` (unreadable, damaged, merge conflict
    markers left in it, another version's, an impossible time), as `lint` reports
    problems: for a commit hook or CI to see before the build."""
    shown = shown_path(path)
    try:
        return parse_lock(shown, read_lock_bytes(path))[1]
    except LockError as exc:
        return [exc.problem or Diagnostic(shown, 0, "error", str(exc))]


_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")
"""A surrogate written as an escape, which JSON reads; the lock's hashes and files are
made from its texts as UTF-8, and a surrogate alone is no text (the build stopped as on
a bug of its own)."""


def _is_unicode(data: object) -> bool:
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def parse_lock(shown: str, raw: bytes | None) -> tuple[Lock, list[Diagnostic]]:
    """The lock and the problems with its times, each at its line."""
    if raw is None:
        return Lock(), []
    try:
        # decoded strictly: JSON's own decoding lets surrogates written as UTF-8 bytes in
        text = raw.decode(json.detect_encoding(raw))
        data = parse_json(text)
    except ValueError:  # UnicodeDecodeError too
        raise _damaged(shown, raw) from None
    if not isinstance(data, dict) or (_SURROGATE.search(text) and not _is_unicode(data)):
        raise _damaged(shown, raw)
    # `type(...) is int`: JSON's true would otherwise pass as version 1
    if type(data.get("version")) is not int or data["version"] not in READABLE_VERSIONS:
        raise LockError.at(
            shown,
            0,
            f"lock file version {data.get('version')!r} is not one this ankigen reads "
            f"({', '.join(map(str, READABLE_VERSIONS))}); it was written by another ankigen",
        )
    reader = _LockReader(shown, raw)
    try:
        lock = reader.lock(data)
    except LockError:
        raise
    except (KeyError, TypeError, AttributeError, IndexError):
        raise _damaged(shown, raw) from None
    if not reader.problems:
        lock.read_from = reader.text
    return lock, reader.problems


class _LockReader:
    """The lock's entries read from its parsed JSON, each problem with a time or a GUID
    noted at its line; a lock not laid out as one is `_damaged`."""

    def __init__(self, shown: str, raw: bytes) -> None:
        self.shown = shown
        self.raw = raw
        self.text = raw.decode("utf-8", "replace")
        self.indexed: KeyLines | None = None
        self.problems: list[Diagnostic] = []
        self.now = clock()

    def lock(self, data: dict[str, Any]) -> Lock:
        notetype = data.get("notetype")
        lock = Lock()
        if notetype is not None:
            mtime = self.check_time(notetype["mtime"], "notetype", None, "note type time")
            lock.notetype = Stamp(_text(notetype["hash"]), mtime)
        for key, deck in data["decks"].items():
            lock.decks[str(key)] = self.deck(key, deck)
        return lock

    def deck(self, key: str, deck: dict[str, Any]) -> DeckLock:
        topic, language = split_deck_key(key)
        entry = DeckLock(
            name=_text(deck["name"]),
            created=self.check_time(deck["created"], "created", key, "created"),
            path=_text(deck.get("path", "")),
        )
        items = deck["items"]
        if not isinstance(items, dict):
            raise _damaged(self.shown, self.raw)
        if _fast_items(entry, items, self.now):
            return entry
        for item_id, value in items.items():
            if not isinstance(value, list) or len(value) not in (2, 3):
                raise _damaged(self.shown, self.raw)
            mtime = self.check_time(value[1], item_id, key, f"item {item_id!r}")
            entry.items[item_id] = Stamp(_text(value[0]), mtime)
            guid = value[2] if len(value) == 3 else note_guid(topic, language, item_id)
            if not isinstance(guid, str) or not GUID.fullmatch(guid):
                self.problem(
                    item_id,
                    key,
                    f"item {item_id!r}: {guid!r} is not a GUID; restore the lock file from "
                    "version control",
                )
            entry.guids[item_id] = str(guid)
        return entry

    def problem(self, key: str, deck: str | None, message: str) -> None:
        """A problem at the line of `key` (within `deck`'s entry); the text is indexed
        only when a problem needs a line."""
        if self.indexed is None:
            self.indexed = KeyLines(self.text)
        line = self.indexed.find(key, self.indexed.find(deck) if deck is not None else 0)
        self.problems.append(Diagnostic(self.shown, line, "error", message))

    def check_time(self, value: object, key: str, deck: str | None, what: str) -> int:
        problem = time_problem(value, self.now)
        if problem:
            self.problem(
                key, deck, f"{what}: {problem}; restore the lock file from version control"
            )
            return 0
        assert isinstance(value, int)
        return value


# The lock as `Lock.to_bytes` lays it out, its keys, hashes and GUIDs printable ASCII
# without escapes: a file matched by these, entry after entry from its start to its end,
# holds each entry as `deck_text` writes it
_PLAIN = r'"[ !#-\[\]-~]*"'
_QUOTED = r'"(?:[^"\\\n]|\\.)*"'
_INTEGER = r"(?:0|-?[1-9][0-9]*)"
_ITEM_LINE = rf"    {_PLAIN}: \[{_PLAIN}, {_INTEGER}, {_PLAIN}\]"
_HEAD = re.compile(
    rf'\{{\n "version": {_INTEGER},\n'
    rf'(?: "notetype": \{{"hash": {_QUOTED}, "mtime": {_INTEGER}\}},\n)?'
    r' "decks": \{\n'
)
_ENTRY = re.compile(
    rf'  {_PLAIN}: \{{\n   "name": ({_QUOTED}),\n   "path": ({_QUOTED}),\n'
    rf'   "created": {_INTEGER},\n   "items": \{{\n((?:{_ITEM_LINE},\n)*{_ITEM_LINE}\n)?'
    r"   \}\n  \}"
)
_TAIL = "\n }\n}\n"


def _as_written(text: str, lock: Lock) -> dict[str, tuple[DeckLock, str]]:
    """Each entry of `lock` with its text in `text`, the file it was read from, if the
    whole file is laid out as this version writes it; else none. Checked by pattern and
    against the entries read, not by making the text again: a pattern costs a third of
    that."""
    head = _HEAD.match(text)
    if head is None:
        return {}
    found: dict[str, tuple[DeckLock, str]] = {}
    at = head.end()
    for n, (key, deck) in enumerate(lock.decks.items()):
        if n and not text.startswith(",\n", at):
            return {}
        match = _ENTRY.match(text, at + 2 if n else at)
        if match is None or not _is_entry(match, deck):
            return {}
        found[key] = (deck, match.group(0))
        at = match.end()
    # every entry read and then the file's end: no key was given twice, so each entry
    # matched is the one read under its key (of two, JSON keeps the last)
    return found if text[at:] == _TAIL else {}


def _is_entry(match: re.Match[str], deck: DeckLock) -> bool:
    """Whether the entry `match` found, read as `deck`, is as `deck_text` writes it: its
    name and path without needless escapes, its items in order, each once (the pattern
    allows no escape in the rest)."""
    name, path, items = match.group(1, 2, 3)
    ids = list(deck.items)
    return (
        name == json.dumps(deck.name, ensure_ascii=False)
        and path == json.dumps(deck.path, ensure_ascii=False)
        and (items or "").count("\n") == len(ids)
        and ids == sorted(ids)
    )


def _fast_items(entry: DeckLock, items: dict[str, object], now: int) -> bool:
    """Fill `entry` from a deck's items if each is exactly what this version writes, a
    sane stamp and a GUID, checked a column at a time (a lock holds a line per note);
    False, leaving `entry` alone, for the item by item check to say what is wrong."""
    columns = sane_rows(list(items.values()), 3, now)
    if columns is None or not all_guids(columns[2]):
        return False
    entry.items = dict(zip(items, stamps_of(columns), strict=True))
    entry.guids = dict(zip(items, cast(list[str], columns[2]), strict=True))
    return True


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(value)
    return value


class KeyLines:
    """Line numbers of keys in the lock's text, for messages (the JSON parser has none)."""

    @classmethod
    def of(cls, raw: bytes | None) -> KeyLines:
        return cls((raw or b"").decode("utf-8", "replace"))

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()
        # every key's lines, found in one pass: searching the text once per key made
        # reading a lock of 10,000 items quadratic (seconds for one edited bank)
        self.keys: dict[str, list[int]] = {}
        for number, line in enumerate(self.lines, start=1):
            if '"' in line:
                for match in _STRING.finditer(line):
                    if match.group(2):
                        self.keys.setdefault(match.group(1), []).append(number)

    def find(self, key: str, after: int = 0) -> int:
        """The first line from `after` on where `key` is a key."""
        dumped = json.dumps(key)
        numbers = self.keys.get(dumped, ())
        index = bisect.bisect_left(numbers, after)
        if index < len(numbers):
            return numbers[index]
        pattern = re.compile(re.escape(dumped) + r"\s*:")
        for number in range(max(after, 1), len(self.lines) + 1):
            if pattern.search(self.lines[number - 1]):
                return number
        return max(after, 1)


# a JSON string, and whether a colon follows it (then it is a key); strings are matched
# whole so that a string's content is never mistaken for a key
_STRING = re.compile(r'("(?:[^"\\]|\\.)*")(\s*:)?')


ADOPTED = "adopted"
"""The content hash of an adopted note's stamp: ankigen never issued its content, so the
bank's first build gives it a newer time, and Anki's importer takes it as an update."""


def with_adopted(
    shown: str,
    raw: bytes | None,
    deck: str,
    name: str,
    bank_path: str,
    notes: Mapping[str, tuple[str, int]],
) -> bytes:
    """The lock read from `raw` with a deck adopted from Anki: each item id -> the GUID its
    note has there and the time Anki last changed it. A LockError if the lock is damaged,
    already has that deck, or has one of those GUIDs (another deck's note)."""
    lock = checked_lock(shown, raw)
    if deck in lock.decks:
        raise LockError(
            f"{shown}: deck {deck!r} is in the lock already: adopting it again would give its "
            "notes other identities; import into another topic or language"
        )
    taken = {guid for entry in lock.decks.values() for guid in entry.guids.values()}
    clashes = sorted(guid for guid, _ in notes.values() if guid in taken)
    if clashes:
        raise LockError(
            f"{shown}: the lock already has the note(s) {', '.join(clashes[:5])}: this deck, "
            "or part of it, was adopted before"
        )
    now = clock()
    entry = DeckLock(
        name,
        build_time(),
        bank_path,
        # a time ahead of this clock (another machine's) is not one a lock may hold
        {item: Stamp(ADOPTED, min(mtime, now)) for item, (_, mtime) in notes.items()},
        {item: guid for item, (guid, _) in notes.items()},
    )
    lock.decks[deck] = entry
    return lock.to_bytes()


def issued_guids(lock: Lock) -> dict[str, tuple[str, str]]:
    """The deck key and item id of each GUID the lock records."""
    issued_as: dict[str, tuple[str, str]] = {}
    for key, deck in lock.decks.items():
        topic, language = split_deck_key(key)
        for item_id in deck.items:
            guid = deck.guids.get(item_id) or note_guid(topic, language, item_id)
            issued_as[guid] = (key, item_id)
    return issued_as
