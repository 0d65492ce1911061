"""`ankigen pull`: fixes made in Anki's editor brought back into the banks.

A note is matched to its item by its GUID alone, through the lock: a note of ankigen's
note type the lock never issued is listed, never imported, and so is a note of another
note type in the banks' decks. Two notes under one GUID (Anki keeps one) are a warning,
and neither is pulled unless they hold the same fields. Each matched note is then one
of:

- **in step**: its texts are the bank's;
- **another build's**: its fields are exactly what some build issued (the version on
  its Choices field says which), only not the bank's now: nothing was edited in Anki,
  the next import brings it up to date;
- **edited in Anki**: its fields are not what was issued. Each text is weighed against
  what that build issued (`pull.base` finds it): a text Anki holds as issued is no edit,
  whatever the bank did since; one Anki changed is pulled if the bank's is as issued,
  and is a conflict if the bank changed it too. Where what was issued cannot be found,
  every text that differs is a conflict. Nothing of a conflict is overwritten: both
  texts are reported at the bank's line, and `--take anki` or `--take bank` (for every
  item, or `--take anki:ITEM`) decides.

Texts are written into the bank files in place (`bank.texts`, as a PO import
writes them): comments, quoting and layout stay, and a text of several lines is a
block. A bank is written only if it still holds what was read, and only if every text
placed; with a conflict left, nothing is.
"""

from __future__ import annotations

import difflib
import html
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ankigen.apkg.note import retired_notice
from ankigen.bank.edit import OpenBank, open_bank, write_banks
from ankigen.bank.folder import LOCK_NAME
from ankigen.bank.kept import carried_line
from ankigen.bank.model import Bank, Item, KeptNotetype, outline
from ankigen.bank.project import load_project
from ankigen.bank.reader import parse_bank
from ankigen.bank.texts import item_contexts, replace_texts
from ankigen.bank.workspace import default_media_dir
from ankigen.builder.result import IMAGE_CACHE
from ankigen.checks.run import checked_banks
from ankigen.collection.exported import AnkiNote, Exported
from ankigen.core.errors import AnkigenError, Diagnostic, InvalidBanks
from ankigen.identity.lockfile import Lock, issued_guids, read_lock
from ankigen.images.process import image_refs, prepare
from ankigen.images.settings import Settings
from ankigen.pull.base import History, Known, Weighed, is_ours, packages
from ankigen.pull.fields import field_texts, read_note

SIDES = ("anki", "bank")


class PullError(AnkigenError):
    """Nothing can be pulled: no lock to match notes by, or a --take that names nothing."""


@dataclass(frozen=True)
class Take:
    """Which side wins a conflict: `every` item's, or per item id."""

    every: str | None = None
    items: dict[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, values: Sequence[str]) -> Take:
        every, items = None, {}
        for value in values:
            side, _, item = value.partition(":")
            if side not in SIDES:
                raise PullError(f"--take {value!r}: say anki or bank, or anki:ITEM or bank:ITEM")
            if item:
                items[item] = side
            else:
                every = side
        return cls(every, items)

    def side(self, item_id: str) -> str | None:
        return self.items.get(item_id, self.every)


@dataclass(frozen=True)
class Change:
    path: str
    line: int
    item: str
    context: str
    bank: str
    anki: str
    known: bool = True
    """Whether what the build the note came from issued is known; if not, a conflict may
    be a text only one side changed, nobody can tell which."""


@dataclass(frozen=True)
class Other:
    """A note of another note type in the banks' decks: listed, never pulled."""

    guid: str
    deck: str
    notetype: str
    words: str
    """The first words of its first field, as text."""


