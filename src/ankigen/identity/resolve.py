"""Each item's identity in a build: the GUID it was issued under (renames keep the
oldest), what the lock and the evidence say was issued for it, and the decks and items
that were renamed, swapped, orphaned or given one GUID twice."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from operator import ne
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from ankigen.identity.guid import (
    deck_id,
    deck_key,
    former_keys,
    note_guid,
    oldest_key,
)
from ankigen.identity.issued import (
    Issued,
)
from ankigen.identity.stamp import (
    Stamp,
)

if TYPE_CHECKING:
    from ankigen.bank.model import Bank, Outline
    from ankigen.identity.lockfile import DeckLock, Lock


# ---------------------------------------------------------------- time


# ---------------------------------------------------------------- stamps


# ---------------------------------------------------------------- evidence


# ---------------------------------------------------------------- names


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


class Content(Protocol):
    """What rename and swap detection reads of a note's content (`apkg.note.NoteContent`):
    identity decides, it does not make notes."""

    @property
    def hash(self) -> str: ...

    def hash_as(self, item_id: str) -> str: ...


def renamed_items(contents: Mapping[str, Content], deck: DeckIdentity) -> list[tuple[str, str]]:
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


def swapped_items(contents: Mapping[str, Content], deck: DeckIdentity) -> list[tuple[str, str]]:
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
