"""The build's check: every bank checked once, in worker processes and this one, through
the bank cache (an unchanged bank is not parsed), each result followed at once by its
deck's plan where a build asks for it."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from ankigen.bank.files import Source, SourceDigest
from ankigen.bank.model import Bank, Outline, Parity, outline
from ankigen.bank.reader import Readable, readable_part
from ankigen.checks import cache_entry
from ankigen.checks.across import (
    check_across,
)
from ankigen.checks.bankcache import (
    BankCache,
)
from ankigen.checks.parity import parity
from ankigen.checks.rules import (
    Before,
    _has_errors,
    load_and_check,
)
from ankigen.checks.translation import (
    forget_texts,
    sources_for,
)
from ankigen.checks.verdicts import use as use_verdicts
from ankigen.core.errors import Diagnostic
from ankigen.core.parallel import Pool, in_worker, parallel_map
from ankigen.text.langid import take_learned


@dataclass(frozen=True)
class CheckedOutlines:
    """What a build keeps of its banks once checked: their outlines (the items stay in the
    bank cache), with every problem found in and across them."""

    outlines: tuple[Outline, ...]
    diagnostics: tuple[Diagnostic, ...]

    @property
    def errors(self) -> int:
        return sum(d.severity == "error" for d in self.diagnostics)


EntryArrival = Callable[[bytes | None], None]
"""Called once with a bank's cache entry when it comes, or None if it never will."""


class AfterCheck(Protocol):
    """Work to start on a bank as soon as it is checked without errors, in the process
    that checked it, while other banks are still being checked (a deck's plan)."""

    def after(
        self, source: SourceDigest, outlined: Outline, entry: bytes, bank: Bank | None
    ) -> Callable[[], object] | None:
        """The work, picklable, or None. `entry` is the bank's cache entry, or
        `cache_entry.LATER` where the work runs beside the bank; `bank` the bank itself,
        when it was kept in this process."""

    def collect(
        self,
        source: SourceDigest,
        outcome: object,
        entry_later: EntryArrival | None = None,
    ) -> None:
        """Its outcome when it comes (None if it failed), maybe after every bank's
        result: from the thread that feeds the workers, or this one. With `entry_later`,
        the bank's entry travels on with the outcome's next step (`entry_goes_with`):
        called once, with the entry when it comes or None if it never will."""


@dataclass(frozen=True)
class _AfterEach:
    """`AfterCheck` as `parallel_map` calls it: with each bank's job and result. A bank
    whose entry comes later (`cache_entry.LATER`) always has a follow-up, which brings it."""

    then: AfterCheck
    cache: BankCache | None = None

    def after(self, job: tuple[Source, object], checked: _Checked) -> Callable[[], object] | None:
        (bank, outlined, found), entry, _, _ = checked
        source = job[0]
        later = entry == cache_entry.LATER and self.cache is not None
        if later:
            assert self.cache is not None
            self.cache.expect(source)  # its bytes are kept until the entry comes
        elif entry is not None and outlined is not None:
            # its entry holds what the build needs of it; a bank that did not load keeps
            # its bytes, read again for the checks across banks (`broken_parts`)
            source.release()
        if outlined is None or entry is None or _has_errors(found):
            return None
        follow = self.then.after(source.seen, outlined, entry, bank)
        return functools.partial(_with_entry, source.digest, follow) if later else follow

    def collect(self, job: tuple[Source, object], outcome: object) -> None:
        source, cache = job[0], self.cache
        if cache is None or not cache.expects(source):
            self.then.collect(source.seen, outcome)
            return

        def arrive(entry: bytes | None) -> None:
            assert cache is not None
            cache.arrive(source, entry)
            if entry:
                source.release()

        outcome, entry = outcome if isinstance(outcome, tuple) else (None, None)
        if entry == cache_entry.LATER:
            self.then.collect(source.seen, outcome, arrive)
        else:
            arrive(entry)
            self.then.collect(source.seen, outcome)