@dataclass(frozen=True)
class Pulled:
    """What a pull found, and the banks' new texts; nothing is written here."""

    edits: dict[str, tuple[OpenBank, str]]
    """Bank path -> (the bank as read, its text with Anki's fixes)."""
    changes: tuple[Change, ...]
    conflicts: tuple[Change, ...]
    kept: tuple[Change, ...]
    """Conflicts decided for the bank (--take bank): the next build sends its text."""
    warnings: tuple[Diagnostic, ...]
    in_step: int
    other_build: int
    strangers: tuple[AnkiNote, ...]
    """Notes of ankigen's note type that these banks' lock never issued."""
    other_types: int
    others: tuple[Other, ...] = ()
    """The notes of other note types that are in the banks' decks."""

    def diff(self) -> str:
        """The changes as a unified diff of the bank files."""
        out: list[str] = []
        for path, (opened, after) in sorted(self.edits.items()):
            out += difflib.unified_diff(
                (opened.text or "").splitlines(keepends=True),
                after.splitlines(keepends=True),
                f"a/{path}",
                f"b/{path}",
            )
        return "".join(out)


def plan_pull(
    banks_dir: Path,
    sources: Sequence[Exported],
    take: Take,
    out_dir: Path,
    media: Path | None = None,
    image_settings: Settings | None = None,
) -> Pulled:
    """What the notes in `sources` bring back into the banks of `banks_dir`."""
    lock_path = banks_dir / LOCK_NAME
    if not lock_path.is_file():
        raise PullError(
            f"{lock_path}: no lock file. Notes are matched to items by the GUIDs the last "
            "build recorded there; build the banks first (and commit the lock)"
        )
    lock = read_lock(lock_path)
    issued_as = issued_guids(lock)
    checked = checked_banks(banks_dir)
    banks = {bank.key: bank for bank in checked.banks}
    project, _ = load_project(banks_dir)
    images = prepare(
        image_refs([outline(bank) for bank in checked.banks]),
        media or default_media_dir(banks_dir, project),
        image_settings or Settings(),
        cache_dir=out_dir / IMAGE_CACHE if out_dir.is_dir() else None,
    )
    if images.diagnostics:
        raise InvalidBanks(images.diagnostics)
    items = {bank.key: {item.id: item for item in bank.items} for bank in checked.banks}
    found = _Found()
    matched = _matched(sources, issued_as, banks, items, lock, found)
    known = Known(packages(out_dir, found.warnings), History(lock_path), lock)
    for guid, notes in matched.items():
        key, item_id = issued_as[guid]
        bank, item = banks[key], items[key][item_id]
        chosen = _one_note(found, bank, item, guid, notes)
        if chosen is None:
            continue
        exported, note = chosen
        kept = _kept_notetype(bank, exported, note)
        names = images.names(bank, item.id)
        weighed = known.weigh(bank, item, names, exported, note, kept)
        carried = _carried_edits(kept, item, exported.fields_of(note)) if kept else ()
        _decide(found, bank, item, names, weighed, take, carried)
    return found.pulled(take)


def _matched(
    sources: Sequence[Exported],
    issued_as: dict[str, tuple[str, str]],
    banks: dict[str, Bank],
    items: dict[str, dict[str, Item]],
    lock: Lock,
    found: _Found,
) -> dict[str, list[tuple[Exported, AnkiNote]]]:
    """The notes of each item's GUID; notes of other note types, and notes of ours whose
    item is not in the banks, are noted in `found`."""
    decks = {deck.name for deck in lock.decks.values()}
    matched: dict[str, list[tuple[Exported, AnkiNote]]] = {}
    for exported, note in ((e, n) for e in sources for n in e.notes):
        key, item_id = issued_as.get(note.guid, ("", ""))
        kept = _kept_notetype(banks.get(key), exported, note)
        if kept is None and not is_ours(exported, note):
            found.other_types += 1
            if any(note.deck == d or note.deck.startswith(d + "::") for d in decks):
                found.others.append(_other(exported, note))
            continue
        if items.get(key, {}).get(item_id) is None:
            found.strangers.append(note)
            continue
        matched.setdefault(note.guid, []).append((exported, note))
    return matched


