"""Identity and time: what decides that a rebuilt deck updates the notes learners have.

Anki's importer matches a note by its GUID across the whole collection and
takes its content only when the incoming modification time is strictly newer
than the one it holds. So two things must never go wrong:

- **the GUID** of an item stays the one learners already have, whatever the
  bank's topic, language or the item's id are called today (`formerly:`);
- **the modification time** of a note moves past every time ever issued for
  that GUID whenever its content differs from what was last issued, even when
  the content goes *back* to an older text (a revert), and never holds a
  nonsense value (zero, milliseconds, the future).

The evidence of times already issued comes from places a revert does not
undo: every version of the lock file in the banks' git history, and a record
kept in the output folder (`OUT/.ankigen-issued.json`).
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter, ne
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from ankigen.core.jsondata import parse_json
from ankigen.core.times import EARLIEST, FUTURE_SLACK, clock, time_problem

if TYPE_CHECKING:
    from ankigen.bank.model import Bank, Outline
    from ankigen.lock import DeckLock, Lock
    from ankigen.note import NoteContent

GUID_NAMESPACE = "ankigen/v1"

_BASE91 = (
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&()*+,-./:;<=>?@[]^_`{|}~"
)
GUID = re.compile(r"[" + re.escape(_BASE91) + r"]{1,20}")
_GUID_LINES = re.compile(r"(?:[" + re.escape(_BASE91) + r"]{1,20}\n)*")


def all_guids(values: Sequence[object]) -> bool:
    """Whether every value is a GUID: one match over them all (a lock holds one per
    note), instead of a call per value."""
    if not values:
        return True
    if not set(map(type, values)) <= {str}:
        return False
    text = "\n".join(cast(Sequence[str], values))
    if text.count("\n") != len(values) - 1:
        return False  # a value with a line break of its own: not a GUID, or several
    return _GUID_LINES.fullmatch(f"{text}\n") is not None


def _digest(*parts: str) -> bytes:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).digest()


def note_guid(topic: str, language: str, item_id: str) -> str:
    """The GUID of an item's note: one per topic, language and item, never shared."""
    return base91(int.from_bytes(_digest(GUID_NAMESPACE, topic, language, item_id)[:8], "big"))


def base91(number: int) -> str:
    """A number in Anki's base 91 digits, the most significant first, without leading zeros."""
    pairs = []
    while number:  # two digits at a time: a build makes one GUID per new note
        number, rem = divmod(number, _PAIR_BASE)
        pairs.append(_BASE91_PAIRS[rem])
    return "".join(reversed(pairs)).lstrip(_BASE91[0]) or _BASE91[0]


_BASE91_PAIRS = [high + low for high in _BASE91 for low in _BASE91]
_PAIR_BASE = len(_BASE91_PAIRS)


def deck_id(topic: str, language: str) -> int:
    """A stable deck id in genanki's recommended range [2**30, 2**31)."""
    number = int.from_bytes(_digest(GUID_NAMESPACE, "deck", topic, language)[:4], "big")
    return (1 << 30) + number % (1 << 30)


def named_deck_id(name: str) -> int:
    """A stable id for a deck known only by its name, such as a parent deck."""
    number = int.from_bytes(_digest(GUID_NAMESPACE, "named deck", name)[:4], "big")
    return (1 << 30) + number % (1 << 30)


def deck_key(topic: str, language: str) -> str:
    """A deck's name in the lock file: `topic.language`."""
    return f"{topic}.{language}"


def split_deck_key(key: str) -> tuple[str, str]:
    topic, _, language = key.partition(".")
    return topic, language


# ---------------------------------------------------------------- time


def sane_rows(values: Sequence[object], width: int, now: int) -> list[list[object]] | None:
    """The columns of rows as ankigen writes them, `width` values each, the first two a
    content hash and a time with no `time_problem`; checked a column at a time (a lock
    holds a row per note). None sends the caller to check each row and say what is wrong."""
    if not set(map(type, values)) <= {list}:
        return None
    rows = cast(list[list[object]], values)
    if not set(map(len, rows)) <= {width}:
        return None
    columns = [list(map(itemgetter(n), rows)) for n in range(width)]
    return columns if sane_stamps(columns[0], columns[1], now) else None


