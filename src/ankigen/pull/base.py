"""What the build a note came from issued: the base each text of an edited note is weighed
against, as a three-way merge weighs its two sides against their common ancestor.

A note says which build it came from by the content hash in its version (a kept note
type's, which carries none, by the hashes the lock has recorded for it). What that build
issued, text by text, is looked for in what is at hand: the note's own fields, the bank
as it is, the packages in OUT, and, when those do not explain it, every version of the
bank in git. Each field is cut into its texts (a choice, its why, the rest), and the
content made of those pieces whose hash is the note's is what was issued: a 32-bit hash
over a few candidates for the few texts that differ leaves no doubt worth the name.
Of the contents that match, the one made of the most of the note's own pieces is
taken: the fewest texts Anki changed.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ankigen.apkg.note import note_content
from ankigen.apkg.notetype import FIELDS
from ankigen.bank.model import Bank, Item, KeptNotetype
from ankigen.bank.reader import parse_bank
from ankigen.collection.exported import AnkiNote, Exported, ExportedError, read_exported
from ankigen.core.errors import Diagnostic
from ankigen.core.hashing import content_hash
from ankigen.identity.issued import git_versions, stamps_in_lock_text
from ankigen.identity.lockfile import Lock
from ankigen.identity.versions import card_version, is_version
from ankigen.pull.fields import ankigen_fields

_TRIES = 1 << 14
"""Contents hashed at most for one note: a note edited everywhere, against a long
history, is not worth more than a few tenths of a second; beyond it nobody can tell."""


@dataclass(frozen=True)
class Content:
    """A note's content as its hash is made: its fields, in its note type's order (the
    Choices field without the card's version), and its tags, joined by spaces."""

    fields: tuple[str, ...]
    tags: str

    def hash(self) -> str:
        """The first 8 digits, as a card's version and the lock's hashes compare."""
        return content_hash(*self.fields, self.tags)[:8]


def is_ours(exported: Exported, note: AnkiNote) -> bool:
    return exported.notetypes[note.notetype].fields[: len(FIELDS)] == FIELDS


def as_issued(exported: Exported, note: AnkiNote) -> tuple[str, dict[str, str]]:
    """The content hash in a note's version (the first 8 digits; "" if it has none), and
    its fields without the version: the note's content, as its hash was made."""
    fields = exported.fields_of(note)
    version, fields["Choices"] = card_version(fields.get("Choices", ""))
    return (version.partition("+")[2] if is_version(version) else ""), fields


def packages(out_dir: Path, warnings: list[Diagnostic]) -> dict[str, list[Content]]:
    """The content of every note of ankigen's note type in the packages in OUT, by GUID:
    what the last build issued. A file there that cannot be read is skipped with a
    warning: one damaged or hostile file must not keep every pull from working."""
    found: dict[str, list[Content]] = {}
    for path in sorted(out_dir.glob("*.apkg")) if out_dir.is_dir() else ():
        try:
            package = read_exported(path)
        except ExportedError as error:  # not the build's own: it only tells who changed what
            warnings.append(Diagnostic(str(path), 0, "warning", f"skipped: {error.reason}"))
            continue
        for note in package.notes:
            if is_ours(package, note):
                _, fields = as_issued(package, note)
                content = Content(tuple(fields.get(n, "") for n in FIELDS), " ".join(note.tags))
                found.setdefault(note.guid, []).append(content)
    return found


def issued_content(
    anki: Content, others: Sequence[Content], targets: frozenset[str]
) -> Content | None:
    """The content, made of `anki`'s pieces and the others', whose hash is one of
    `targets`, with the most of `anki`'s pieces; None if none is."""
    slots: list[list[str]] = []
    sizes: list[int] = []  # how many slots each field has, the tags last
    alike = [o for o in others if len(o.fields) == len(anki.fields)]
    for index, value in enumerate(anki.fields):
        values = [value, *(o.fields[index] for o in alike)]
        cut = [_pieces(v) for v in values]
        if len({len(pieces) for pieces in cut}) == 1:
            slots += [_distinct(pieces) for pieces in zip(*cut, strict=True)]
            sizes.append(len(cut[0]))
        else:  # laid out otherwise (a choice added): the field is one piece
            slots.append(_distinct(values))
            sizes.append(1)
    slots.append(_distinct([anki.tags, *(o.tags for o in alike)]))
    for values in itertools.islice(_by_fewest_changes(slots), _TRIES):
        at = 0
        fields = []
        for size in sizes:
            fields.append("".join(values[at : at + size]))
            at += size
        content = Content(tuple(fields), values[-1])
        if content.hash() in targets:
            return content
    return None


def _by_fewest_changes(slots: list[list[str]]) -> Iterator[list[str]]:
    """Every choice of one candidate per slot, those that keep more of the first
    candidates (the note's own) first."""
    varied = [n for n, candidates in enumerate(slots) if len(candidates) > 1]
    for count in range(len(varied) + 1):
        for chosen in itertools.combinations(varied, count):
            for picks in itertools.product(*(slots[n][1:] for n in chosen)):
                values = [candidates[0] for candidates in slots]
                for n, pick in zip(chosen, picks, strict=True):
                    values[n] = pick
                yield values


_CUT = re.compile(r'(<li data-choice="[^"]*"(?: data-correct="true")?>|</li>)')
_WHY = '<div class="ag-why">'


def _pieces(value: str) -> list[str]:
    """A field cut into the pieces an edit changes one at a time: each choice's opening
    tag, its text, its why; joined again, they are the field."""
    out = []
    for number, part in enumerate(_CUT.split(value)):
        at = part.rfind(_WHY)
        if number % 2:
            out.append(part)
        elif at >= 0 and part.endswith("</div>"):
            out += [part[:at], part[at:]]
        else:
            out += [part, ""]
    return out


def _distinct(values: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(values))


@dataclass
class History:
    """What git remembers of the banks and the lock, read only when a note needs it."""

    lock_path: Path
    _hashes: dict[str, set[str]] | None = None
    _banks: dict[str, list[Bank]] = field(default_factory=dict)

    def hashes(self, guid: str) -> set[str]:
        """Every content hash (8 digits) a committed lock recorded for a GUID."""
        if self._hashes is None:
            self._hashes = {}
            for _, text in git_versions(self.lock_path):
                for found, stamp in stamps_in_lock_text(text):
                    self._hashes.setdefault(found, set()).add(stamp.hash[:8])
        return self._hashes.get(guid, set())

    def contents(self, bank: Bank, item: Item, images: dict[str, str], guid: str) -> list[Content]:
        """The item's content in each committed version of its bank that loads."""
        if bank.path not in self._banks:
            versions = []
            for _, text in git_versions(Path(bank.path)):
                old, _ = parse_bank(bank.path, text)
                if old is not None:
                    versions.append(old)
            self._banks[bank.path] = versions
        found = []
        for old in self._banks[bank.path]:
            for was in old.items:
                if was.id == item.id or was.id in item.formerly:
                    note = note_content(old, was, images, guid)
                    found.append(Content(note.fields, " ".join(note.tags)))
        return found


@dataclass(frozen=True)
class Weighed:
    """One note of an item, beside the bank's note for it and what its build issued, each
    as fields by ankigen's names (what `fields.read_note` reads)."""

    anki: dict[str, str]
    mine: dict[str, str]
    issued: dict[str, str] | None
    """None: what the note's build issued is not known."""
    untouched: bool
    """The note is exactly what a build issued: nobody edited it in Anki."""


@dataclass(frozen=True)
class Known:
    """Where what a build issued may be found: the packages in OUT, git, the lock."""

    packages: dict[str, list[Content]]
    history: History
    lock: Lock

    def weigh(
        self,
        bank: Bank,
        item: Item,
        images: dict[str, str],
        exported: Exported,
        note: AnkiNote,
        kept: KeptNotetype | None,
    ) -> Weighed:
        now = note_content(bank, item, images, note.guid)
        mine = Content(now.fields, " ".join(now.tags))
        locked = self.lock.decks[bank.key].items[item.id].hash[:8]
        targets = {locked}
        if kept is None:
            version, fields = as_issued(exported, note)
            anki = Content(tuple(fields.get(name, "") for name in FIELDS), " ".join(note.tags))
            targets = {version} if version else targets

            def layout(content: Content) -> dict[str, str]:
                return dict(zip(FIELDS, content.fields, strict=True))
        else:  # the note type of an adopted deck (`apkg.kept`): no version on the note
            values = exported.fields_of(note)
            anki = Content(tuple(values.get(name, "") for name in kept.fields), " ".join(note.tags))

            def layout(content: Content) -> dict[str, str]:
                return ankigen_fields(kept, dict(zip(kept.fields, content.fields, strict=True)))

        # tags in Anki's order, and the bank's: a learner's own tags are no edit
        tagged = [Content(anki.fields, tags) for tags in (" ".join(sorted(note.tags)), mine.tags)]
        if kept is not None and locked not in {c.hash() for c in (anki, *tagged)}:
            # which build it came from, the note does not say: any the lock ever recorded
            targets |= self.history.hashes(note.guid)
        others = [*tagged, mine, *self.packages.get(note.guid, ())]
        base = issued_content(anki, others, frozenset(targets))
        if base is None:
            others += self.history.contents(bank, item, images, note.guid)
            base = issued_content(anki, others, frozenset(targets))
        return Weighed(
            layout(anki),
            layout(mine),
            None if base is None else layout(base),
            base is not None and base.fields == anki.fields,
        )
