"""The bank format, version 1: Item and Bank, their keys and limits, and the outlines a
build keeps of them. A bank is one YAML file per topic and language (`reader` loads it);
this module imports no YAML."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import NamedTuple, cast

from ankigen.text import lang

# ids, topics and former names: lower-case words joined by single hyphens
SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
IMAGE_FIELDS = ("image", "explanation_image")
"""The item fields that name an image file."""
MIN_CHOICES = 2
MAX_CHOICES = 8
# Limits that keep a bank, a card and a build within sane sizes.
MAX_ITEMS = 20_000
MAX_LONG_TEXT = 10_000  # question, explanation, description
MAX_SHORT_TEXT = 2_000  # choices, title, alt text and the rest
MAX_ID = 100
MAX_DECK_PART = 255  # characters between '::' in a deck name
MAX_TAGS = 50
UNCARRIED_BMP = r"\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufdd0-\ufdef\ufffe\uffff"
"""The characters no card, XML file, GIFT or CSV carries, of the Basic Multilingual Plane
but surrogates, as a regular expression's class ranges (which a JSON Schema's ECMA-262
pattern reads too): controls but tab and line breaks, and noncharacters."""
MAX_CARRIED_TEXT = 100_000
"""A kept note type's field carried as it is (`Item.anki_fields`): Anki's HTML, which may
hold more than a question's text, such as a table or a list of sources."""


@dataclass(frozen=True)
class Item:
    """One multiple-choice question."""

    id: str
    """Slug, unique within the topic; the same id in every language is the same item."""
    question: str
    """The question, as text with a few inline tags (see `html`)."""
    choices: tuple[str, ...]
    """2 to 8 choices, in the author's order."""
    answer: tuple[int, ...]
    """1-based numbers of the correct choices; more than one makes a multi-answer item."""
    explanation: str
    """Shown on the back of the card."""
    tags: tuple[str, ...] = ()
    """Anki tags for this item, added to the bank's tags."""
    shuffle: bool = True
    """Whether the card shuffles the choices on every review."""
    retired: bool = False
    """HeldPackage in the package, tagged `ankigen::retired`, so learners can find and remove it."""
    image: str = ""
    """Path of an image shown with the question, relative to the media folder."""
    image_alt: str = ""
    """What the image shows, for screen readers."""
    explanation_image: str = ""
    """Path of an image shown in the explanation, relative to the media folder."""
    explanation_image_alt: str = ""
    """What the explanation image shows, for screen readers."""
    formerly: tuple[str, ...] = ()
    """Older ids of this item, oldest first: its note keeps the GUID of the oldest."""
    line: int = 0
    """Line of the item in the bank file."""
    line_keys: tuple[str, ...] = field(default=(), compare=False, hash=False, repr=False)
    """The item's keys, and `choice N` for each choice, for `lines`; items with the same
    keys share one tuple."""
    line_offsets: tuple[int, ...] = field(default=(), compare=False, hash=False, repr=False)
    """Line of each of `line_keys`, less `line`: small numbers, which Python does not
    store once per item (a dict of lines per item was a fifth of a bank's memory)."""
    chunk: int = field(default=0, compare=False, hash=False, repr=False)
    """A digest of the item's lines in the file, and of the bank's defaults it was read
    with: the next build reuses the item if they are the same (0: never reused)."""
    seal: int = field(default=0, compare=False, hash=False, repr=False)
    """A digest of `chunk` with everything else read from those lines (`item_seal`): an
    item is reused only as it was read, never as a cache entry edited since says."""
    whys: tuple[str, ...] = ()
    """Why each choice is right or wrong, parallel to `choices` ("" where a choice has none);
    empty when no choice has one."""
    recall: bool = False
    """The front asks for the answer before it shows the choices."""
    anki_fields: tuple[tuple[str, str], ...] = ()
    """In a bank that keeps an adopted deck's note type (`anki_notetype:`), the fields of
    that note type ankigen does not map, by name, each as the note held it (Anki's HTML,
    byte for byte): the build writes them back, so learners' notes keep them."""

    @property
    def lines(self) -> dict[str, int]:
        """Line of each key of the item, and of each choice as `choice N`."""
        pairs = zip(self.line_keys, self.line_offsets, strict=True)
        return {key: self.line + offset for key, offset in pairs}

    def line_at(self, key: str) -> int:
        """Line of one of `line_keys`; the item's own line where it has no such key."""
        try:
            return self.line + self.line_offsets[self.line_keys.index(key)]
        except ValueError:
            return self.line

    def why(self, number: int) -> str:
        """The `why` of choice `number` (1-based), or ""."""
        return self.whys[number - 1] if number <= len(self.whys) else ""


ANSWER_FORMATS = ("bits", "numbers", "letters", "text")
"""How a kept note type's answer field says which choices are correct: `1 0 0 1` by
position, choice numbers (`2`, `1 3`), letters by position (`B`, `A, C`), or the correct
choice's text."""


