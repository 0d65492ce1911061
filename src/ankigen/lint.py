"""Checks on banks beyond their schema: across languages, scripts, placeholders, bias.

`build`, `lint`, `preview` and `status` all run these, so an author sees the
same problems wherever they look.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import re
import threading
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from ankigen import bankcache
from ankigen.bank.files import Source, SourceDigest, read_files
from ankigen.bank.model import Bank, Item, Outline, Parity, ParityRow, outline
from ankigen.bank.reader import parse_bank
from ankigen.bank.values import lookalike_key
from ankigen.bankcache import BankCache
from ankigen.core.errors import Diagnostic
from ankigen.core.parallel import Pool, in_worker, parallel_map
from ankigen.identity.guid import deck_key, former_keys
from ankigen.text import lang, langid, markup
from ankigen.text.html import plain_text

# The script a language is written in, by the first word of Unicode character
# names (which follow the Script property for letters). Languages not listed
# are not checked.
EXPECTED_SCRIPT = {
    "bn": "BENGALI",
    "as": "BENGALI",
    "hi": "DEVANAGARI",
    "mr": "DEVANAGARI",
    "ne": "DEVANAGARI",
    "ur": "ARABIC",
    "ar": "ARABIC",
    "fa": "ARABIC",
    "ps": "ARABIC",
    "he": "HEBREW",
    "ru": "CYRILLIC",
    "uk": "CYRILLIC",
    "bg": "CYRILLIC",
    "el": "GREEK",
    "ta": "TAMIL",
    "te": "TELUGU",
    "th": "THAI",
    "ko": "HANGUL",
    "am": "ETHIOPIC",
    "ka": "GEORGIAN",
    "hy": "ARMENIAN",
    "zh": "CJK",
    "ja": "CJK HIRAGANA KATAKANA",
    "en": "LATIN",
    "de": "LATIN",
    "fr": "LATIN",
    "es": "LATIN",
    "pt": "LATIN",
    "yo": "LATIN",
    "wo": "LATIN",
}

PLACEHOLDER = re.compile(
    r"_AIU_PROTECTED_\w*|__[A-Z][A-Z0-9_]*__|\{\{\s*\w*\s*\}\}|\{\d+\}|%\(\w+\)[sd]|%[sd]\b"
    r"|\$\{\w+\}|\[\[\w+\]\]|<x\s+id=|\uFFFD"
)
# what every match of PLACEHOLDER holds: texts without any have none, even once their
# code and math are taken out (`markup.prose` only removes, and puts a space between)
_PLACEHOLDER_NEEDLES = ("_AIU_PROTECTED_", "__", "{", "%", "[[", "<x", "\ufffd")
BIAS_MIN_ITEMS = 4


@dataclass(frozen=True)
class Checked:
    """Banks that loaded, with every problem found in and across them."""

    banks: tuple[Bank, ...]
    diagnostics: tuple[Diagnostic, ...]
    failed: tuple[Path, ...] = ()
    """Bank files that could not be loaded at all."""
    reference: str = ""
    """The project's reference language, if it names one."""

    @property
    def errors(self) -> int:
        return sum(d.severity == "error" for d in self.diagnostics)

    @property
    def warnings(self) -> int:
        return sum(d.severity == "warning" for d in self.diagnostics)


def check_paths(
    paths: Iterable[Path],
    media_dir: Path | None = None,
    pool: Pool | None = None,
    reference: str = "",
) -> Checked:
    """Read, load and check banks (for lint, status and preview)."""
    sources, unreadable = read_files(list(paths))
    checked = check_sources(sources, media_dir, pool, reference=reference)
    if not unreadable:
        return checked
    return replace(checked, diagnostics=tuple(sorted([*checked.diagnostics, *unreadable])))