def sane_stamps(hashes: list[object], mtimes: list[object], now: int) -> bool:
    """Whether the hashes are text and the times have no `time_problem`, a column at a time."""
    # `type(...) is int`: JSON's true is no time
    if not (set(map(type, hashes)) <= {str} and set(map(type, mtimes)) <= {int}):
        return False
    times = cast(list[int], mtimes)
    return not times or (min(times) >= EARLIEST and max(times) <= now + FUTURE_SLACK)


def stamps_of(columns: list[list[object]]) -> Iterator[Stamp]:
    """The stamps of columns `sane_rows` gave."""
    return stamps(cast(list[str], columns[0]), cast(list[int], columns[1]))


def stamps(hashes: Iterable[str], mtimes: Iterable[int]) -> Iterator[Stamp]:
    """Stamps made a column at a time, as tuples are: a named tuple's own constructor is
    Python code, called once a stamp (a lock's 100,000 stamps took twice as long)."""
    made = map(tuple.__new__, itertools.repeat(Stamp), zip(hashes, mtimes, strict=True))
    return cast(Iterator[Stamp], made)


# ---------------------------------------------------------------- stamps


# named tuples: a build holds a stamp and an identity for every note, several times
# over, and reads a lock's worth of stamps; a tuple is smaller than a frozen dataclass
# and several times cheaper to make (its fields are not set one by one)
class Stamp(NamedTuple):
    """A note's content hash and the modification time that content was issued with."""

    hash: str
    mtime: int


def stamp_columns(stamps: Sequence[Stamp]) -> tuple[list[str], list[int]]:
    """The hashes and the times of these stamps, as two columns: how the issued record,
    a lock entry's canonical text and a pickled lock entry hold them."""
    return list(map(itemgetter(0), stamps)), list(map(itemgetter(1), stamps))


def restamp(previous: Stamp | None, issued: Stamp | None, content_hash: str, now: int) -> Stamp:
    """The stamp of a note with this content.

    `previous` is what the lock says was built last; `issued` the newest time
    ever issued for the note anywhere (git history, the output folder). The
    newest of the two is what learners may hold: the same content keeps its
    time, any other content, older text included, gets a strictly newer one.
    """
    newest = max(
        (s for s in (previous, issued) if s is not None), key=lambda s: s.mtime, default=None
    )
    if newest is not None and newest.hash == content_hash:
        return newest
    floor = newest.mtime + 1 if newest is not None else now
    return Stamp(content_hash, max(now, floor))


# ---------------------------------------------------------------- evidence


ISSUED_NAME = ".ankigen-issued.json"
# 1: notes as {guid: [hash, mtime]}; 2: as columns, parsed and written in half the time
ISSUED_VERSION = 2