def _one_note(
    found: _Found, bank: Bank, item: Item, guid: str, notes: list[tuple[Exported, AnkiNote]]
) -> tuple[Exported, AnkiNote] | None:
    """The one note of an item's GUID; of several (a collection Anki's importer did not
    make, two sources), the one they all are, else none: each is a warning."""
    distinct = list({(n.id, n.fields): (e, n) for e, n in notes}.values())
    if len(distinct) == 1:  # one note, maybe in the exports of two of its decks
        return distinct[0]
    same = len({n.fields for _, n in distinct}) == 1
    which = ", ".join(f"note {n.id} in {n.deck or '(no deck)'!r}" for _, n in distinct)
    found.warnings.append(
        Diagnostic(
            bank.path,
            item.line,
            "warning",
            f"item {item.id!r}: {len(distinct)} notes have its GUID {guid!r} ({which}); Anki "
            "keeps one note per GUID, so which is the item's cannot be told: "
            + (
                "they hold the same fields: pulled as one"
                if same
                else "neither is pulled. Delete all but one in Anki, then pull again"
            ),
        )
    )
    return distinct[0] if same else None


def _carried_edits(kept: KeptNotetype, item: Item, values: dict[str, str]) -> tuple[str, ...]:
    """The fields a kept note carries as they are (`Item.anki_fields`; the others empty)
    that do not hold in Anki what the bank says."""
    bank = dict(item.anki_fields)
    return tuple(
        name
        for name in kept.fields
        if name not in kept.mapped and values.get(name, "") != bank.get(name, "")
    )


def _other(exported: Exported, note: AnkiNote) -> Other:
    first = note.fields[0] if note.fields else ""
    words = html.unescape(_TAG.sub("", _BREAK.sub(" ", first))).split()
    text = " ".join(words[:_WORDS]) + (" …" if len(words) > _WORDS else "")
    return Other(note.guid, note.deck, exported.notetypes[note.notetype].name, text)


_BREAK = re.compile(r"<(?:br|/?div|/?p|/?li)\b[^>]*>", re.IGNORECASE)
_TAG = re.compile(r"<[^>]*>")
_WORDS = 8


def _kept_notetype(bank: Bank | None, exported: Exported, note: AnkiNote) -> KeptNotetype | None:
    """The kept note type of the note's bank (`anki_notetype:`), if the note is of it."""
    kept = bank.anki_notetype if bank is not None else None
    if kept is not None and exported.notetypes[note.notetype].fields == kept.fields:
        return kept
    return None


@dataclass
class _Found:
    wanted: dict[str, dict[str, Change]] = field(default_factory=dict)
    decks: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Each wanted bank's topic and language: what it must still be when it is written."""
    conflicts: list[Change] = field(default_factory=list)
    kept: list[Change] = field(default_factory=list)
    warnings: list[Diagnostic] = field(default_factory=list)
    in_step: int = 0
    other_build: int = 0
    strangers: list[AnkiNote] = field(default_factory=list)
    other_types: int = 0
    others: list[Other] = field(default_factory=list)
    taken: set[str] = field(default_factory=set)

    def pulled(self, take: Take) -> Pulled:
        unknown = set(take.items) - self.taken
        if unknown:
            raise PullError(
                f"--take names {', '.join(sorted(unknown))}: no conflict there. Run pull "
                "without --take to see the conflicts"
            )
        edits: dict[str, tuple[OpenBank, str]] = {}
        changes: list[Change] = []
        for path, wanted in sorted(self.wanted.items()):
            topic, language = self.decks[path]
            opened = open_bank(Path(path), topic, language, source="its deck in the lock")
            before = opened.text
            if before is None:
                raise PullError(f"{path}: the bank is gone since it was read; nothing was written")
            text, _ = replace_texts(before, path, {c: ch.anki for c, ch in wanted.items()})
            after, problems = parse_bank(path, text.encode("utf-8"))
            if after is None:
                raise InvalidBanks(problems)
            now = {c: t for i in after.items for c, t in item_contexts(i).items()}
            for context, change in wanted.items():
                if now.get(context) == change.anki:
                    changes.append(change)
                else:
                    self.warnings.append(
                        Diagnostic(
                            path,
                            change.line,
                            "warning",
                            f"item {change.item!r}: {change.context} was changed in Anki to "
                            f"{change.anki!r}, which has no place in the bank (add the key, "
                            "then pull again)",
                        )
                    )
            if text != before:
                edits[path] = (opened, text)
        return Pulled(
            edits,
            tuple(changes),
            tuple(self.conflicts),
            tuple(self.kept),
            tuple(sorted(self.warnings)),
            self.in_step,
            self.other_build,
            tuple(self.strangers),
            self.other_types,
            tuple(self.others),
        )