def check_sources(
    sources: Sequence[Source],
    media_dir: Path | None = None,
    pool: Pool | None = None,
    reference: str = "",
) -> Checked:
    """Load and check banks from the bytes already read; with `media_dir`, also verify
    every image they name. `reference` is the project's reference language (by
    default English where a topic has it)."""
    results = _check_each(sources, pool, None, reference)
    banks = {path: bank for path, (bank, _, _) in results.items() if bank is not None}
    outlines = [found for _, found, _ in results.values() if found is not None]
    diagnostics = [d for _, _, found in results.values() for d in found]
    diagnostics.extend(check_across(outlines, lambda o: banks[o.bank.path], reference))
    if media_dir is not None:
        diagnostics.extend(check_images(outlines, media_dir))
    failed = tuple(Path(path) for path, (bank, _, _) in results.items() if bank is None)
    return Checked(tuple(banks.values()), tuple(sorted(diagnostics)), failed, reference)


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
        `bankcache.LATER` where the work runs beside the bank; `bank` the bank itself,
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
    whose entry comes later (`bankcache.LATER`) always has a follow-up, which brings it."""

    then: AfterCheck
    cache: BankCache | None = None

    def after(self, job: tuple[Source, object], checked: _Checked) -> Callable[[], object] | None:
        (bank, outlined, found), entry, _ = checked
        source = job[0]
        later = entry == bankcache.LATER and self.cache is not None
        if later:
            assert self.cache is not None
            self.cache.expect(source)  # its bytes are kept until the entry comes
        elif entry is not None:
            source.release()  # its entry holds what the build needs of it
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
        if entry == bankcache.LATER:
            self.then.collect(source.seen, outcome, arrive)
        else:
            arrive(entry)
            self.then.collect(source.seen, outcome)


class EntryLater(threading.Thread):
    """A bank's cache entry made in a worker, in a thread, after the bank's follow-up (its
    deck's plan): 0.1 s for 10,000 items, half of it in JSON's encoder, which holds the
    interpreter lock throughout. Made as the check's result left, it held up that result
    and the deck's job on their way (0.13 s from the check to the plan instead of 0.04);
    a follow-up that keeps a package has it made while the package is deflated, which
    lets go of the lock (`entry_goes_with`)."""

    def __init__(self, make: Callable[[], bytes]) -> None:
        super().__init__(name="ankigen-entry", daemon=True)
        self.make = make
        self.entry: bytes | None = None
        self.goes_with: str | None = None
        """The token of the package the entry goes with (`entry_goes_with`), if any."""

    def run(self) -> None:
        with contextlib.suppress(Exception):  # None: the main process makes it itself
            self.entry = self.make()

    def result(self) -> bytes | None:
        """The entry, made now if it was not started; None if it could not be made."""
        if self.ident is None:  # not started
            self.start()
        self.join()
        return self.entry


_entries_later: dict[str, EntryLater] = {}
"""By bank digest, in a worker: entries to be made for the bank's follow-up to bring."""
_entries_passed_on: dict[str, EntryLater] = {}
"""By package token, in a worker: entries to be made for a package to bring."""


def entry_goes_with(digest: str, token: str) -> None:
    """In a follow-up: the entry of the bank with this digest travels with the package
    kept under `token`, not with the follow-up's outcome (`entry_for_package`)."""
    made = _entries_later.get(digest)
    if made is not None:
        made.goes_with = token


def entry_for_package(token: str) -> EntryLater | None:
    """The entry that goes with the package kept under `token`, not yet started: start it
    as the package is deflated, then take its `result` (None: the main process makes the
    entry itself)."""
    return _entries_passed_on.pop(token, None)


def _with_entry(digest: str, follow: Callable[[], object] | None) -> tuple[object, bytes | None]:
    """A follow-up's outcome (None if it failed), with the entry made after it, if it was
    made in this process; `bankcache.LATER` if it goes with a package instead."""
    try:
        outcome = follow() if follow is not None else None
    except Exception:  # as a failed follow-up: its deck is planned again in its turn
        outcome = None
    made = _entries_later.pop(digest, None)
    if made is None:
        return outcome, None
    if made.goes_with is not None and outcome is not None:
        _entries_passed_on[made.goes_with] = made
        return outcome, bankcache.LATER
    return outcome, made.result()


def check_outlines(
    sources: Sequence[Source],
    pool: Pool | None,
    cache: BankCache,
    reference: str = "",
    then: AfterCheck | None = None,
    meanwhile: Callable[[], None] | None = None,
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
            outlines, full, reference, cache, lambda found: cache.parity(by_path[found.bank.path])
        )
    )
    cache.drop_parities()
    return CheckedOutlines(tuple(outlines), tuple(sorted(diagnostics)))


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
    for source, (result, entry, facts) in checked:
        known[source.shown] = result
        if cache and entry is not None:
            cache.put(source, entry, result[0], facts)
    return {source.shown: known[source.shown] for source in sources}


