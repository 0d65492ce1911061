"""The bank format, version 1: the schema, and loading it with line numbers.

A bank is one YAML file per topic and language. Loading collects every problem
in the file as a Diagnostic instead of stopping at the first one.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import itertools
import marshal
import operator
import re
import sys
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import NamedTuple, cast

import yaml

from ankigen import lang, markup, yamltree
from ankigen.core.errors import Diagnostic, Severity
from ankigen.html import INVISIBLE, visible_text
from ankigen.ids import SLUG
from ankigen.media import IMAGE_FIELDS
from ankigen.yamltree import YamlProblem, line_of

MIN_CHOICES = 2
MAX_CHOICES = 8
# Limits that keep a bank, a card and a build within sane sizes.
MAX_ITEMS = 20_000
MAX_LONG_TEXT = 10_000  # question, explanation, description
MAX_SHORT_TEXT = 2_000  # choices, title, alt text and the rest
MAX_ID = 100
MAX_TAGS = 50
_NULL = yamltree.NULL
_INT = yamltree.INT
_BOOL = yamltree.BOOL
_scalar_type = yamltree.scalar_type


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
    """Kept in the package, tagged `ankigen::retired`, so learners can find and remove it."""
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
(`lint.against_reference`): the number of choices, the answer, which choices have a why
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
    made = map(tuple.__new__, itertools.repeat(ItemOutline), rows)  # as `identity.stamps`
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


BANK_KEYS = [
    "topic",
    "language",
    "title",
    "description",
    "level",
    "tags",
    "deck",
    "shuffle",
    "source",
    "license",
    "formerly",
    "items",
    "recall",
]
REQUIRED_BANK_KEYS = ("topic", "language", "title", "items")
ITEM_KEYS = [
    "id",
    "question",
    "choices",
    "answer",
    "explanation",
    "tags",
    "shuffle",
    "retired",
    "image",
    "image_alt",
    "explanation_image",
    "explanation_image_alt",
    "formerly",
    "recall",
]
REQUIRED_ITEM_KEYS = ("id", "question", "choices", "answer", "explanation")


class _Reader:
    """Walks the composed YAML and collects diagnostics."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.diagnostics: list[Diagnostic] = []
        self.key_lines: dict[int, int] = {}

    def key_line(self, value: yaml.Node) -> int:
        """The line of the key that `value` belongs to (a block list starts a line later)."""
        line = self.key_lines.get(id(value))
        return line_of(value) if line is None else line

    def report(
        self, node_or_line: yaml.Node | int, message: str, severity: Severity = "error"
    ) -> None:
        line = node_or_line if isinstance(node_or_line, int) else line_of(node_or_line)
        self.diagnostics.append(Diagnostic(self.path, line, severity, message))

    def mapping(
        self, node: yaml.Node, known: Sequence[str], what: str
    ) -> dict[str, yaml.Node] | None:
        if not isinstance(node, yaml.MappingNode):
            self.report(node, f"{what} must be a mapping of keys to values")
            return None
        out: dict[str, yaml.Node] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                self.report(key_node, f"{what}: keys must be plain names")
                continue
            key = key_node.value
            if key in out:
                self.report(key_node, f"{what}: duplicate key {key!r}")
                continue
            if key not in known:
                hint = difflib.get_close_matches(key, known, n=1)
                suggestion = f"; did you mean {hint[0]!r}?" if hint else ""
                self.report(key_node, f"{what}: unknown key {key!r}{suggestion}")
                continue
            out[key] = value_node
            self.key_lines[id(value_node)] = line_of(key_node)
        return out

    def text(
        self, node: yaml.Node, what: str, *, required: bool = True, limit: int = MAX_SHORT_TEXT
    ) -> str | None:
        if not isinstance(node, yaml.ScalarNode):
            self.report(node, f"{what} must be text")
            return None
        # numbers and yes/no keep the author's spelling: `0.10` stays `0.10`
        value = "" if _is_null(node) else str(node.value).strip()
        if required and not value:
            self.report(node, f"{what} is empty")
            return None
        if required and _visually_empty(value):
            self.report(
                node, f"{what} is visually empty (only tags, spaces or invisible characters)"
            )
            return None
        if len(value) > limit:
            self.report(node, f"{what} is {len(value)} characters long; the limit is {limit}")
            return None
        return value

    def rich_text(
        self, node: yaml.Node, what: str, *, required: bool = True, limit: int = MAX_SHORT_TEXT
    ) -> str | None:
        """Item text, which may hold code blocks and math: checked at the line of each problem."""
        value = self.text(node, what, required=required, limit=limit)
        if value and ("`" in value or "\\" in value):
            for problem in markup.problems(value):
                line = _text_line(node, value, problem.line)
                self.report(line, f"{what}: {problem.message}", problem.severity)
        return value

    def boolean(self, node: yaml.Node, what: str) -> bool | None:
        if isinstance(node, yaml.ScalarNode) and _scalar_type(node) == _BOOL:
            return str(node.value).lower() in ("true", "yes", "on", "y")
        self.report(node, f"{what} must be true or false")
        return None

    def tag_list(self, node: yaml.Node, what: str) -> tuple[str, ...] | None:
        if not isinstance(node, yaml.SequenceNode):
            self.report(node, f"{what} must be a list of tags")
            return None
        tags: list[str] = []
        if len(node.value) > MAX_TAGS:
            self.report(node, f"{what}: {len(node.value)} tags; the limit is {MAX_TAGS}")
            return None
        for tag_node in node.value:
            tag = self.text(tag_node, f"{what}: tag")
            if tag is None:
                continue
            if any(ch.isspace() for ch in tag):
                self.report(tag_node, f"{what}: tag {tag!r} contains white space")
                continue
            tags.append(tag)
        return tuple(tags)