class Issued:
    """The newest stamp ever issued for each GUID, as far as this machine can know.

    Kept in the output folder, never committed, and only ever moving forward:
    it survives `git revert`, `git checkout OLD -- banks` and undo in an editor.
    The lock file's git history is read into it, so a team shares the evidence.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.notes: dict[str, Stamp] = {}
        self.blobs: set[str] = set()
        """Git blobs of the lock file already read into `notes`."""
        self.read_as: bytes | None = None
        """The SHA-256 of the file as read, None if there was none."""
        try:
            raw = path.read_bytes()
        except OSError:
            return
        self.read_as = hashlib.sha256(raw).digest()
        self._load(raw)

    def _load(self, raw: bytes) -> None:
        try:
            data = parse_json(raw)
        except ValueError:
            return
        if not isinstance(data, dict) or not isinstance(data.get("blobs"), list):
            return
        now = clock()
        if data.get("version") == 1:  # as earlier versions wrote it: its evidence still holds
            self.notes = _notes_by_guid(data.get("notes"), now)
        elif data.get("version") == ISSUED_VERSION:
            self.notes = _notes_by_column(data, now)
        else:
            return
        self.blobs = {
            b for b in data["blobs"] if isinstance(b, str) and re.fullmatch(r"[0-9a-f]{40,64}", b)
        }

    def still_current(self) -> bool:
        """Whether the file is as it was read: read before the output folder was locked,
        another build may have written it since."""
        try:
            raw = self.path.read_bytes()
        except OSError:
            return self.read_as is None
        return hashlib.sha256(raw).digest() == self.read_as

    def note(self, guid: str, stamp: Stamp) -> None:
        """Record that `stamp` was issued for `guid`."""
        known = self.notes.get(guid)
        if known is None or stamp.mtime > known.mtime:
            self.notes[guid] = stamp

    def newest(self, guid: str) -> Stamp | None:
        return self.notes.get(guid)

    def read_git_history(self, lock_path: Path) -> None:
        """Every version of the lock file in git that was not read before."""
        for blob, text in _lock_versions(lock_path, self.blobs):
            self.blobs.add(blob)
            for guid, stamp in stamps_in_lock_text(text):
                self.note(guid, stamp)

    def to_bytes(self) -> bytes:
        guids = sorted(self.notes)
        hashes, mtimes = stamp_columns(list(map(self.notes.__getitem__, guids)))
        data = {
            "version": ISSUED_VERSION,
            # flat columns: the JSON encoder and parser handle them fastest
            "guids": guids,
            "hashes": hashes,
            "mtimes": mtimes,
            "blobs": sorted(self.blobs),
        }
        return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()


def _notes_by_guid(notes: object, now: int) -> dict[str, Stamp]:
    """The usable notes of a version 1 record: {guid: [hash, mtime]}."""
    if not isinstance(notes, dict):
        return {}
    sane = _sane_notes(notes, now)
    return sane if sane is not None else _usable_notes(notes.items(), now)


def _sane_notes(notes: dict[str, object], now: int) -> dict[str, Stamp] | None:
    """The notes, if every one is exactly what version 1 wrote and sane, checked a
    column at a time (there is one per note ever issued); else None."""
    columns = sane_rows(list(notes.values()), 2, now)
    if columns is None or not all_guids(list(notes)):
        return None
    return dict(zip(notes, stamps_of(columns), strict=True))


def _notes_by_column(data: dict[str, object], now: int) -> dict[str, Stamp]:
    """The usable notes of a version 2 record: columns of GUIDs, hashes and times."""
    guids, hashes, mtimes = (data.get(name) for name in ("guids", "hashes", "mtimes"))
    if not (isinstance(guids, list) and isinstance(hashes, list) and isinstance(mtimes, list)):
        return {}
    if not len(guids) == len(hashes) == len(mtimes):
        return {}
    if sane_stamps(hashes, mtimes, now) and all_guids(guids):  # as version 2 writes it
        return dict(zip(guids, stamps(hashes, mtimes), strict=True))
    rows = map(list, zip(hashes, mtimes, strict=True))
    return _usable_notes(zip(guids, rows, strict=True), now)


def _usable_notes(rows: Iterable[tuple[object, object]], now: int) -> dict[str, Stamp]:
    """Of (GUID, [hash, mtime]) rows not as ankigen wrote them, what can be used, note by
    note."""
    found = {}
    for guid, value in rows:
        stamp = _stamp_or_none(value, now)
        if stamp is not None and isinstance(guid, str) and GUID.fullmatch(guid):
            found[guid] = stamp
    return found


def _stamp_or_none(value: object, now: int) -> Stamp | None:
    if (
        isinstance(value, list)
        and len(value) >= 2
        and isinstance(value[0], str)
        and time_problem(value[1], now) is None
    ):
        return Stamp(value[0], value[1])
    return None


def stamps_in_lock_text(text: bytes) -> Iterable[tuple[str, Stamp]]:
    """(GUID, stamp) of every note in one version of a lock file; damaged parts are skipped.

    Times that are not sane are skipped too: a lock once committed with a wrong
    clock must not push every later time into the future.
    """
    try:
        data = parse_json(text)
        decks = data["decks"]
        items_of = {key: deck["items"] for key, deck in decks.items()}
    except (ValueError, KeyError, TypeError, AttributeError):
        return
    now = clock()
    for key, items in items_of.items():
        if not isinstance(items, dict):
            continue
        topic, language = split_deck_key(str(key))
        for item_id, value in items.items():
            stamp = _stamp_or_none(value, now)
            if stamp is None:
                continue
            guid = value[2] if len(value) > 2 and isinstance(value[2], str) else None
            if guid is None or not GUID.fullmatch(guid):
                guid = note_guid(topic, language, str(item_id))
            yield guid, stamp


def _git(cwd: Path, *args: str, data: bytes | None = None) -> bytes | None:
    import subprocess  # here: only a build that changes something reads git's history

    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            input=data,
            capture_output=True,
            check=False,
            timeout=120,
        )
    except (OSError, subprocess.SubprocessError):
        return None  # no git on this machine: the output folder's record still holds
    return done.stdout if done.returncode == 0 else None


def _lock_versions(lock_path: Path, known: set[str]) -> list[tuple[str, bytes]]:
    """(blob id, content) of each version of the lock in any branch of its git repository."""
    folder = lock_path.parent
    if not folder.is_dir():
        return []
    log = _git(
        folder,
        "log",
        "--all",
        "--no-renames",
        "--format=",
        "--raw",
        "--no-abbrev",
        "--",
        lock_path.name,
    )
    if not log:
        return []
    blobs = []
    for line in log.decode("ascii", "replace").splitlines():
        # ":100644 100644 <old> <new> M\tpath": the new side is that commit's version
        fields = line.split()
        if len(fields) >= 5 and line.startswith(":"):
            blob = fields[3]
            if set(blob) != {"0"} and blob not in known and blob not in blobs:
                blobs.append(blob)
    if not blobs:
        return []
    out = _git(folder, "cat-file", "--batch", data="".join(b + "\n" for b in blobs).encode())
    if out is None:
        return []
    versions = []
    at = 0
    for blob in blobs:
        end = out.index(b"\n", at)
        header = out[at:end].split()
        at = end + 1
        if len(header) != 3 or header[1] != b"blob":
            continue
        size = int(header[2])
        versions.append((blob, out[at : at + size]))
        at += size + 1
    return versions


# ---------------------------------------------------------------- names


def former_keys(
    topic: str, language: str, topics: Sequence[str], languages: Sequence[str]
) -> list[tuple[str, str]]:
    """Every (topic, language) a bank was built under, the current one first."""
    names = [(topic, language)]
    for old_topic in [topic, *topics]:
        for old_language in [language, *languages]:
            if (old_topic, old_language) not in names:
                names.append((old_topic, old_language))
    return names


def oldest_key(
    topic: str, language: str, topics: Sequence[str], languages: Sequence[str]
) -> tuple[str, str]:
    """The name a bank was first built under: formerly lists older names oldest first."""
    return (topics[0] if topics else topic, languages[0] if languages else language)


# ---------------------------------------------------------------- resolving a build


class ItemIdentity(NamedTuple):
    """Who an item's note is to Anki, and what was issued for it before."""

    guid: str
    previous: Stamp | None
    """The lock's stamp for the item, under its current or a former id."""
    previous_id: str | None
    """The id the lock knew the item by."""
    issued: Stamp | None
    """The newest stamp ever issued for the GUID (git history, output folder)."""