# A bank changed alone goes to a worker with its deck's plan, while this process reads
# the lock and prepares the other decks, only from this size: below it the worker's
# start and the bank's trip cost more than that overlap saves. An edit, median of
# alternating runs: 10 x 1,000 items, 0.66 s with a (forked) worker, 0.62 s without;
# 10 x 10,000, 3.8 s with a (spawned) worker, 4.4 s without
LONE_BANK_FOR_A_WORKER = 2 << 20


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
    # brings its entry (`bankcache.LATER`)
    later = (
        cache is not None
        and pool is not None
        and pool.max_workers == 1
        and then is not None
        and len(fresh) == 1
    )
    work = functools.partial(
        _load_and_check, cache is not None, keep, sources_for(reference), later
    )
    jobs = [(source, cache.previous(source) if cache else None) for source in fresh]
    after = _AfterEach(then, cache) if then is not None else None
    if fed is not None and not later:
        fed.set()
        fed = None
    return parallel_map(work, jobs, pool, lambda job: job[0].size, after, fed)


def check_images(outlines: Sequence[Outline], media_dir: Path) -> list[Diagnostic]:
    from ankigen.images.process import check, image_refs

    return check(image_refs(outlines), media_dir)


def sources_for(reference: str) -> tuple[str, ...]:
    """The languages texts are translated from: English and the project's reference."""
    return tuple(dict.fromkeys((*SOURCES, *([reference] if reference else []))))


# a bank checked afresh, and its bank cache entry and parity if the cache is kept
_Checked = tuple[_Result, bytes | None, Parity | None]


@dataclass(frozen=True)
class Before:
    """A bank as its previous bytes were checked: the items an edit may reuse, and what
    the untranslated-text check (the costliest) said of each, which holds as long as the
    item and the bank's language are the same."""

    items: tuple[Item, ...] = ()
    language: str = ""
    untranslated: dict[int, str] = field(default_factory=dict)
    """Item seal -> the warning about its untranslated texts, or "" for none."""
    parity: dict[int, ParityRow] = field(default_factory=dict)
    """Item seal -> the item's row of the bank's `parity`, a function of its content."""

    @classmethod
    def of(
        cls, bank: Bank, diagnostics: Sequence[Diagnostic], facts: Parity | None = None
    ) -> Before:
        rows = {}
        if facts:
            rows = {i.seal: facts[i.id] for i in bank.items if i.seal and i.id in facts}
        at: dict[int, list[str]] = {}
        for diagnostic in diagnostics:
            at.setdefault(diagnostic.line, []).append(diagnostic.message)
        said = {}
        for item in bank.items:
            if item.seal:
                prefix = _untranslated_prefix(item)
                said[item.seal] = next(
                    (m for m in at.get(item.line, ()) if m.startswith(prefix)), ""
                )
        return cls(bank.items, bank.language, said, rows)


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
    job: tuple[Source, tuple[SourceDigest, bytes] | None],
) -> _Checked:
    """`load_and_check`, and the bank cache's entry for its result: made where the bank
    was checked, in a worker process too, not one after another in the main process.
    With the entry of the file's previous bytes, its unchanged items are reused. For the
    cache, the bank travels back as its entry, outline and parity, and whole only if
    `keep`; with `later`, in a worker, a bank without errors sends its entry with its
    follow-up's outcome, or the package the follow-up kept (`bankcache.LATER`)."""
    source, previous = job
    _checked_here.clear()
    before = Before()
    if previous is not None:
        with contextlib.suppress(bankcache.BadEntry, RecursionError):
            old, found = bankcache.load(*previous, sources)
            if old is not None:
                before = Before.of(old, found, bankcache.load_parity(*previous, sources))
    bank, found = load_and_check(source, sources, before)
    outlined = outline(bank) if bank is not None else None
    result = (bank if keep else None), outlined, found
    if not for_cache:
        return result, None, None
    facts = None if bank is None else parity(bank, before.parity)
    if bank is not None and not keep:
        _checked_here[source.digest] = bank
    make = functools.partial(bankcache.dump, source, (bank, found), sources, outlined, facts)
    if later and in_worker() and bank is not None and not _has_errors(found):
        _entries_later[source.digest] = EntryLater(make)
        return result, bankcache.LATER, facts
    return result, make(), facts


def _has_errors(found: Iterable[Diagnostic]) -> bool:
    return any(d.severity == "error" for d in found)


def load_and_check(
    source: Source, sources: tuple[str, ...] = ("en",), before: Before | None = None
) -> tuple[Bank | None, list[Diagnostic]]:
    """One bank with the problems found in it alone (runs in a worker process)."""
    bank, found = parse_bank(source.shown, source.data, before.items if before else ())
    if bank is not None:
        found.extend(check_bank(bank, sources, before))
    return bank, found


