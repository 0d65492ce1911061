"""A note's stamp, its content hash and the modification time it was issued with, and
the one rule for a new time (`restamp`): the same content keeps its time, any other gets
one later than every time ever issued."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence
from operator import itemgetter
from typing import NamedTuple, cast

from ankigen.core.times import EARLIEST, FUTURE_SLACK


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