_NULL_SPELLINGS = frozenset(("", "~", "null", "Null", "NULL"))


def _visually_empty(value: str) -> bool:
    """Only tags, spaces or invisible characters: a reader sees nothing."""
    # the usual text is printable and has a letter or digit outside any tag: seen at once
    if "<" not in value and value.isprintable() and any(map(str.isalnum, value)):
        return False
    return not visible_text(value)


def _is_null(node: yaml.Node) -> bool:
    # cheaper than scalar_type for the common case: most text is not a null spelling
    return node.value in _NULL_SPELLINGS and _scalar_type(node) == _NULL


def _typed_null(node: yaml.Node) -> bool:
    """`scalar_type(node) == NULL`, without trying every plain type's pattern on the
    usual text: a plain or quoted string that is no null spelling is a string."""
    if node.value not in _NULL_SPELLINGS and node.tag == yamltree.STR:
        return False
    return _scalar_type(node) == _NULL


def load_bank(path: Path) -> tuple[Bank | None, list[Diagnostic]]:
    """Read and check one bank file. Returns the bank (None if it has errors) and all problems."""
    shown = str(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        return None, [Diagnostic(shown, 1, "error", f"cannot read: {exc.strerror}")]
    return parse_bank(shown, data)


def parse_bank(
    path: str, data: bytes, previous: Iterable[Item] = ()
) -> tuple[Bank | None, list[Diagnostic]]:
    """The bank in `data`, with every problem found in reading it. Items of `previous`
    (the same file as last read) whose lines are unchanged are taken as they are."""
    try:
        text = yamltree.decode(path, data)
    except YamlProblem as problem:
        return None, [problem.diagnostic]
    layout = yamltree.items_layout(text)
    if layout is not None:
        reuse = {item.chunk: item for item in previous if item.chunk}
        try:
            return _parse_text(path, layout.head, layout, reuse)
        except (YamlProblem, yamltree.Unsplit):
            pass  # composed whole, the document says what is wrong with it
    try:
        return _parse_text(path, text, None, {})
    except YamlProblem as problem:
        return None, [problem.diagnostic]


def _parse_text(
    path: str, text: str, layout: yamltree.ItemsLayout | None, reuse: dict[int, Item]
) -> tuple[Bank | None, list[Diagnostic]]:
    reader = _Reader(path)
    root = yamltree.compose_text(path, text)
    if root is None:
        reader.report(1, "empty file: a bank needs topic, language, title and items")
        return None, reader.diagnostics
    bank = _read_bank(reader, root, layout, reuse)
    has_errors = any(d.severity == "error" for d in reader.diagnostics)
    return (None if has_errors else bank), sorted(reader.diagnostics)


def _read_bank(
    r: _Reader, root: yaml.Node, layout: yamltree.ItemsLayout | None, reuse: dict[int, Item]
) -> Bank | None:
    keys = r.mapping(root, BANK_KEYS, "bank")
    if keys is None:
        return None
    for key in REQUIRED_BANK_KEYS:
        if key not in keys:
            r.report(root, f"bank: missing key {key!r}")
    values: dict[str, object] = {}
    for key in ("title", "description", "level", "deck", "source", "license"):
        if key in keys:
            limit = MAX_LONG_TEXT if key == "description" else MAX_SHORT_TEXT
            values[key] = r.text(keys[key], key, required=key == "title", limit=limit)
    topic = r.text(keys["topic"], "topic") if "topic" in keys else None
    if topic is not None and not SLUG.fullmatch(topic):
        r.report(keys["topic"], f"topic {topic!r} is not a slug (a-z, 0-9 and '-')")
        topic = None
    if topic is not None and len(topic) > MAX_ID:
        r.report(keys["topic"], f"topic is longer than {MAX_ID} characters")
        topic = None
    if topic is not None and topic.startswith("backup-"):
        r.report(
            keys["topic"],
            f"topic {topic!r}: Anki treats files named 'backup-*' as collection backups "
            "and would replace the learner's collection; choose another topic",
        )
        topic = None
    language = r.text(keys["language"], "language") if "language" in keys else None
    if language is not None:
        if lang.is_valid_tag(language):
            language = lang.canonical_tag(language)
        else:
            r.report(
                keys["language"], f"language {language!r} is not a BCP 47 tag such as en or pt-BR"
            )
            language = None
    formerly = _read_bank_formerly(r, keys["formerly"]) if "formerly" in keys else ((), ())
    bank_tags = r.tag_list(keys["tags"], "tags") if "tags" in keys else ()
    shuffle = r.boolean(keys["shuffle"], "shuffle") if "shuffle" in keys else True
    recall = r.boolean(keys["recall"], "recall") if "recall" in keys else False
    deck = values.get("deck")
    if isinstance(deck, str) and deck and any(not part.strip() for part in deck.split("::")):
        r.report(keys["deck"], f"deck {deck!r} has an empty part around '::'")
    items: list[Item] = []
    if "items" in keys:
        items = list(
            _read_items(
                r,
                keys["items"],
                layout,
                reuse,
                shuffle if shuffle is not None else True,
                bool(recall),
            )
        )
    if topic is None or language is None or values.get("title") is None or formerly is None:
        return None
    return Bank(
        path=r.path,
        topic=topic,
        language=language,
        title=str(values["title"]),
        items=tuple(items),
        description=str(values.get("description") or ""),
        level=str(values.get("level") or ""),
        tags=bank_tags or (),
        deck=str(values.get("deck") or ""),
        shuffle=shuffle if shuffle is not None else True,
        source=str(values.get("source") or ""),
        license=str(values.get("license") or ""),
        formerly_topics=formerly[0] if formerly else (),
        formerly_languages=formerly[1] if formerly else (),
        lines={sys.intern(key): r.key_line(node) for key, node in keys.items()},
        recall=bool(recall),
    )


def _read_items(
    r: _Reader,
    node: yaml.Node,
    layout: yamltree.ItemsLayout | None,
    reuse: dict[int, Item],
    default_shuffle: bool,
    default_recall: bool,
) -> Iterator[Item]:
    defaults = (default_shuffle, default_recall)
    if layout is not None:
        count, where = len(layout.starts), layout.lines[0]
        items = _laid_out_items(r, layout, reuse, defaults)
    elif isinstance(node, yaml.SequenceNode):
        count, where = len(node.value), line_of(node)
        items = (_read_item(r, item_node, *defaults) for item_node in node.value)
    else:
        r.report(node, "items must be a list of items")
        return
    if not count:
        r.report(where, "items: the bank has no items")
    if count > MAX_ITEMS:
        r.report(where, f"items: {count} items; a bank holds at most {MAX_ITEMS}")
        return
    seen: dict[str, int] = {}
    for item in items:
        if item is None:
            continue
        line = item.line_at("id")
        if item.id in seen:
            r.report(line, f"duplicate item id {item.id!r} (first used at line {seen[item.id]})")
            continue
        seen[item.id] = line
        yield item


def _laid_out_items(
    r: _Reader,
    layout: yamltree.ItemsLayout,
    reuse: dict[int, Item],
    defaults: tuple[bool, bool],
) -> Iterator[Item | None]:
    """The items in order: those whose lines (and the defaults they were read with) are
    unchanged as they were, moved to their new lines; those laid out as ankigen writes
    them read from their text; the others composed a slice at a time. A slice's nodes
    are gone once the next is composed, so the key lines recorded for them go too (their
    ids will be reused)."""
    prefix = f"{defaults}\0".encode()
    texts = [yamltree.item_text(layout, n) for n in range(len(layout.starts))]
    chunks = [
        int.from_bytes(hashlib.blake2b(prefix + text.encode(), digest_size=8).digest()) or 1
        for text in texts
    ]
    kept = {
        n: reuse[chunk]
        for n, chunk in enumerate(chunks)
        if chunk in reuse and reuse[chunk].seal == item_seal(reuse[chunk])
    }
    # those read from their text are not composed: libyaml's nodes cost more than reading
    for n, (text, line, chunk) in enumerate(zip(texts, layout.lines, chunks, strict=True)):
        if n not in kept:
            item = _read_text_item(text, line, defaults, chunk)
            if item is not None:
                kept[n] = item
    bank_keys = dict(r.key_lines)
    batches = yamltree.compose_items(r.path, layout, skip=kept)
    batch: Iterator[tuple[int, yaml.Node]] = iter(())
    for number, line in enumerate(layout.lines):
        if number in kept:
            item = kept[number]
            yield item if item.line == line else replace(item, line=line)
            continue
        found = next(batch, None)
        if found is None:
            r.key_lines = dict(bank_keys)
            batch = iter(next(batches))
            found = next(batch)
        index, item_node = found
        assert index == number  # compose_items skips exactly the kept items
        # an item not on its dash's line is read again next time (its lines would move)
        chunk = chunks[number] if line_of(item_node) == line else 0
        yield _read_item(r, item_node, *defaults, chunk=chunk)


def _peek_id(node: yaml.Node) -> str | None:
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            is_id = isinstance(key, yaml.ScalarNode) and key.value == "id"
            if is_id and isinstance(value, yaml.ScalarNode) and not _typed_null(value):
                return str(value.value).strip() or None
    return None


def _read_item(
    r: _Reader, node: yaml.Node, default_shuffle: bool, default_recall: bool, chunk: int = 0
) -> Item | None:
    plain = _read_plain_item(node, default_shuffle, default_recall, chunk)
    if plain is not None:
        return plain
    problems = len(r.diagnostics)
    peeked = _peek_id(node)
    what = f"item {peeked!r}" if peeked else "item"
    line = line_of(node)
    keys = r.mapping(node, ITEM_KEYS, what)
    if keys is None:
        return None
    item_id = r.text(keys["id"], f"{what}: id") if "id" in keys else None
    for key in REQUIRED_ITEM_KEYS:
        if key not in keys:
            r.report(node, f"{what}: missing key {key!r}")
    if item_id is not None and not SLUG.fullmatch(item_id):
        r.report(keys["id"], f"{what}: id is not a slug (a-z, 0-9 and '-')")
        item_id = None
    if item_id is not None and len(item_id) > MAX_ID:
        r.report(keys["id"], f"{what}: id is longer than {MAX_ID} characters")
        item_id = None
    question = (
        r.rich_text(keys["question"], f"{what}: question", limit=MAX_LONG_TEXT)
        if "question" in keys
        else None
    )
    explanation = (
        r.rich_text(keys["explanation"], f"{what}: explanation", limit=MAX_LONG_TEXT)
        if "explanation" in keys
        else None
    )
    choice_lines: dict[str, int] = {}
    whys: list[str] = []
    choices = (
        _read_choices(r, keys["choices"], what, whys, choice_lines) if "choices" in keys else None
    )
    choice_count = (
        len(keys["choices"].value) if isinstance(keys.get("choices"), yaml.SequenceNode) else None
    )
    answer = _read_answer(r, keys["answer"], what, choice_count) if "answer" in keys else None
    tags = r.tag_list(keys["tags"], f"{what}: tags") if "tags" in keys else ()
    shuffle = (
        r.boolean(keys["shuffle"], f"{what}: shuffle") if "shuffle" in keys else default_shuffle
    )
    retired = r.boolean(keys["retired"], f"{what}: retired") if "retired" in keys else False
    recall = r.boolean(keys["recall"], f"{what}: recall") if "recall" in keys else default_recall
    formerly = (
        _read_names(r, keys["formerly"], f"{what}: formerly", _check_slug)
        if "formerly" in keys
        else ()
    )
    media = {
        key: r.text(keys[key], f"{what}: {key}", required=False) if key in keys else ""
        for key in ("image", "image_alt", "explanation_image", "explanation_image_alt")
    }
    if None in media.values():
        return None
    if None in (item_id, question, explanation, choices, answer, tags, shuffle, retired, formerly):
        return None
    if recall is None:
        return None
    assert item_id and question and explanation and choices and answer is not None
    item = Item(
        id=item_id,
        question=question,
        choices=choices,
        answer=answer,
        explanation=explanation,
        tags=tags or (),
        shuffle=bool(shuffle),
        retired=bool(retired),
        image=media["image"] or "",
        image_alt=media["image_alt"] or "",
        explanation_image=media["explanation_image"] or "",
        explanation_image_alt=media["explanation_image_alt"] or "",
        formerly=formerly or (),
        line=line,
        line_keys=shared_keys((*keys, *choice_lines)),
        line_offsets=(
            *(r.key_line(value) - line for value in keys.values()),
            *(n - line for n in choice_lines.values()),
        ),
        whys=tuple(whys) if any(whys) else (),
        recall=bool(recall),
        # an item read with a problem is read again next time, to report it again
        chunk=chunk if len(r.diagnostics) == problems else 0,
    )
    if item.chunk:
        # as a frozen dataclass's own __init__ sets its fields: the seal needs the item
        object.__setattr__(item, "seal", item_seal(item))
    return item


_PLAIN_ITEM_KEYS = frozenset(REQUIRED_ITEM_KEYS)
_CHOICE_KEYS = tuple(f"choice {number}" for number in range(1, MAX_CHOICES + 1))


def _plain_value(value: str, limit: int) -> str | None:
    """A scalar's value as `_Reader.rich_text` accepts it without a word, else None."""
    if value in _NULL_SPELLINGS:
        return None
    value = value.strip()
    if not value or len(value) > limit or "`" in value or "\\" in value:
        return None
    if _visually_empty(value):
        return None
    return value


def _read_plain_item(
    node: yaml.Node, default_shuffle: bool, default_recall: bool, chunk: int
) -> Item | None:
    """The item `_read_item` reads from an item of just the five required keys, with
    text choices and one plain answer, all of them as it accepts without a word; None
    for any other, which `_read_item` reads (and reports on). Most items are such, and
    this reads them in three fifths of the time."""
    if type(node) is not yaml.MappingNode or len(node.value) != len(_PLAIN_ITEM_KEYS):
        return None
    values: dict[str, yaml.Node] = {}
    key_lines: list[int] = []
    for key_node, value_node in node.value:
        if type(key_node) is not yaml.ScalarNode or key_node.value not in _PLAIN_ITEM_KEYS:
            return None
        values[key_node.value] = value_node
        key_lines.append(key_node.start_mark.line)
    if len(values) != len(_PLAIN_ITEM_KEYS):
        return None  # a key given twice
    texts = [values[key] for key in ("id", "question", "explanation")]
    choice_nodes = values["choices"]
    answer_node = values["answer"]
    if (
        any(type(text) is not yaml.ScalarNode for text in texts)
        or type(choice_nodes) is not yaml.SequenceNode
        or any(type(choice) is not yaml.ScalarNode for choice in choice_nodes.value)
        or type(answer_node) is not yaml.ScalarNode
        or answer_node.tag != yamltree.STR
        or answer_node.style
    ):
        return None
    key_lines.extend(choice.start_mark.line for choice in choice_nodes.value)
    return _plain_item(
        texts[0].value,
        texts[1].value,
        texts[2].value,
        [choice.value for choice in choice_nodes.value],
        answer_node.value,
        (tuple(values), key_lines, node.start_mark.line),
        (default_shuffle, default_recall),
        chunk,
    )


# where an item's keys are: their names in order, the lines of the keys then of the
# choices, and the item's first line (all counted from 0, as libyaml's marks are)
_Where = tuple[tuple[str, ...], list[int], int]


def _plain_item(
    raw_id: str,
    raw_question: str,
    raw_explanation: str,
    raw_choices: list[str],
    raw_answer: str,
    where: _Where,
    defaults: tuple[bool, bool],
    chunk: int,
) -> Item | None:
    """The item of these scalars (as YAML reads them, from an item of the five required
    keys) if each is as the full reading accepts it without a word, else None: the one
    judge of both fast readings, from the nodes and from the text."""
    item_id = _plain_value(raw_id, MAX_SHORT_TEXT)
    if item_id is None or len(item_id) > MAX_ID or not SLUG.fullmatch(item_id):
        return None
    question = _plain_value(raw_question, MAX_LONG_TEXT)
    explanation = _plain_value(raw_explanation, MAX_LONG_TEXT)
    if (
        question is None
        or explanation is None
        or not MIN_CHOICES <= len(raw_choices) <= MAX_CHOICES
        or not _PLAIN_NUMBER.fullmatch(raw_answer)
    ):
        return None
    answer = int(raw_answer)
    if not 1 <= answer <= len(raw_choices):
        return None
    choices = []
    looks: set[str] = set()
    for raw_choice in raw_choices:
        choice = _plain_value(raw_choice, MAX_SHORT_TEXT)
        if choice is None:
            return None
        looks.add(lookalike_key(choice))
        choices.append(choice)
    if len(looks) != len(choices):
        return None  # two choices look the same
    keys, key_lines, line = where
    item = Item(
        id=item_id,
        question=question,
        choices=tuple(choices),
        answer=(answer,),
        explanation=explanation,
        shuffle=defaults[0],
        line=line + 1,
        line_keys=shared_keys((*keys, *_CHOICE_KEYS[: len(choices)])),
        line_offsets=tuple(n - line for n in key_lines),
        recall=defaults[1],
        chunk=chunk,
    )
    if chunk:
        object.__setattr__(item, "seal", item_seal(item))
    return item


# An item as `ankigen import` and the shipped banks write it: the five keys in this
# order, each on its own line, id and answer plain, the texts double-quoted on one line
# without escapes, the choices a block list; blank lines and comments after it
_TEXT_ITEM = re.compile(
    r"(?P<dash> *)- id: (?P<id>[a-z0-9]+(?:-[a-z0-9]+)*) *\n"
    r'(?P<keys> *)question: "(?P<question>[^"\\\n]*)" *\n'
    r"(?P=keys)choices: *\n"
    r'(?P<choices>(?P<choice> *)- "[^"\\\n]*" *\n(?:(?P=choice)- "[^"\\\n]*" *\n)*)'
    r"(?P=keys)answer: (?P<answer>[0-9]+) *\n"
    r'(?P=keys)explanation: "(?P<explanation>[^"\\\n]*)" *'
    r"(?:\n(?: *(?:#[^\n]*)?\n)*(?: *(?:#[^\n]*)?)?)?"
)
_QUOTED = re.compile(r'"([^"\\\n]*)"')
# what YAML does not allow in a file at all: libyaml reports it
_NON_PRINTABLE = yaml.reader.Reader.NON_PRINTABLE
_TEXT_ITEM_KEYS = ("id", "question", "choices", "answer", "explanation")


def _read_text_item(text: str, line: int, defaults: tuple[bool, bool], chunk: int) -> Item | None:
    """The item `_read_plain_item` reads from the node libyaml composes of `text` (an
    item's lines, from its dash on line `line`), read from the text itself where it is
    laid out as `_TEXT_ITEM` says; None for anything else, which libyaml reads. Three
    times faster than composing it: most items are so written."""
    found = _TEXT_ITEM.fullmatch(text)
    if found is None or len(found["keys"]) != len(found["dash"]) + 2:
        return None
    if len(found["choice"]) < len(found["keys"]) or _NON_PRINTABLE.search(text):
        return None
    choices = _QUOTED.findall(found["choices"])
    first = line - 1
    after = first + 3 + len(choices)  # the answer's line
    return _plain_item(
        found["id"],
        found["question"],
        found["explanation"],
        choices,
        found["answer"],
        (
            _TEXT_ITEM_KEYS,
            [first, first + 1, first + 2, after, after + 1, *range(first + 3, after)],
            first,
        ),
        defaults,
        chunk,
    )


# what an item's lines say, its line aside (that moves with the lines above it)
_READ = operator.attrgetter(
    *(f.name for f in dataclasses.fields(Item) if f.name not in ("line", "chunk", "seal"))
)


def item_seal(item: Item) -> int:
    """`Item.seal` for the item as it is.

    Its values are written by `marshal` at version 2, which writes each value by type and
    content alone (no references to objects seen before, none of the interned mark of
    version 3): half the time of their `repr`, which a build with an edited bank of
    10,000 items spent 0.14 s on."""
    values = marshal.dumps((item.chunk, _READ(item)), 2)
    return int.from_bytes(hashlib.blake2b(values, digest_size=8).digest()) or 1


_SHARED_KEYS: dict[tuple[str, ...], tuple[str, ...]] = {}


def shared_keys(keys: tuple[str, ...]) -> tuple[str, ...]:
    """One tuple for every item with these keys in this order, its names interned."""
    shared = _SHARED_KEYS.get(keys)
    if shared is None:
        shared = _SHARED_KEYS.setdefault(keys, tuple(map(sys.intern, keys)))
    return shared


def lookalike_key(text: str) -> str:
    """Text as a reader sees it: Unicode-normalized (Anki stores NFC), invisible
    characters dropped, runs of white space made one space."""
    if not text.isascii():  # ASCII is already NFC and has no invisible characters
        text = unicodedata.normalize("NFC", text)
        if _INVISIBLE.search(text):
            text = _INVISIBLE.sub("", text)
    return " ".join(text.split())


_INVISIBLE = re.compile("[" + "".join(sorted(INVISIBLE)) + "]")


def _check_slug(value: str) -> str | None:
    if not SLUG.fullmatch(value) or len(value) > MAX_ID:
        return f"{value!r} is not a slug (a-z, 0-9 and '-')"
    return None


def _check_tag(value: str) -> str | None:
    if not lang.is_valid_tag(value):
        return f"{value!r} is not a BCP 47 tag such as en or pt-BR"
    return None


def _read_names(
    r: _Reader, node: yaml.Node, what: str, check: Callable[[str], str | None]
) -> tuple[str, ...] | None:
    """One name or a list of names, each checked; older names, oldest first."""
    nodes = node.value if isinstance(node, yaml.SequenceNode) else [node]
    names: list[str] = []
    ok = True
    for name_node in nodes:
        name = r.text(name_node, what)
        problem = check(name) if name is not None else "empty"
        if name is None or problem:
            if name is not None:
                r.report(name_node, f"{what}: {problem}")
            ok = False
            continue
        if name in names:
            r.report(name_node, f"{what}: {name!r} is listed twice")
            ok = False
            continue
        names.append(name)
    if not names and ok:
        r.report(node, f"{what} is empty")
        return None
    return tuple(names) if ok else None


def _read_bank_formerly(
    r: _Reader, node: yaml.Node
) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    keys = r.mapping(node, ["topic", "language"], "formerly")
    if keys is None:
        return None
    if not keys:
        r.report(node, "formerly: name the older topic and/or language")
        return None
    topics = (
        _read_names(r, keys["topic"], "formerly: topic", _check_slug) if "topic" in keys else ()
    )
    languages = (
        _read_names(r, keys["language"], "formerly: language", _check_tag)
        if "language" in keys
        else ()
    )
    if topics is None or languages is None:
        return None
    return topics, tuple(lang.canonical_tag(tag) for tag in languages)


CHOICE_KEYS = ["text", "why"]


def _read_choice(
    r: _Reader, node: yaml.Node, what: str, whys: list[str]
) -> tuple[str | None, yaml.Node]:
    """A choice is text, or a mapping with its `text` and a `why`; returns the text and its node."""
    if not isinstance(node, yaml.MappingNode):
        whys.append("")
        return r.rich_text(node, what), node
    keys = r.mapping(node, CHOICE_KEYS, what)
    if keys is None:
        return None, node
    why = r.rich_text(keys["why"], f"{what}: why", required=False) if "why" in keys else ""
    whys.append(why or "")
    if "text" not in keys:
        r.report(node, f"{what}: missing key 'text'")
        return None, node
    return r.rich_text(keys["text"], what), keys["text"]


def _read_choices(
    r: _Reader,
    node: yaml.Node,
    what: str,
    whys: list[str] | None = None,
    lines: dict[str, int] | None = None,
) -> tuple[str, ...] | None:
    if not isinstance(node, yaml.SequenceNode):
        r.report(node, f"{what}: choices must be a list")
        return None
    whys = [] if whys is None else whys
    choices: list[str] = []
    ok = True
    first: dict[str, tuple[int, yaml.Node, str]] = {}
    for number, item_node in enumerate(node.value, start=1):
        choice, choice_node = _read_choice(r, item_node, f"{what}: choice {number}", whys)
        if lines is not None:
            lines[f"choice {number}"] = line_of(item_node)
        if choice is None:
            ok = False
            continue
        key = lookalike_key(choice)
        if key in first:
            other, other_node, text = first[key]
            how = "repeats" if text == choice else "looks the same as"
            r.report(
                choice_node,
                f"{what}: choice {number} {how} choice {other} at line {line_of(other_node)}"
                + ("" if text == choice else f" ({choice!r} and {text!r})"),
            )
            ok = False
        first.setdefault(key, (number, choice_node, choice))
        choices.append(choice)
    count = len(node.value)
    if count < MIN_CHOICES or count > MAX_CHOICES:
        r.report(node, f"{what}: has {count} choices; an item needs {MIN_CHOICES} to {MAX_CHOICES}")
        ok = False
    return tuple(choices) if ok else None


def _read_answer(
    r: _Reader, node: yaml.Node, what: str, choice_count: int | None
) -> tuple[int, ...] | None:
    kind = _scalar_type(node) if isinstance(node, yaml.ScalarNode) else None
    if kind == _NULL:
        r.report(node, f"{what}: answer is missing: set the number of the correct choice")
        return None
    numbers = node.value if isinstance(node, yaml.SequenceNode) else [node]
    if isinstance(node, yaml.SequenceNode) and not numbers:
        r.report(node, f"{what}: answer is an empty list")
        return None
    answer: list[int] = []
    for number_node in numbers:
        if number_node is not node:  # a list's numbers; the answer itself is typed above
            kind = _scalar_type(number_node) if isinstance(number_node, yaml.ScalarNode) else None
        if kind != _INT:
            r.report(number_node, f"{what}: answer must be a choice number or a list of them")
            return None
        spelled = str(number_node.value)
        if not _PLAIN_NUMBER.fullmatch(spelled):
            r.report(
                number_node,
                f"{what}: answer {spelled!r} must be written as a plain number such as 2 "
                "(YAML reads a leading zero as octal, 0x as hexadecimal)",
            )
            return None
        number = _parse_int(spelled)
        if number is None:
            r.report(number_node, f"{what}: answer must be a choice number or a list of them")
            return None
        if choice_count is not None and not 1 <= number <= choice_count:
            r.report(
                number_node,
                f"{what}: answer {number} is out of range; "
                f"choices are numbered 1 to {choice_count}",
            )
            return None
        if number in answer:
            r.report(number_node, f"{what}: answer {number} is listed twice")
            return None
        answer.append(number)
    return tuple(sorted(answer))


def _text_line(node: yaml.Node, value: str, offset: int) -> int:
    """The file line of line `offset` (0-based) of a stripped text read from `node`."""
    line = line_of(node)
    style = getattr(node, "style", None)
    if style in ("|", ">"):
        # a block scalar starts on the line after its indicator; stripped blank lines count too
        raw = str(node.value)
        line += 1 + raw.count("\n", 0, len(raw) - len(raw.lstrip()))
    return line + offset


_PLAIN_NUMBER = re.compile(r"[1-9][0-9]*|0")


def _parse_int(text: str) -> int | None:
    try:
        return int(text.replace("_", ""), 0)
    except ValueError:
        try:
            return int(text.replace("_", ""))
        except ValueError:
            return None