def check_bank(
    bank: Bank, sources: tuple[str, ...] = ("en",), before: Before | None = None
) -> Iterable[Diagnostic]:
    yield from former_ids_taken(bank)
    yield from bidi_controls(bank)
    yield from duplicate_questions(bank)
    yield from untranslated(bank, sources, before)
    yield from placeholders(bank)
    yield from position_bias(bank)
    yield from missing_alt_text(bank)


def check_across(
    outlines: Sequence[Outline],
    full: Callable[[Outline], Bank],
    reference: str = "",
    cache: BankCache | None = None,
    parity: Callable[[Outline], Parity | None] | None = None,
) -> list[Diagnostic]:
    """Problems between banks: the same deck twice, translations out of step. `full` gives
    the whole of a bank, needed to compare a translation with its reference, unless
    `parity` shows the two in step; with a cache, only a translation or reference that
    changed is compared again."""
    found: list[Diagnostic] = []
    first: dict[str, Outline] = {}
    for outlined in outlines:
        bank = outlined.bank
        if bank.key in first:
            found.append(
                Diagnostic(
                    bank.path,
                    bank.lines.get("language", 1),
                    "error",
                    f"topic {bank.topic!r} in language {bank.language!r} is already defined "
                    f"in {first[bank.key].bank.path}",
                )
            )
            continue
        first[bank.key] = outlined
    unique = list(first.values())
    found.extend(missing_items(unique))
    indexes: dict[str, dict[str, _Reference]] = {}
    parities: dict[str, Parity | None] = {}
    for bank, ref in _with_references([o.bank for o in unique], reference):
        if ref is None:
            continue

        def check(bank: Bank = bank, ref: Bank = ref) -> list[Diagnostic]:
            if parity is not None:
                if ref.key not in parities:
                    parities[ref.key] = parity(first[ref.key])
                mine, theirs = parity(first[bank.key]), parities[ref.key]
                if mine is not None and theirs is not None and in_step(mine, theirs):
                    return []
            index = indexes.get(ref.key)
            if index is None:
                index = indexes[ref.key] = _reference_index(full(first[ref.key]))
            return list(against_reference(full(first[bank.key]), ref, index, reference))

        found.extend(cache.across(bank.path, ref.path, check) if cache else check())
    found.extend(same_deck_names([o.bank for o in unique]))
    found.extend(former_names_taken([o.bank for o in unique]))
    return found


def same_deck_names(banks: Sequence[Bank]) -> Iterable[Diagnostic]:
    """Anki matches decks by name: two banks with one deck name would become one deck."""
    first: dict[str, Bank] = {}
    for bank in banks:
        name = plain_text(bank.deck_name).casefold()
        if name in first:
            yield Diagnostic(
                bank.path,
                bank.lines.get("deck", bank.lines.get("title", 1)),
                "error",
                f"the deck name {plain_text(bank.deck_name)!r} is also the deck of "
                f"{first[name].path}; Anki would merge both into one deck: give one a "
                "different `deck:` or title",
            )
        else:
            first[name] = bank


def former_names_taken(banks: Sequence[Bank]) -> Iterable[Diagnostic]:
    """A bank's former name must be its own alone, and not a live bank's."""
    live = {bank.key: bank for bank in banks}
    claimed: dict[str, Bank] = {}
    for bank in banks:
        line = bank.lines.get("formerly", 1)
        names = former_keys(
            bank.topic, bank.language, bank.formerly_topics, bank.formerly_languages
        )
        for topic, language in names[1:]:
            key = deck_key(topic, language)
            if key in live:
                yield Diagnostic(
                    bank.path,
                    line,
                    "error",
                    f"formerly: {key!r} is the live bank {live[key].path}; a deck's former "
                    "name cannot be another deck's current one",
                )
            elif key in claimed:
                yield Diagnostic(
                    bank.path,
                    line,
                    "error",
                    f"formerly: {key!r} is also claimed by {claimed[key].path}",
                )
            else:
                claimed[key] = bank


