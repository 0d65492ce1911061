"""`ankigen pull`: fixes made in Anki's editor brought back into the banks.

A note is matched to its item by its GUID alone, through the lock: a note ankigen never
issued from these banks is listed, never imported. Each matched note is then one of:

- **in step**: its texts are the bank's;
- **another build's**: its fields are exactly what some build issued (the version on
  its Choices field says which), only not the bank's now: nothing was edited in Anki,
  the next import brings it up to date;
- **edited in Anki**: its fields are not what was issued. If the item is as that build
  issued it, the changed texts go into the bank. If the bank changed since too, each
  text is weighed against what that build issued, read from its package in OUT when it
  is still there: a text only Anki changed is pulled, one only the bank changed stays,
  and one both changed is a conflict. Without that package, every text that differs is
  one. Nothing of a conflict is overwritten: both texts are reported at the bank's
  line, and `--take anki` or `--take bank` (for every item, or `--take anki:ITEM`)
  decides.

Texts are written into the bank files in place (`formats.banktexts`, as a PO import
writes them): comments, quoting and layout stay. A bank is written only if it still
holds what was read, and only if every text placed; with a conflict left, nothing is.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ankigen.apkg.note import note_content
from ankigen.apkg.notetype import FIELDS
from ankigen.bank.files import LOCK_NAME
from ankigen.bank.kept import carried_line
from ankigen.bank.model import Bank, Item, KeptNotetype, outline
from ankigen.bank.project import load_project
from ankigen.bank.reader import parse_bank
from ankigen.bank.workspace import default_media_dir
from ankigen.build.result import IMAGE_CACHE
from ankigen.checks.run import checked_banks
from ankigen.collection.exported import AnkiNote, Exported, ExportedError, read_exported
from ankigen.core.errors import AnkigenError, Diagnostic, InvalidBanks
from ankigen.core.hashing import content_hash
from ankigen.core.userfile import Target, write_all
from ankigen.formats.banktexts import item_contexts, replace_texts
from ankigen.formats.bankyaml import loads_as_bank
from ankigen.identity.guid import note_guid, split_deck_key
from ankigen.identity.lockfile import read_lock
from ankigen.identity.versions import card_version, is_version
from ankigen.images.process import image_refs, prepare
from ankigen.images.settings import Settings
from ankigen.pull.fields import ankigen_fields, read_note

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


@dataclass(frozen=True)
class Pulled:
    """What a pull found, and the banks' new texts; nothing is written here."""

    edits: dict[str, tuple[bytes, str]]
    """Bank path -> (the bytes read, its text with Anki's fixes)."""
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

    def diff(self) -> str:
        """The changes as a unified diff of the bank files."""
        out: list[str] = []
        for path, (before, after) in sorted(self.edits.items()):
            out += difflib.unified_diff(
                before.decode("utf-8").splitlines(keepends=True),
                after.splitlines(keepends=True),
                f"a/{path}",
                f"b/{path}",
            )
        return "".join(out)


def is_ours(exported: Exported, note: AnkiNote) -> bool:
    return exported.notetypes[note.notetype].fields[: len(FIELDS)] == FIELDS


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
    issued_as: dict[str, tuple[str, str]] = {}
    for key, deck in lock.decks.items():
        topic, language = split_deck_key(key)
        for item_id in deck.items:
            guid = deck.guids.get(item_id) or note_guid(topic, language, item_id)
            issued_as[guid] = (key, item_id)
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
    issued_fields = _packages(out_dir)
    found = _Found()
    for exported, note in ((e, n) for e in sources for n in e.notes):
        key, item_id = issued_as.get(note.guid, ("", ""))
        kept = _kept_notetype(banks.get(key), exported, note)
        if kept is None and not is_ours(exported, note):
            found.other_types += 1
            continue
        item = items.get(key, {}).get(item_id)
        if item is None:
            found.strangers.append(note)
            continue
        bank = banks[key]
        carried: tuple[str, ...] = ()
        if kept is not None:  # the note type of an adopted deck (`apkg.kept`): no version
            values = exported.fields_of(note)
            version, fields = "", ankigen_fields(kept, values)
            hashed = tuple(values.get(name, "") for name in kept.fields)
            carried = _carried_edits(kept, item, values)
        else:
            version, fields = _as_issued(exported, note)
            hashed = tuple(fields.get(name, "") for name in FIELDS)
        issued = version or lock.decks[key].items[item_id].hash[:8]
        base = issued_fields.get((note.guid, issued))
        names = images.names(bank, item.id)
        both = (fields, base, hashed)
        _decide(found, bank, item, both, issued, names, note.guid, take, carried)
    return found.pulled(take)


def _carried_edits(kept: KeptNotetype, item: Item, values: dict[str, str]) -> tuple[str, ...]:
    """The fields a kept note carries as they are (`Item.anki_fields`; the others empty)
    that do not hold in Anki what the bank says."""
    bank = dict(item.anki_fields)
    return tuple(
        name
        for name in kept.fields
        if name not in kept.mapped and values.get(name, "") != bank.get(name, "")
    )


def _kept_notetype(bank: Bank | None, exported: Exported, note: AnkiNote) -> KeptNotetype | None:
    """The kept note type of the note's bank (`anki_notetype:`), if the note is of it."""
    kept = bank.anki_notetype if bank is not None else None
    if kept is not None and exported.notetypes[note.notetype].fields == kept.fields:
        return kept
    return None


