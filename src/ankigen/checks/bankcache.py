"""Checked banks kept between builds, so an edit to one bank re-reads only that bank.

Each entry is compressed JSON (never pickle: an output folder may come from elsewhere),
named by the hash of the bank file's bytes, its path, ankigen's version and the source
languages, and holding that hash again. It has three parts: the bank's outline (its
settings, problems and an outline of each item: `bank.model.Outline`), which every build
reads; its items, which only the bank's deck job reads; and its parity
(`bank.model.Parity`), which a build reads to compare a translation with its reference. An
entry is used only when it is exactly what this version wrote for exactly those bytes
and has exactly the expected shape; anything else is ignored, and the bank is parsed
again (see `BankCache.bank` for items found unusable after their outline was used).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
from collections.abc import Callable
from pathlib import Path

from ankigen.bank.files import Source, SourceDigest
from ankigen.bank.model import Bank, Outline, Parity, outline
from ankigen.checks.cache_entry import (
    FORMAT,
    LATER,
    BadEntry,
    CacheError,
    Languages,
    Loaded,
    Outlined,
    _diagnostics,
    _dump_diagnostics,
    dump,
    entry_name,
    load,
    load_outline,
    load_parity,
)
from ankigen.checks.parity import parity
from ankigen.checks.rules import load_and_check
from ankigen.checks.verdicts import NAME as VERDICTS_NAME
from ankigen.checks.verdicts import Verdicts
from ankigen.core.atomic import write_cache
from ankigen.core.errors import Diagnostic, OutputError
from ankigen.core.jsondata import parse_json
from ankigen.core.reading import read_regular
from ankigen.core.secret import cache_key, json_mac
from ankigen.core.version import __version__

ACROSS_NAME = "across.json"
"""Where translations checked against their reference are kept, in the cache's folder."""