def former_ids_taken(bank: Bank) -> Iterable[Diagnostic]:
    """An item's former id must be its own alone, and not a live item's."""
    ids = {item.id: item for item in bank.items}
    owner: dict[str, str] = {}
    for item in bank.items:
        item_line = item.line_at("formerly")
        for old in item.formerly:
            if old == item.id:
                message = f"item {item.id!r}: formerly names the item itself"
            elif old in ids:
                message = (
                    f"item {item.id!r}: formerly {old!r} is the id of a live item "
                    f"(line {ids[old].line}); an old id cannot be a current one"
                )
            elif old in owner:
                message = (
                    f"item {item.id!r}: formerly {old!r} is also claimed by item {owner[old]!r}"
                )
            else:
                owner[old] = item.id
                continue
            yield Diagnostic(bank.path, item_line, "error", message)


_SCRIPT_OF: dict[str, str] = {}
_TAG = re.compile(r"<[^>]*>")


def _script(char: str) -> str:
    script = _SCRIPT_OF.get(char)
    if script is None:
        name = unicodedata.name(char, "")
        script = _SCRIPT_OF[char] = name.split(" ")[0] if name else "UNKNOWN"
    return script


def foreign_script(text: str, language: str) -> str | None:
    """The script most words of `text` are written in, when it is not the language's own.

    Words, not letters, are counted (each by its first letter), so a long
    product name such as "DistributedDataParallel" does not outweigh the
    sentence around it.
    """
    expected = EXPECTED_SCRIPT.get(lang.primary_language(language))
    if expected is None or (expected == "LATIN" and text.isascii()):
        return None
    words: dict[str, int] = {}
    for word in _TAG.sub(" ", text).split():
        for char in word:
            if char.isalpha():
                script = _script(char)
                words[script] = words.get(script, 0) + 1
                break
    if not words:
        return None
    own = sum(n for script, n in words.items() if script in expected.split())
    if own * 2 >= sum(words.values()):
        return None
    return max(words, key=lambda script: words[script])


SOURCES = ("en",)
"""Languages texts are translated from, besides the topic's reference language."""


@dataclass(frozen=True)
class Untranslated:
    """One text of an item that looks untranslated, and why."""

    part: str
    """`question`, `choices` or `explanation`."""
    line: int
    reason: str
    """`in Latin script`, `in English`, `the same as in en`."""


def untranslated_parts(
    bank: Bank, item: Item, sources: Sequence[str] = SOURCES
) -> list[Untranslated]:
    """The texts of one item written in another script, or identified as a source language.

    The choices are judged together: one choice is often a name ("Apache
    Spark RDDs") that stays as it is in every language.
    """
    # code and formulas are not in any language
    units = [
        ("question", markup.prose(item.question), item.line_at("question")),
        (
            "choices",
            "\n".join(markup.prose(c) for c in item.choices),
            item.line_at("choices"),
        ),
        ("explanation", markup.prose(item.explanation), item.line_at("explanation")),
    ]
    whys = [markup.prose(w) for w in item.whys if w]
    if whys:
        units.append(("whys", "\n".join(whys), item.line_at("choices")))
    found: list[Untranslated] = []
    for label, text, line in units:
        # masking only removes words of other scripts' terms: own-script text stays own-script
        if foreign_script(text, bank.language) is None:
            continue
        script = foreign_script(langid.mask(text), bank.language)
        if script:
            expected = EXPECTED_SCRIPT[lang.primary_language(bank.language)].split()[0]
            reason = f"in {script.title()} script, not {expected.title()}"
            found.append(Untranslated(label, line, reason))
    if found:
        return found
    for label, text, line in units:
        code = langid.identify(text, bank.language, tuple(sources))
        if code:
            found.append(Untranslated(label, line, f"in {langid.language_name(code)}"))
    return found


def same_as_reference(item: Item, ref: Item, reference: str) -> list[Untranslated]:
    """The question or explanation, when it is the reference's text (ignoring case and spaces).

    An item whose every text is the reference's counts too, however short,
    unless it has no words at all (code, numbers): that is how `ankigen
    translate` leaves the texts for the translator.
    """
    if _normal(item.question) != _normal(ref.question) and (
        _normal(item.explanation) != _normal(ref.explanation)
    ):
        return []  # the common case, decided without looking further
    texts = (item.question, *item.choices, item.explanation)
    ref_texts = (ref.question, *ref.choices, ref.explanation)
    identical = len(texts) == len(ref_texts) and all(
        _normal(a) == _normal(b) for a, b in zip(texts, ref_texts, strict=True)
    )
    if identical and any(langid.words(langid.mask(text)) for text in texts):
        reason = f"the same as in {reference!r}"
        return [
            Untranslated("question", item.line_at("question"), reason),
            Untranslated("choices", item.line_at("choices"), reason),
            Untranslated("explanation", item.line_at("explanation"), reason),
        ]
    found = []
    for label in ("question", "explanation"):
        text, ref_text = getattr(item, label), getattr(ref, label)
        if _normal(text) != _normal(ref_text):
            continue
        if len(langid.words(langid.mask(text))) >= langid.MIN_WORDS:
            line = item.line_at(label)
            found.append(Untranslated(label, line, f"the same as in {reference!r}"))
    return found