def _decide(
    found: _Found,
    bank: Bank,
    item: Item,
    names: dict[str, str],
    note: Weighed,
    take: Take,
    carried: Sequence[str] = (),
) -> None:
    """Which of a note's texts Anki changed, and what of them goes into the bank: a text
    Anki holds as its build issued it is no edit, whatever the bank did since; one Anki
    changed is pulled if the bank's is still as issued, and a conflict if not. `carried`:
    a kept note's fields carried as they are that Anki holds otherwise than the bank
    (`_carried_edits`), which are said, never pulled."""
    read = read_note(bank, item, note.anki, names)
    if note.untouched:
        if read.texts:
            found.other_build += 1
        else:
            found.in_step += 1
        return
    # what the build issued loses too (an answer the bank changed since) is not Anki's doing
    was = read_note(bank, item, note.issued, names).lost if note.issued is not None else ()
    for loss in (loss for loss in read.lost if loss not in was):
        found.warnings.append(
            Diagnostic(bank.path, item.line, "warning", f"item {item.id!r}: {loss}")
        )
    for name in carried:  # of a kept note type: not read as texts, so said here
        found.warnings.append(
            Diagnostic(
                bank.path,
                item.line_at(carried_line(name)),
                "warning",
                f"item {item.id!r}: field {name!r} was changed in Anki; a field carried as "
                "it is (anki_fields) is not pulled, and the next build writes the bank's "
                "back: copy the change into the bank to keep it",
            )
        )
    bank_texts = item_contexts(item)
    changes = [
        Change(
            bank.path,
            item.line_at(_part(context)),
            item.id,
            context.partition("|")[2],
            bank_texts.get(context, ""),
            text,
            known=note.issued is not None,
        )
        for context, text in read.texts.items()
    ]
    if note.issued is None:  # nobody can tell who changed what: each is a conflict
        _settle(found, bank, item, changes, take)
        return
    notice = retired_notice(bank.language)
    anki, issued, mine = (field_texts(f, notice) for f in (note.anki, note.issued, note.mine))
    ours = [c for c in changes if anki.get(c.context) != issued.get(c.context)]
    only_anki = [c for c in ours if mine.get(c.context) == issued.get(c.context)]
    _want(found, bank, item, only_anki)
    _settle(found, bank, item, [c for c in ours if c not in only_anki], take)
    if read.texts and not ours:
        found.other_build += 1
    elif not read.texts:
        found.in_step += 1


def _settle(found: _Found, bank: Bank, item: Item, conflicts: list[Change], take: Take) -> None:
    """Texts both sides changed: as `--take` says, else conflicts."""
    if not conflicts:
        return
    if item.id in take.items:
        found.taken.add(item.id)
    side = take.side(item.id)
    if side is None:
        found.conflicts.extend(conflicts)
    elif side == "bank":
        found.kept.extend(conflicts)
    else:
        _want(found, bank, item, conflicts)


def _want(found: _Found, bank: Bank, item: Item, changes: Sequence[Change]) -> None:
    wanted = found.wanted.setdefault(bank.path, {})
    found.decks[bank.path] = (bank.topic, bank.language)
    for change in changes:
        wanted[f"{item.id}|{change.context}"] = change


def _part(context: str) -> str:
    """The key of an item whose line a context's text is on."""
    part = context.partition("|")[2]
    return "choices" if part.startswith(("choice", "why")) else part


def write_pulled(pulled: Pulled) -> list[str]:
    """The banks written (atomically, each only while it holds what was read)."""
    if pulled.conflicts:
        raise PullError("conflicts left: nothing was written")
    edits = sorted(pulled.edits.values(), key=lambda edit: str(edit[0].path))
    done = write_banks(edits)
    return [str(opened.path) for (opened, _), wrote in zip(edits, done, strict=True) if wrote]