class BankCache:
    """Read as banks are checked; written only by a build that succeeds (`save`)."""

    def __init__(self, folder: Path, languages: Languages) -> None:
        cache_key()  # made here, before any worker: theirs is this one
        self.folder = folder
        self.languages = languages
        self.used: set[str] = set()
        self.pending: dict[str, bytes] = {}
        self.read: dict[str, bytes] = {}
        self.outlined: dict[str, Outlined] = {}
        """What `get` gave, by entry: what the build knows of a bank it did not read."""
        self.digests: dict[str, str] = {}
        """Bank path (as shown) -> the hash of the bytes this build checked."""
        self.kept: dict[str, Bank] = {}
        """Banks parsed in this process and kept whole, by entry (see `put`)."""
        self.parities: dict[str, Parity] = {}
        """The parities of the banks checked in this build, by entry (see `put`)."""
        self.across_read: dict[str, list[Diagnostic]] | None = None
        self.across_used: dict[str, list[Diagnostic]] = {}
        self.verdicts = Verdicts(folder / VERDICTS_NAME)
        """The language identifier's verdicts, by text (`checks.verdicts`)."""
        self.later: dict[str, tuple[Source, threading.Event]] = {}
        """Entries a worker sends later (`LATER`), by entry: the bank's bytes, kept to make
        the entry here should it never come, and whether it came (or never will)."""

    def across(
        self, bank: str, reference: str, check: Callable[[], list[Diagnostic]]
    ) -> list[Diagnostic]:
        """What `check` finds comparing a translation with its reference
        (`checks.across.against_reference`), a function of both banks' bytes: kept between builds,
        so an edit to one translation does not check all the others again."""
        if bank not in self.digests or reference not in self.digests:
            return check()
        digests = self.digests[bank], self.digests[reference]
        what = [__version__, FORMAT, self.languages, bank, reference, *digests]
        key = hashlib.sha256(json.dumps(what).encode()).hexdigest()
        if self.across_read is None:
            self.across_read = self._read_across()
        found = self.across_read.get(key)
        if found is None:
            found = check()
        self.across_used[key] = found
        return found

    def _read_across(self) -> dict[str, list[Diagnostic]]:
        path = self.folder / ACROSS_NAME
        try:
            data = parse_json(read_regular(path))
        except (OSError, ValueError, RecursionError):
            return {}
        if not isinstance(data, dict) or data.get("version") != [__version__, FORMAT]:
            return {}
        pairs = data.get("pairs")
        if not isinstance(pairs, dict) or data.get("mac") != json_mac(pairs):
            return {}
        try:
            return {str(key): _diagnostics(value) for key, value in pairs.items()}
        except BadEntry:
            return {}

    def has_entry(self, source: Source) -> bool:
        """Whether an entry for these bytes is there, usable or not (see `get`)."""
        try:
            return (self.folder / entry_name(source, self.languages)).is_file()
        except OSError:
            return False

    def get(self, source: Source) -> Outlined | None:
        """The outline of the bank as checked before, with its problems, if its entry is
        exactly what it should be so far; its items are read only if needed (`bank`)."""
        name = entry_name(source, self.languages)
        path = self.folder / name
        try:
            raw = read_regular(path)
            loaded = load_outline(source, raw, self.languages)
        except (OSError, BadEntry, RecursionError):
            return None
        self.used.add(name)
        self.read[name] = raw
        self.digests[source.shown] = source.digest
        self.outlined[name] = loaded
        return loaded

    def bank(self, source: Source | SourceDigest) -> Bank:
        """The whole bank of an entry this build read (`get`) or made (`put`). Only the
        outline of an entry read was checked so far: if its items prove unusable, the
        bank is read and checked again and its entry replaced; if that does not give the
        outline and problems the build already used (no ankigen wrote that entry), the
        build stops with CacheError, the entry removed, and the next one reads afresh."""
        name = entry_name(source, self.languages)
        if name in self.kept:
            return self.kept[name]
        used = self.outlined.get(name)  # None for an entry made here: it is its bank's
        with contextlib.suppress(BadEntry, RecursionError):
            bank, _ = load(source, self.entry(source), self.languages)
            # the build planned from the outline: the items must be the ones it outlines
            if bank is not None and (used is None or outline(bank) == used[0]):
                return bank

        try:
            if isinstance(source, Source) and not (source.released or source.unread):
                data = source.data
            else:
                data = source.path.read_bytes()
        except OSError:
            data = b""
        read = Source(source.path, data, source.digest)
        fresh = None
        if hashlib.sha256(data).hexdigest() == source.digest:
            fresh = load_and_check(read, self.languages)
        outlined = outline(fresh[0]) if fresh is not None and fresh[0] is not None else None
        if fresh is None or fresh[0] is None or used != (outlined, fresh[1]):
            with contextlib.suppress(OSError):
                (self.folder / name).unlink()
            raise CacheError(
                f"{self.folder / name}: the bank cache entry of {source.path} is damaged; "
                "it is removed now: build again"
            )
        self.read.pop(name, None)
        self.outlined.pop(name, None)
        self.pending[name] = self._entry_of(read, fresh, outlined)
        return fresh[0]

    def parity(self, source: Source | SourceDigest) -> Parity | None:
        """The parity of a bank checked in this build, if its entry keeps one."""
        name = entry_name(source, self.languages)
        if name in self.parities:
            return self.parities[name]
        try:
            return load_parity(source, self.entry(source), self.languages)
        except (BadEntry, RecursionError):
            return None

    def drop_parities(self) -> None:
        """Translations are compared: the parities `put` kept are no longer needed."""
        self.parities.clear()

    def previous(self, source: Source) -> tuple[SourceDigest, bytes] | None:
        """The entry of the same file as it was when last checked, if its bytes differ
        now: an edited bank reuses the items it has in common with it."""
        found: list[tuple[int, SourceDigest, Path]] = []
        for path in self.folder.glob("*.json") if self.folder.is_dir() else ():
            if not path.is_file():
                continue  # a FIFO would block the build on opening it
            try:
                with path.open("rb") as entry:
                    header = parse_json(entry.readline(4096))
                when = path.stat().st_mtime_ns
            except (OSError, ValueError, RecursionError):
                continue
            if (
                isinstance(header, dict)
                and header.get("version") == __version__
                and header.get("format") == FORMAT
                and header.get("path") == str(source.path)
                and header.get("sources") == list(self.languages)
                and isinstance(header.get("digest"), str)
                and header["digest"] != source.digest
            ):
                found.append((when, SourceDigest(source.path, header["digest"]), path))
        if not found:
            return None
        _, old, path = max(found, key=lambda entry: entry[0])
        try:
            return old, read_regular(path)
        except OSError:
            return None

    def put(
        self, source: Source, entry: bytes, bank: Bank | None = None, parity: Parity | None = None
    ) -> None:
        """Keep a freshly checked bank's entry (`dump`), under the hash of the bytes it
        was parsed from; and the bank itself, if parsed in this process and given, for
        `bank` and `kept_bank` to give instead of loading the entry again; and its parity,
        for `parity` (until `drop_parities`)."""
        name = entry_name(source, self.languages)
        if bank is not None:
            self.kept[name] = bank
        if parity is not None:
            self.parities[name] = parity
        if entry != LATER:
            self.pending[name] = entry
        self.used.add(name)
        self.digests[source.shown] = source.digest

    def expect(self, source: Source) -> None:
        """The entry of these bytes comes later (`LATER`), by `arrive`."""
        self.later.setdefault(entry_name(source, self.languages), (source, threading.Event()))

    def expects(self, source: Source) -> bool:
        return entry_name(source, self.languages) in self.later

    def coming(self, source: Source | SourceDigest) -> bool:
        """Whether the entry of these bytes is expected (`expect`) and has not come yet."""
        later = self.later.get(entry_name(source, self.languages))
        return later is not None and not later[1].is_set()

    def arrive(self, source: Source, entry: bytes | None) -> None:
        """The entry expected for these bytes, or None if it will never come: it is then
        made here, from the bytes, where it is needed (`entry`)."""
        name = entry_name(source, self.languages)
        if entry:
            self.pending[name] = entry
        self.later[name][1].set()

    def kept_bank(self, source: Source | SourceDigest) -> Bank | None:
        """The bank as parsed in this process, if kept (`put`)."""
        return self.kept.get(entry_name(source, self.languages))

    def checked_entry(self, source: Source | SourceDigest) -> bytes:
        """`entry`, its items checked first if it was read rather than made (`get` checks
        an outline only): the deck's job must find exactly what was checked."""
        name = entry_name(source, self.languages)
        if name not in self.pending and name not in self.later:
            self.bank(source)  # makes the entry again if its items prove unusable
        return self.entry(source)

    def entry(self, source: Source | SourceDigest) -> bytes:
        """The entry of a bank checked in this build, read or made: a bank in a few
        compressed bytes, which a deck's job loads again where it runs. One that comes
        later is waited for, or made here if it never comes."""
        name = entry_name(source, self.languages)
        later = self.later.get(name)
        if later is not None:
            later[1].wait()
            if name not in self.pending:
                self.pending[name] = self._made_here(later[0])
        return self.pending.get(name) or self.read[name]

    def _made_here(self, source: Source) -> bytes:

        return self._entry_of(source, load_and_check(source, self.languages))

    def _entry_of(self, source: Source, loaded: Loaded, outlined: Outline | None = None) -> bytes:
        """The entry of a bank checked in this process, with its parity."""

        bank = loaded[0]
        facts = parity(bank) if bank is not None else None
        return dump(source, loaded, self.languages, outlined, facts)

    def save(self) -> None:
        """Write the new entries; forget those this build did not use. Only a cache, written
        once the build's packages and lock are in place: what cannot be written (a file
        where its folder should be, a full disk) is left out, and read afresh next time."""
        for source, _ in list(self.later.values()):
            self.entry(source)  # come by now, or made here
        for name, data in self.pending.items():
            with contextlib.suppress(OutputError):
                write_cache(self.folder / name, data)
        self.pending.clear()
        self.verdicts.save()
        self.used.add(ACROSS_NAME)
        if self.across_used != (self.across_read or {}):
            pairs = {key: _dump_diagnostics(found) for key, found in self.across_used.items()}
            kept = {"version": [__version__, FORMAT], "pairs": pairs, "mac": json_mac(pairs)}
            with contextlib.suppress(OutputError):
                write_cache(self.folder / ACROSS_NAME, json.dumps(kept).encode())
        if self.folder.is_dir():
            for entry in self.folder.glob("*.json"):
                if entry.name not in self.used and not entry.is_dir():
                    # tidying only: what cannot be removed stays, the build succeeded
                    with contextlib.suppress(OSError):
                        entry.unlink(missing_ok=True)