class EntryLater:
    """A bank's cache entry made in a worker after the bank's follow-up (its deck's plan):
    0.1 s for 10,000 items, half of it in JSON's encoder, which holds the interpreter
    lock throughout. Made as the check's result left, it held up that result and the
    deck's job on their way (0.13 s from the check to the plan instead of 0.04); a
    follow-up that keeps a package has it made while the package is compressed
    (`builder.jobs.run_held_package`), which leaves the interpreter lock free."""

    def __init__(self, make: Callable[[], bytes]) -> None:
        self._make: Callable[[], bytes] | None = make
        self.entry: bytes | None = None
        self.goes_with: str | None = None
        """The token of the package the entry goes with (`entry_goes_with`), if any."""

    def result(self) -> bytes | None:
        """The entry, made now if it was not made yet; None if it could not be made."""
        if self._make is not None:
            make, self._make = self._make, None
            with contextlib.suppress(Exception):  # None: the main process makes it itself
                self.entry = make()
        return self.entry


_entries_later: dict[str, EntryLater] = {}
"""By bank digest, in a worker: entries to be made for the bank's follow-up to bring."""


def entry_goes_with(digest: str, token: str) -> EntryLater | None:
    """In a follow-up: the entry of the bank with this digest travels with the package
    kept under `token`, not with the follow-up's outcome. The entry, not yet started, if
    there is one: it is made with the package (`builder.jobs.run_held_package`)."""
    made = _entries_later.get(digest)
    if made is not None:
        made.goes_with = token
    return made


def _with_entry(digest: str, follow: Callable[[], object] | None) -> tuple[object, bytes | None]:
    """A follow-up's outcome (None if it failed), with the entry made after it, if it was
    made in this process; `cache_entry.LATER` if it goes with a package instead."""
    try:
        outcome = follow() if follow is not None else None
    except Exception:  # as a failed follow-up: its deck is planned again in its turn
        outcome = None
    made = _entries_later.pop(digest, None)
    if made is None:
        return outcome, None
    if made.goes_with is not None and outcome is not None:
        return outcome, cache_entry.LATER  # the package it goes with holds it
    return outcome, made.result()


def check_outlines(
    sources: Sequence[Source],
    pool: Pool | None,
    cache: BankCache,
    reference: str = "",
    then: AfterCheck | None = None,
    meanwhile: Callable[[], None] | None = None,
    deck_name: Callable[[Bank], str] | None = None,
) -> CheckedOutlines:
    """`check_sources` for a build: banks whose bytes were checked before are not parsed
    again, and only the outline of the banks they did not change is read from the cache,
    besides the whole of a topic's reference and translation that must be compared.
    Banks parsed afresh are kept as entries too, not whole: a large project's banks do not
    fit in memory at once; each is read again from its entry for that comparison, where
    its parity shows it out of step with its reference. `then` starts work on each bank
    checked afresh as soon as it is; `meanwhile` is what this process does once the
    workers have started on the banks, before it checks any itself."""
    results = _check_each(sources, pool, cache, reference, then, meanwhile)
    by_path = {source.shown: source for source in sources}

    def full(found: Outline) -> Bank:
        # a translation is compared with one reference; a reference's items are kept in
        # its index for all its translations
        return cache.bank(by_path[found.bank.path])

    outlines = [found for _, found, _ in results.values() if found is not None]
    diagnostics = [d for _, _, found in results.values() for d in found]
    diagnostics.extend(
        check_across(
            outlines,
            full,
            reference,
            cache,
            lambda found: cache.parity(by_path[found.bank.path]),
            deck_name,
            broken_parts(sources, results),
        )
    )
    cache.drop_parities()
    return CheckedOutlines(tuple(outlines), tuple(sorted(diagnostics)))


def broken_parts(sources: Sequence[Source], results: dict[str, _Result]) -> list[Readable]:
    """What reads well of each bank that did not load for its errors, where its settings
    do: such a bank still takes its deck name and its topic in its language, and its
    items that read well are compared with the other languages'."""
    found = []
    for source in sources:
        if results[source.shown][1] is not None:
            continue
        data = _bytes_checked(source)
        part = readable_part(source.shown, data) if data is not None else None
        if part is not None:
            found.append(part)
    return found