@dataclass(frozen=True)
class DeckIdentity:
    """A deck's identity, held by column: most of a deck's items are as its lock entry
    holds them, last issued as it says (`_as_in_entry`), and such an item is made only
    when `items` is asked for (a deck of 10,000 items took 20 ms to resolve by item, and
    a build resolves every deck)."""

    key: str
    previous_key: str | None
    """The lock's key for this deck, current or former; None for a new deck."""
    previous: DeckLock | None
    deck_id: int
    ids: tuple[str, ...]
    """The bank's item ids, in its order."""
    odd: Mapping[int, ItemIdentity]
    """By position in `ids`: the items whose identity is not as the lock entry holds it."""

    @classmethod
    def of(
        cls,
        key: str,
        previous_key: str | None,
        previous: DeckLock | None,
        deck_id: int,
        items: Mapping[str, ItemIdentity],
    ) -> DeckIdentity:
        """The identity of a deck with these items, in the bank's order."""
        ids = list(items)
        found = list(items.values())
        usual = _as_in_entry(ids, previous)
        odd = {n: found[n] for n in itertools.compress(itertools.count(), map(ne, found, usual))}
        return cls(key, previous_key, previous, deck_id, tuple(ids), odd)

    @functools.cached_property
    def items(self) -> dict[str, ItemIdentity]:
        """Each item's identity, by id in the bank's order."""
        items = _as_in_entry(self.ids, self.previous)
        for n, item in self.odd.items():
            items[n] = item
        return dict(zip(self.ids, items, strict=True))

    @property
    def guids(self) -> list[str]:
        """Each item's GUID, in the bank's order."""
        if self.odd or self.previous is None:
            return [item.guid for item in self.items.values()]
        return list(map(self.previous.guids.__getitem__, self.ids))  # all in the entry

    def __reduce__(self) -> tuple[object, ...]:
        """Pickled by column, to a worker process, without the items made from the entry,
        which travels too (see `DeckLock.__reduce__`)."""
        odd = list(self.odd.values())
        previous, issued = [i.previous for i in odd], [i.issued for i in odd]
        guids, previous_ids = [i.guid for i in odd], [i.previous_id for i in odd]
        where = list(self.odd)
        columns = (where, guids, *_stamp_columns(previous), previous_ids, *_stamp_columns(issued))
        key, previous_key, entry, deck_id = self.key, self.previous_key, self.previous, self.deck_id
        return _deck_identity, (key, previous_key, entry, deck_id, self.ids, columns)

    @property
    def removed(self) -> tuple[str, ...]:
        """Ids in the lock's entry that no item claims any more."""
        if self.previous is None:
            return ()
        claimed = {i.previous_id for i in self.items.values()}
        return tuple(sorted(set(self.previous.items) - claimed))