def _normal(text: str) -> str:
    return " ".join(text.casefold().split())


def untranslated(
    bank: Bank, sources: Sequence[str] = SOURCES, before: Before | None = None
) -> Iterable[Diagnostic]:
    """Items whose texts look untranslated; an item unchanged since `before` (the same
    sealed content, in the same language) gets what was said of it then."""
    said = before.untranslated if before and before.language == bank.language else {}
    for item in bank.items:
        message = said.get(item.seal) if item.seal else None
        if message is not None:
            if message:
                yield Diagnostic(bank.path, item.line, "warning", message)
            continue
        parts = untranslated_parts(bank, item, sources)
        if parts:
            yield _untranslated_warning(bank, item, parts)


def _untranslated_prefix(item: Item) -> str:
    # `Before.of` finds an item's warning by this prefix at the item's line: no other
    # check of a bank's own may begin a message with it
    return f"item {item.id!r}: untranslated? "


def _untranslated_warning(bank: Bank, item: Item, parts: Sequence[Untranslated]) -> Diagnostic:
    by_reason: dict[str, list[str]] = {}
    for part in parts:
        by_reason.setdefault(part.reason, []).append(part.part)
    what = "; ".join(f"{', '.join(labels)} {reason}" for reason, labels in by_reason.items())
    return Diagnostic(bank.path, item.line, "warning", _untranslated_prefix(item) + what)


def untranslated_items(
    banks: Sequence[Bank], reference_tag: str = ""
) -> dict[str, dict[str, list[Untranslated]]]:
    """bank key -> item id -> its untranslated texts, in every bank that has any."""
    found: dict[str, dict[str, list[Untranslated]]] = {}
    for bank, reference in _with_references(banks, reference_tag):
        ref_items = {i.id: i for i in reference.items} if reference else {}
        for item in bank.items:
            parts = untranslated_parts(bank, item, sources_for(reference_tag))
            ref = ref_items.get(item.id)
            if ref is not None and reference is not None:
                parts += same_as_reference(item, ref, reference.language)
            if parts:
                found.setdefault(bank.key, {})[item.id] = parts
    return found


def _with_references(
    banks: Sequence[Bank], reference_tag: str = ""
) -> Iterator[tuple[Bank, Bank | None]]:
    """Each bank with its topic's reference bank (None for the reference itself)."""
    topics: dict[str, list[Bank]] = {}
    for bank in banks:
        topics.setdefault(bank.topic, []).append(bank)
    for bank in banks:
        reference = reference_language(topics[bank.topic], reference_tag)
        same = reference is bank or reference.language == bank.language
        yield bank, (None if same else reference)


BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069]")


# where a text is: (item, kind, number), resolved to a line and a label only for a
# text with a problem (every text of every bank is checked, few have one)
_Place = tuple[Item | None, str, int]


def _texts(bank: Bank) -> Iterable[tuple[str, _Place]]:
    """Every piece of author text in a bank, with where it is (see `_where`)."""
    yield bank.title, (None, "title", 0)
    if bank.description:
        yield bank.description, (None, "description", 0)
    for item in bank.items:
        yield item.question, (item, "question", 0)
        for n, choice in enumerate(item.choices, start=1):
            yield choice, (item, "choice", n)
        for n, why in enumerate(item.whys, start=1):
            if why:
                yield why, (item, "why", n)
        yield item.explanation, (item, "explanation", 0)


def _texts_with(bank: Bank, may_hold: Callable[[str], bool]) -> Iterator[tuple[str, _Place]]:
    """The texts of `_texts` that `may_hold` what a check looks for, in order. All of a
    bank's texts are tried at once first, joined by NUL (which joins no two texts into
    what either check looks for): most banks have none of it, and walking every text
    with where it is cost each check more than half its time."""
    parts = [bank.title, bank.description]
    for item in bank.items:
        parts.append(item.question)
        parts.extend(item.choices)
        parts.extend(item.whys)
        parts.append(item.explanation)
    if not may_hold("\0".join(parts)):
        return
    for text, place in _texts(bank):
        if may_hold(text):
            yield text, place