@dataclass
class _Found:
    wanted: dict[str, dict[str, Change]] = field(default_factory=dict)
    conflicts: list[Change] = field(default_factory=list)
    kept: list[Change] = field(default_factory=list)
    warnings: list[Diagnostic] = field(default_factory=list)
    in_step: int = 0
    other_build: int = 0
    strangers: list[AnkiNote] = field(default_factory=list)
    other_types: int = 0
    taken: set[str] = field(default_factory=set)

    def pulled(self, take: Take) -> Pulled:
        unknown = set(take.items) - self.taken
        if unknown:
            raise PullError(
                f"--take names {', '.join(sorted(unknown))}: no conflict there. Run pull "
                "without --take to see the conflicts"
            )
        edits: dict[str, tuple[bytes, str]] = {}
        changes: list[Change] = []
        for path, wanted in sorted(self.wanted.items()):
            before = Path(path).read_bytes()
            text, _ = replace_texts(
                before.decode("utf-8"), path, {c: ch.anki for c, ch in wanted.items()}
            )
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
            if text != before.decode("utf-8"):
                edits[path] = (before, text)
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
        )


def _packages(out_dir: Path) -> dict[tuple[str, str], dict[str, str]]:
    """The fields of every note the packages in OUT hold, by GUID and version: what the
    last build issued, each text of it."""
    found: dict[tuple[str, str], dict[str, str]] = {}
    for path in sorted(out_dir.glob("*.apkg")) if out_dir.is_dir() else ():
        try:
            package = read_exported(path)
        except ExportedError:
            continue  # not the build's own: it only helps to tell who changed what
        for note in package.notes:
            if is_ours(package, note):
                version, fields = _as_issued(package, note)
                if version:
                    found[(note.guid, version)] = fields
    return found


def _as_issued(exported: Exported, note: AnkiNote) -> tuple[str, dict[str, str]]:
    """The content hash in a note's version (the first 8 digits; "" if it has none), and
    its fields without the version: the note's content, as its hash was made."""
    fields = exported.fields_of(note)
    version, fields["Choices"] = card_version(fields.get("Choices", ""))
    return (version.partition("+")[2] if is_version(version) else ""), fields


def _decide(
    found: _Found,
    bank: Bank,
    item: Item,
    both: tuple[dict[str, str], dict[str, str] | None, tuple[str, ...]],
    issued: str,
    images: dict[str, str],
    guid: str,
    take: Take,
    carried: Sequence[str] = (),
) -> None:
    """Whether a note was edited in Anki, and what of it goes into the bank; `both`: the
    note's fields in Anki by ankigen's names, as the build it came from issued them (if
    known), and as its note type holds them, in order (what its hash is made of);
    `carried`: a kept note's fields carried as they are that Anki holds otherwise than the
    bank (`_carried_edits`), which are said, never pulled."""
    fields, base, hashed = both
    now = note_content(bank, item, images, guid)
    tags = " ".join(now.tags)
    in_anki = content_hash(*hashed, tags)[:8]
    read = read_note(bank, item, fields, images)
    if in_anki == issued:  # as a build issued it: nothing was edited in Anki
        if read.texts:
            found.other_build += 1
        else:
            found.in_step += 1
        return
    line = item.line
    for loss in read.lost:
        found.warnings.append(Diagnostic(bank.path, line, "warning", f"item {item.id!r}: {loss}"))
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
    if not read.texts:
        found.in_step += 1
        return
    bank_texts = item_contexts(item)
    changes = [
        Change(
            bank.path,
            item.line_at(_part(context)),
            item.id,
            context.partition("|")[2],
            bank_texts.get(context, ""),
            text,
        )
        for context, text in read.texts.items()
    ]
    side = take.side(item.id)
    if now.hash[:8] != issued and base is not None:  # the bank changed since too
        was = read_note(bank, item, base, images).texts
        bank_now = item_contexts(item)
        # a text as issued is the bank's text now unless the bank changed it
        changes = [
            c
            for c in changes
            if was.get(key := f"{item.id}|{c.context}", bank_now.get(key, "")) != c.anki
        ]
        theirs = [c for c in changes if f"{item.id}|{c.context}" not in was]
        if len(theirs) == len(changes):  # only Anki changed these texts
            _want(found, bank, item, changes)
            return
        _want(found, bank, item, theirs)
        changes = [c for c in changes if c not in theirs]
    if now.hash[:8] != issued:  # the bank changed since that build too
        if item.id in take.items:
            found.taken.add(item.id)
        if side is None:
            found.conflicts.extend(changes)
            return
        if side == "bank":
            found.kept.extend(changes)
            return
    _want(found, bank, item, changes)


def _want(found: _Found, bank: Bank, item: Item, changes: Sequence[Change]) -> None:
    wanted = found.wanted.setdefault(bank.path, {})
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
    writes = [
        (
            Target(Path(path), "a bank", edits=before, check=loads_as_bank(path)),
            text.encode("utf-8"),
        )
        for path, (before, text) in sorted(pulled.edits.items())
    ]
    done = write_all(writes)
    return [str(target.path) for (target, _), wrote in zip(writes, done, strict=True) if wrote]