def _stamp_columns(stamps: list[Stamp | None]) -> tuple[list[str | None], list[int]]:
    return [s.hash if s else None for s in stamps], [s.mtime if s else 0 for s in stamps]


def _stamps(hashes: list[str | None], mtimes: list[int]) -> list[Stamp | None]:
    return [None if h is None else Stamp(h, m) for h, m in zip(hashes, mtimes, strict=True)]


def _deck_identity(
    key: str,
    previous_key: str | None,
    previous: DeckLock | None,
    deck_id: int,
    ids: tuple[str, ...],
    columns: tuple[list[Any], ...],
) -> DeckIdentity:
    odd, guids, hashes, mtimes, previous_ids, issued_hashes, issued_mtimes = columns
    found = map(
        ItemIdentity,
        guids,
        _stamps(hashes, mtimes),
        previous_ids,
        _stamps(issued_hashes, issued_mtimes),
    )
    odd_items = dict(zip(odd, found, strict=True))
    return DeckIdentity(key, previous_key, previous, deck_id, ids, odd_items)


def _as_in_entry(ids: Sequence[str], entry: DeckLock | None) -> list[ItemIdentity]:
    """Each item's identity as the deck's lock entry holds it, last issued as it says: what
    most items are (see `DeckIdentity`)."""
    stamps: dict[str, Stamp] = entry.items if entry else {}
    guids: dict[str, str] = entry.guids if entry else {}
    locked = list(map(stamps.get, ids))
    return list(map(ItemIdentity, map(guids.get, ids, ids), locked, ids, locked))


def resolve(
    outlines: Sequence[Outline],
    lock: Lock,
    issued: Issued,
    resolved: Mapping[str, DeckIdentity] | None = None,
) -> dict[str, DeckIdentity]:
    """Each bank's deck identity: its lock entry, and each item's GUID and stamps.
    `resolved`: identities resolved before from the same outlines, lock and evidence."""
    out: dict[str, DeckIdentity] = {}
    for outlined in outlines:
        bank = outlined.bank
        if resolved and bank.key in resolved:
            out[bank.key] = resolved[bank.key]
            continue
        names = former_keys(
            bank.topic, bank.language, bank.formerly_topics, bank.formerly_languages
        )
        previous_key = next((deck_key(*n) for n in names if deck_key(*n) in lock.decks), None)
        previous = lock.decks.get(previous_key) if previous_key else None
        oldest = oldest_key(
            bank.topic, bank.language, bank.formerly_topics, bank.formerly_languages
        )
        ids = [item.id for item in outlined.items]
        if previous is not None and previous.items.keys() >= set(ids):
            # the usual deck: every item kept its id, so the lock gives every GUID and
            # stamp; looked up a column at a time, and only the items last issued other
            # than as the lock has them are made
            guids = list(map(previous.guids.__getitem__, ids))
            stamps = list(map(previous.items.__getitem__, ids))
            newest = list(map(issued.notes.get, guids))  # `Issued.newest`, without a call
            odd = (
                {}
                if newest == stamps  # compared at once: the usual case
                else {
                    n: ItemIdentity(guids[n], stamps[n], ids[n], newest[n])
                    for n in itertools.compress(itertools.count(), map(ne, newest, stamps))
                }
            )
            ident = DeckIdentity(
                bank.key, previous_key, previous, deck_id(*oldest), tuple(ids), odd
            )
        else:
            items = _items_one_by_one(outlined, previous, oldest, issued)
            ident = DeckIdentity.of(bank.key, previous_key, previous, deck_id(*oldest), items)
        out[bank.key] = ident
    return out