def _may_hold_bidi_controls(text: str) -> bool:
    # ASCII text (known to Python without a look) holds none
    return not text.isascii() and BIDI_CONTROLS.search(text) is not None


def _may_hold_placeholders(text: str) -> bool:
    # a plain search for each needle is several times faster than one pattern for all
    return any(needle in text for needle in _PLACEHOLDER_NEEDLES)


def _where(bank: Bank, place: _Place) -> tuple[int, str]:
    """The line and the label of a text `_texts` gave."""
    item, kind, number = place
    if item is None:
        return bank.lines.get(kind, 1), kind
    line = item.line_at(f"choice {number}" if number else kind)
    return line, f"item {item.id!r}: {kind}" + (f" {number}" if number else "")


def bidi_controls(bank: Bank) -> Iterable[Diagnostic]:
    """Embedding and isolate controls reorder text invisibly (and can hide what it says);
    the card already gives every text block its own direction."""
    for text, place in _texts_with(bank, _may_hold_bidi_controls):
        match = BIDI_CONTROLS.search(text)
        if match:
            line, label = _where(bank, place)
            yield Diagnostic(
                bank.path,
                line,
                "warning",
                f"{label}: bidirectional control character U+{ord(match[0]):04X}: remove it; "
                "the card sets the direction of each text by itself",
            )


def duplicate_questions(bank: Bank) -> Iterable[Diagnostic]:
    first: dict[str, Item] = {}
    for item in bank.items:
        key = lookalike_key(item.question).casefold()
        if key in first:
            yield Diagnostic(
                bank.path,
                item.line_at("question"),
                "warning",
                f"item {item.id!r}: the same question as item {first[key].id!r} "
                f"(line {first[key].line_at('question')})",
            )
        else:
            first[key] = item


def placeholders(bank: Bank) -> Iterable[Diagnostic]:
    for text, place in _texts_with(bank, _may_hold_placeholders):
        # `{0}` and `%s` are fine in code, and `{2}` in \frac{1}{2}
        match = PLACEHOLDER.search(markup.prose(text))
        if match:
            line, label = _where(bank, place)
            yield Diagnostic(
                bank.path,
                line,
                "warning",
                f"{label}: {match[0]!r} looks like a translation tool's placeholder",
            )


def missing_alt_text(bank: Bank) -> Iterable[Diagnostic]:
    for item in bank.items:
        for image, alt in (("image", "image_alt"), ("explanation_image", "explanation_image_alt")):
            if getattr(item, image) and not getattr(item, alt):
                yield Diagnostic(
                    bank.path,
                    item.line_at(image),
                    "warning",
                    f"item {item.id!r}: {image} has no {alt}: describe it for screen readers",
                )


def position_bias(bank: Bank) -> Iterable[Diagnostic]:
    fixed = [i for i in bank.items if not i.shuffle and len(i.answer) == 1]
    if len(fixed) < BIAS_MIN_ITEMS:
        return
    position, count = Counter(i.answer[0] for i in fixed).most_common(1)[0]
    if count * 2 > len(fixed):
        yield Diagnostic(
            bank.path,
            bank.lines.get("items", 1),
            "warning",
            f"{count} of {len(fixed)} unshuffled items have choice {position} as the answer; "
            "learners can guess the position: vary it, or let the card shuffle",
        )


def reference_language(banks: Sequence[Bank], reference: str = "") -> Bank:
    """The project's reference language if the topic has it, else English, else the first tag."""
    return min(banks, key=lambda b: (b.language != reference, b.language != "en", b.language))


def missing_items(outlines: Sequence[Outline]) -> Iterable[Diagnostic]:
    """Items that some language of a topic has and another has not."""
    topics: dict[str, list[tuple[Bank, set[str]]]] = {}
    for outlined in outlines:
        bank = outlined.bank
        topics.setdefault(bank.topic, []).append((bank, {i.id for i in outlined.items}))
    for group in topics.values():
        if len(group) < 2:
            continue
        all_ids = set().union(*(ids for _, ids in group))
        for bank, ids in group:
            for item_id in sorted(all_ids - ids):
                holder = next(b for b, held in group if item_id in held)
                yield Diagnostic(
                    bank.path,
                    bank.lines.get("items", 1),
                    "warning",
                    f"item {item_id!r} is missing in {bank.language!r} (it is in {holder.path})",
                )