@dataclass(frozen=True)
class KeptNotetype:
    """An adopted deck's own Anki note type, kept so that its learners' notes and cards stay
    where they are (`anki_notetype:` in a bank; see docs/round-trip.md): its id, fields and
    template name as Anki has them, and which of its fields hold what. ankigen's card is
    drawn from those fields (`apkg.kept`)."""

    id: int
    name: str
    fields: tuple[str, ...]
    template: str
    question: str
    choices: tuple[str, ...]
    answer: str
    answer_format: str
    """One of `ANSWER_FORMATS`."""
    explanation: str = ""
    kind: str = ""
    """A field such as the Multiple Choice add-on's QType: 2 for one answer, 1 for several."""
    sort_field: str = ""
    """The field Anki's browser sorts the notes by, as the adopted note type had it ("":
    the question's). Kept: Anki re-stamps every note of a note type whose sort field
    changes, and a learner's re-stamped note is newer than the package's, never updated."""
    adopted: int = 0
    """When the deck was adopted: the note type's time in packages is never older, so Anki
    replaces the old template by ankigen's card."""

    @property
    def mapped(self) -> tuple[str, ...]:
        """The fields the build writes an item's texts into; it carries every other one as
        the item's `anki_fields` hold it."""
        parts = (self.question, *self.choices, self.answer, self.explanation, self.kind)
        return tuple(name for name in parts if name)


@dataclass(frozen=True)
class Bank:
    """One topic in one language: one deck."""

    path: str
    topic: str
    """Slug: a-z, 0-9 and '-'; the same topic in every language."""
    language: str
    """BCP 47 tag in canonical case, such as `bn` or `pt-BR`."""
    title: str
    """Deck title, in this language."""
    items: tuple[Item, ...]
    description: str = ""
    """Optional; becomes part of the deck description in Anki."""
    level: str = ""
    """Optional free text, such as `intermediate`."""
    tags: tuple[str, ...] = ()
    """Optional Anki tags added to every note of the bank."""
    deck: str = ""
    """Optional deck name; by default `TITLE (LANGUAGE)`. Use `::` for subdecks."""
    shuffle: bool = True
    """Default for the items' `shuffle`."""
    source: str = ""
    """Optional: where the questions come from."""
    license: str = ""
    """Optional: the licence of the bank's content."""
    formerly_topics: tuple[str, ...] = ()
    """Older topics of this bank (`formerly: {topic: ...}`), oldest first."""
    formerly_languages: tuple[str, ...] = ()
    """Older language tags of this bank (`formerly: {language: ...}`), oldest first."""
    lines: dict[str, int] = field(default_factory=dict, compare=False, hash=False)
    """Line of each top-level key."""
    recall: bool = False
    """Default for the items' `recall`."""
    anki_notetype: KeptNotetype | None = None
    """The adopted deck's note type its notes keep, if the bank keeps one."""

    @property
    def deck_name(self) -> str:
        return self.deck or f"{self.title} ({self.language})"

    @property
    def direction(self) -> str:
        return lang.direction(self.language)

    @property
    def key(self) -> str:
        """The deck's identity within a build: `topic.language`."""
        return f"{self.topic}.{self.language}"

    @property
    def live_items(self) -> tuple[Item, ...]:
        """The items that are not retired."""
        return tuple(item for item in self.items if not item.retired)


class ItemOutline(NamedTuple):
    """What a build needs of an item outside its own deck's job: who the item is to Anki,
    whether it is retired, and the images it names (their files are prepared for every
    deck at once). A named tuple: a build reads one per item of every bank, and a tuple
    is made several times faster than a frozen dataclass."""

    id: str
    formerly: tuple[str, ...] = ()
    retired: bool = False
    images: tuple[tuple[str, str, int], ...] = ()
    """(field, path, line) of each image the item names, in `IMAGE_FIELDS` order."""


ParityRow = tuple[int, tuple[int, ...], int, int, int]
Parity = dict[str, ParityRow]
"""Of each item by id, what comparing a translation with its reference reads
(`checks.across.against_reference`): the number of choices, the answer, which choices have a why
(bit n-1 for choice n), and digests of the normalized question and explanation."""


@dataclass(frozen=True)
class Outline:
    """A checked bank as a build keeps it: the bank without its items, which stay in the
    bank cache for the deck's job (a large project's items do not fit in memory twice),
    and an outline of each item."""

    bank: Bank
    """The bank with no items: its settings and lines."""
    items: tuple[ItemOutline, ...]

    def __reduce__(self) -> tuple[object, ...]:
        """Pickled by column, from the worker that checked the bank: a named tuple at a
        time, 10,000 items took 60 ms there and back, on the way to their deck's plan."""
        columns = tuple(zip(*self.items, strict=True)) if self.items else ()
        return _outline, (self.bank, columns)


def _outline(bank: Bank, columns: tuple[tuple[object, ...], ...]) -> Outline:
    rows = zip(*columns, strict=True)
    made = map(tuple.__new__, itertools.repeat(ItemOutline), rows)  # as `identity.stamp.stamps`
    return Outline(bank, tuple(cast(Iterator[ItemOutline], made)))


def outline(bank: Bank) -> Outline:
    """The outline of a bank read in full."""
    items = []
    for item in bank.items:
        images = tuple(
            (name, path, item.line_at(name))
            for name in IMAGE_FIELDS
            if (path := getattr(item, name))
        )
        items.append(ItemOutline(item.id, item.formerly, item.retired, images))
    return Outline(replace(bank, items=()), tuple(items))