def _items_one_by_one(
    outlined: Outline, previous: DeckLock | None, oldest: tuple[str, str], issued: Issued
) -> dict[str, ItemIdentity]:
    """Each item's identity: its lock entry under its id or a former one, else a new GUID."""
    items: dict[str, ItemIdentity] = {}
    known = previous.items if previous is not None else {}
    for item in outlined.items:
        found = (
            item.id if item.id in known else next(filter(known.__contains__, item.formerly), None)
        )
        if previous is not None and found is not None:
            guid = previous.guids[found]
            stamp: Stamp | None = previous.items[found]
        else:
            guid = note_guid(*oldest, item.formerly[0] if item.formerly else item.id)
            stamp = None
        items[item.id] = ItemIdentity(guid, stamp, found, issued.newest(guid))
    return items


def orphans(decks: Mapping[str, DeckIdentity], lock: Lock) -> list[str]:
    """Lock entries that no bank of this build claims: decks whose bank is not found."""
    claimed = {d.previous_key for d in decks.values()}
    return sorted(key for key in lock.decks if key not in claimed)


def duplicate_guids(decks: Mapping[str, DeckIdentity]) -> list[tuple[str, str, str]]:
    """(guid, first deck:item, second deck:item) for notes that would be one note to Anki."""
    columns = {key: deck.guids for key, deck in decks.items()}
    if len(set(itertools.chain.from_iterable(columns.values()))) == sum(map(len, columns.values())):
        return []  # the usual case, seen at once
    seen: dict[str, str] = {}
    clashes = []
    for key, deck in decks.items():
        for item_id, guid in zip(deck.ids, columns[key], strict=True):
            where = f"{deck.key}:{item_id}"
            if guid in seen:
                clashes.append((guid, seen[guid], where))
            else:
                seen[guid] = where
    return clashes


# ---------------------------------------------------------------- renames nobody declared

# Comparing every new id with every removed one costs a hash per pair; past this
# many pairs a deck was rewritten wholesale and guessing renames is pointless.
MAX_RENAME_PAIRS = 20_000


def formerly_line(old: tuple[str, str], new: tuple[str, str]) -> str:
    parts = []
    if old[0] != new[0]:
        parts.append(f"topic: {old[0]}")
    if old[1] != new[1]:
        parts.append(f"language: {old[1]}")
    return "formerly: {" + ", ".join(parts) + "}"


def renamed_decks(
    outlines: Sequence[Outline],
    decks: Mapping[str, DeckIdentity],
    lock: Lock,
    orphan_keys: Sequence[str],
) -> list[tuple[Bank, str, int]]:
    """(bank, orphan key, shared ids) where a new deck shares most item ids of a lost one."""
    found = []
    for outlined in outlines:
        bank = outlined.bank
        if decks[bank.key].previous is not None:
            continue
        ids = {item.id for item in outlined.items}
        for key in orphan_keys:
            old_ids = set(lock.decks[key].items)
            shared = len(ids & old_ids)
            if old_ids and shared * 2 > len(old_ids):
                found.append((bank, key, shared))
    return found


def renamed_items(contents: Mapping[str, NoteContent], deck: DeckIdentity) -> list[tuple[str, str]]:
    """(old id, new id) where a removed id's content reappears under a new id."""
    removed = deck.removed
    new_ids = [i for i, ident in deck.items.items() if ident.previous is None]
    if deck.previous is None or not removed or len(removed) * len(new_ids) > MAX_RENAME_PAIRS:
        return []
    found = []
    for new_id in new_ids:
        for old_id in removed:
            if contents[new_id].hash_as(old_id) == deck.previous.items[old_id].hash:
                found.append((old_id, new_id))
                break
    return found


def swapped_items(contents: Mapping[str, NoteContent], deck: DeckIdentity) -> list[tuple[str, str]]:
    """(a, b) where item a now holds what b held and b what a held: history would swap too."""
    changed = [
        i
        for i, ident in deck.items.items()
        if ident.previous is not None
        and ident.previous_id == i
        and contents[i].hash != ident.previous.hash
    ]
    if len(changed) ** 2 > MAX_RENAME_PAIRS:
        return []
    previous = {i: deck.items[i].previous for i in changed}
    pairs = []
    for n, a in enumerate(changed):
        for b in changed[n + 1 :]:
            before_a, before_b = previous[a], previous[b]
            assert before_a is not None and before_b is not None
            if contents[a].hash_as(b) == before_b.hash and contents[b].hash_as(a) == before_a.hash:
                pairs.append((a, b))
    return pairs