def _bytes_checked(source: Source) -> bytes | None:
    """The bytes the bank was checked from. A build keeps those of a bank with errors
    (`_AfterEach.after`), but one known by its status alone was never read: read now,
    they count only if they are the bytes checked."""
    if not (source.released or source.unread):
        return source.data
    try:
        data = source.path.read_bytes()
    except OSError:
        return None
    return data if hashlib.sha256(data).hexdigest() == source.digest else None


# a bank as checked: the whole bank when it was parsed here and kept (see `_check_each`),
# its outline (None if it did not load), its problems
_Result = tuple[Bank | None, Outline | None, list[Diagnostic]]


def _check_each(
    sources: Sequence[Source],
    pool: Pool | None,
    cache: BankCache | None,
    reference: str,
    then: AfterCheck | None = None,
    meanwhile: Callable[[], None] | None = None,
) -> dict[str, _Result]:
    """Each bank checked by itself, by bank path, in the order of `sources`. The banks
    without a cache entry start first, in the workers: this process then does
    `meanwhile` and reads the outlines of the others while they are checked."""
    known: dict[str, _Result] = {}
    new = [s for s in sources if cache is None or not cache.has_entry(s)]
    fed = threading.Event()
    running = _start_checks(new, pool, cache, reference, then, fed)
    try:
        # `meanwhile` first: what `then` waits for before it can start a deck (the lock),
        # while the outlines are not needed before every bank is checked
        if meanwhile is not None:
            meanwhile()
            # and a bank checked alone in a worker has its deck's job sent back first: the
            # thread that makes it would wait for the interpreter lock while this one reads
            # outlines, and the worker for it (0.25 s of an edit at 10 x 10,000 items)
            fed.wait()
        unusable: list[Source] = []  # entries that prove not what this version writes
        started = {source.shown for source in new}
        for source in sources:
            if cache is None or source.shown in started:
                continue
            outlined = cache.get(source)
            if outlined is None:
                unusable.append(source)
            else:
                known[source.shown] = (None, *outlined)
        checked = list(zip(new, running, strict=True))
        if unusable:
            again = _start_checks(unusable, pool, cache, reference, then)
            checked.extend(zip(unusable, again, strict=True))
    finally:
        _checked_here.clear()  # a bank checked here whose deck was not planned here
    for source, (result, entry, facts, learned) in checked:
        known[source.shown] = result
        if cache:
            cache.verdicts.learn(learned)
        if cache and entry is not None:
            cache.put(source, entry, result[0], facts)
    return {source.shown: known[source.shown] for source in sources}


# A bank changed alone goes to a worker with its deck's plan, while this process reads
# the lock and the other banks' outlines, only from this size: below it the worker's
# start and the bank's trip cost more than that overlap saves. An edit to one of ten
# half-translated banks, median of 30 alternating runs: 190 KB (300 items), 0.31 s in
# a (forked) worker, 0.30 s without; 320 KB, 0.38 and 0.39 s; 650 KB (1,000 items),
# 0.42 and 0.47 s
LONE_BANK_FOR_A_WORKER = 256 << 10


def _start_checks(
    fresh: Sequence[Source],
    pool: Pool | None,
    cache: BankCache | None,
    reference: str,
    then: AfterCheck | None,
    fed: threading.Event | None = None,
) -> Iterator[_Checked]:
    """The banks checked afresh: started in the workers now, their results as they are
    asked for. `fed` is set once a bank checked alone in a worker has its follow-up
    (see `parallel_map`), and at once for any other check."""
    for source in fresh:
        source.read()  # if it was known by its status alone
    if len(fresh) == 1 and fresh[0].size < LONE_BANK_FOR_A_WORKER:
        then = None  # checked and planned here, in turn
    # without a cache every bank is kept whole; with one, a bank edited alone (parsed
    # here) is kept for its deck's job, but not the many banks of a cold build: a large
    # project's banks do not fit in memory at once (and with workers and follow-ups,
    # even a bank edited alone goes to a worker, whose follow-up has it at hand)
    keep = cache is None or (len(fresh) == 1 and (pool is None or then is None))
    # a bank checked alone goes to the one worker, and its follow-up after it, which
    # brings its entry (`cache_entry.LATER`)
    later = (
        cache is not None
        and pool is not None
        and pool.max_workers == 1
        and then is not None
        and len(fresh) == 1
    )
    verdicts = str(cache.verdicts.path) if cache is not None else None
    work = functools.partial(
        _load_and_check, cache is not None, keep, sources_for(reference), later, verdicts
    )
    jobs = [(source, cache.previous(source) if cache else None) for source in fresh]
    after = _AfterEach(then, cache) if then is not None else None
    if fed is not None and not later:
        fed.set()
        fed = None
    return parallel_map(work, jobs, pool, lambda job: job[0].size, after, fed)