# a reference item with its question and explanation normalized (`_normal`)
_Reference = tuple[Item, str, str]


def _reference_index(reference: Bank) -> dict[str, _Reference]:
    """A reference's items by id, their texts normalized once for all its translations."""
    return {i.id: (i, _normal(i.question), _normal(i.explanation)) for i in reference.items}


def parity(bank: Bank, known: Mapping[int, ParityRow] | None = None) -> Parity:
    """A bank's `Parity`: small enough to keep with its cache entry, and to compare a
    translation with its reference without reading either bank's items. `known`: rows
    by item seal, as the bank's previous bytes gave them (0.1 s for 10,000 items)."""
    found: Parity = {}
    for item in bank.items:
        row = known.get(item.seal) if known and item.seal else None
        found[item.id] = row or (
            len(item.choices),
            item.answer,
            sum(1 << n for n, why in enumerate(item.whys) if why) | (RECALL_BIT * item.recall),
            _digest(_normal(item.question)),
            _digest(_normal(item.explanation)),
        )
    return found


RECALL_BIT = 1 << 16
"""In a parity row's whys: the item's `recall` (choices use the bits below MAX_CHOICES)."""


def _digest(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest())


def in_step(translation: Parity, reference: Parity) -> bool:
    """Whether `against_reference` is sure to find nothing: the same choices, answers and
    whys, and no question or explanation the reference's (digests that differ prove the
    texts differ; equal ones send the pair to the full comparison)."""
    for item_id, (count, answer, whys, question, explanation) in translation.items():
        ref = reference.get(item_id)
        if ref is None:
            continue
        if (count, answer) != ref[:2] or ref[2] & ~whys or (ref[2] ^ whys) & RECALL_BIT:
            return False
        if question == ref[3]:
            return False
        if explanation == ref[4]:
            return False
    return True


def against_reference(
    bank: Bank, reference: Bank, index: dict[str, _Reference], reference_tag: str = ""
) -> Iterable[Diagnostic]:
    """Where a translation is out of step with its topic's reference: other choices, another
    answer, missing whys; questions and explanations left as the reference wrote them.
    A function of the two banks alone (see `BankCache.across`)."""
    sources = sources_for(reference_tag)
    for item in bank.items:
        found = index.get(item.id)
        if found is None:
            continue
        ref, question, explanation = found
        if len(ref.choices) != len(item.choices):
            yield Diagnostic(
                bank.path,
                item.line_at("choices"),
                "warning",
                f"item {item.id!r} has {len(item.choices)} choices; in "
                f"{reference.language!r} it has {len(ref.choices)}",
            )
        elif ref.answer != item.answer:
            yield Diagnostic(
                bank.path,
                item.line_at("answer"),
                "warning",
                f"item {item.id!r}: answer {_answer(item.answer)} differs from "
                f"{_answer(ref.answer)} in {reference.language!r}",
            )
        else:
            yield from _missing_whys(bank, item, ref, reference.language)
        if ref.recall != item.recall:
            yield Diagnostic(
                bank.path,
                item.line_at("recall"),
                "warning",
                f"item {item.id!r}: recall is {str(item.recall).lower()} here and "
                f"{str(ref.recall).lower()} in {reference.language!r}: learners of the two "
                "languages get different cards",
            )
        if _normal(item.question) != question and _normal(item.explanation) != explanation:
            continue  # not copied: the common case, as `same_as_reference` decides it
        parts = same_as_reference(item, ref, reference.language)
        # one warning per item: the bank's own check already named the rest
        if parts and not untranslated_parts(bank, item, sources):
            yield _untranslated_warning(bank, item, parts)


def _missing_whys(bank: Bank, item: Item, ref: Item, ref_language: str) -> Iterable[Diagnostic]:
    missing = [n for n in range(1, len(ref.choices) + 1) if ref.why(n) and not item.why(n)]
    if missing:
        numbers = ", ".join(map(str, missing))
        yield Diagnostic(
            bank.path,
            item.lines.get(f"choice {missing[0]}", item.line_at("choices")),
            "warning",
            f"item {item.id!r}: choice{'s' if len(missing) > 1 else ''} {numbers} "
            f"{'have' if len(missing) > 1 else 'has'} no 'why'; in {ref_language!r} "
            f"{'they have' if len(missing) > 1 else 'it has'} one",
        )


def _answer(answer: tuple[int, ...]) -> str:
    return str(answer[0]) if len(answer) == 1 else "[" + ", ".join(map(str, answer)) + "]"