# a bank checked afresh, its bank cache entry and parity if the cache is kept, and the
# language identifier's new verdicts (`checks.verdicts`)
_Checked = tuple[_Result, bytes | None, Parity | None, dict[str, str]]


_checked_here: dict[str, Bank] = {}
"""The bank this process checked last for a build, by digest, until its deck's job takes
it (`parallel_map` runs that job next, in the same process): loading it again from its
entry costs a sixth of checking it."""


def checked_here(digest: str) -> Bank | None:
    """The bank with this digest if this process has just checked it (see above)."""
    return _checked_here.pop(digest, None)


def _load_and_check(
    for_cache: bool,
    keep: bool,
    sources: tuple[str, ...],
    later: bool,
    verdicts: str | None,
    job: tuple[Source, tuple[SourceDigest, bytes] | None],
) -> _Checked:
    """`load_and_check`, and the bank cache's entry for its result: made where the bank
    was checked, in a worker process too, not one after another in the main process.
    With the entry of the file's previous bytes, its unchanged items are reused. For the
    cache, the bank travels back as its entry, outline and parity, and whole only if
    `keep`; with `later`, in a worker, a bank without errors sends its entry with its
    follow-up's outcome, or the package the follow-up kept (`cache_entry.LATER`)."""
    source, previous = job
    _checked_here.clear()
    if verdicts is not None:
        use_verdicts(verdicts)
    before = Before()
    if previous is not None:
        with contextlib.suppress(cache_entry.BadEntry, RecursionError):
            old, found = cache_entry.load(*previous, sources)
            if old is not None:
                before = Before.of(old, found, cache_entry.load_parity(*previous, sources))
    bank, found = load_and_check(source, sources, before)
    learned = take_learned() if verdicts is not None else {}
    outlined = outline(bank) if bank is not None else None
    result = (bank if keep else None), outlined, found
    if not for_cache:
        # `serve` and `lint`: no bank cache, and the checks' memos of texts stay; `serve`
        # re-checks an edited bank through them (forgotten, a save at 10 x 1,000 items
        # took 0.75 s, not 0.3)
        return result, None, None, learned
    facts = None if bank is None else parity(bank, before.parity)
    # a build: the bank's texts, held by the checks' memos until its end (50 MiB of a
    # process at 10 x 10,000 items); an edit reuses verdicts through the bank cache
    forget_texts()
    if bank is not None and not keep:
        _checked_here[source.digest] = bank
    make = functools.partial(cache_entry.dump, source, (bank, found), sources, outlined, facts)
    # a large bank's parity is read back from its entry where it is needed: held for
    # every bank at once, parities were a tenth of a cold build's memory at 10 x 10,000
    sent = facts if keep or source.size < PARITY_SENT_BELOW else None
    if later and in_worker() and bank is not None and not _has_errors(found):
        _entries_later[source.digest] = EntryLater(make)
        # sent whatever its size: the entry comes only with the package, and comparing
        # the bank with its reference waited for it (0.75 s of an edit at 10 x 10,000)
        return result, cache_entry.LATER, facts, learned
    return result, make(), sent, learned


PARITY_SENT_BELOW = 2 << 20
"""Bytes of bank under which a bank checked in a cold build keeps its parity in memory
for comparing translations: reading it back from the entry costs 5 ms per 1,000 items,
holding it 0.27 MiB per 1,000 items."""
