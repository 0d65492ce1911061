"""One bank's own checks beyond its schema: former ids, bidirectional controls, duplicate
questions, untranslated text, placeholders, answer-position bias, missing alt text; and
the memo of its previous check (`Before`) that lets an edit recheck only what changed."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from ankigen.bank.files import Source
from ankigen.bank.model import Bank, Item, Parity, ParityRow
from ankigen.bank.reader import parse_bank, readable_part
from ankigen.bank.values import lookalike_key
from ankigen.checks import reference_texts
from ankigen.checks.entities import changed_entities
from ankigen.checks.translation import (
    _untranslated_prefix,
    untranslated,
)
from ankigen.core.errors import Diagnostic
from ankigen.text import l10n, markup

PLACEHOLDER = re.compile(
    r"_AIU_PROTECTED_\w*|__[A-Z][A-Z0-9_]*__|\{\{\s*\w*\s*\}\}|\{\d+\}|%\(\w+\)[sd]|%[sd]\b"
    r"|\$\{\w+\}|\[\[\w+\]\]|<x\s+id=|\uFFFD"
)


# what every match of PLACEHOLDER holds: texts without any have none, even once their
# code and math are taken out (`text.markup.prose` only removes, and puts a space between)
_PLACEHOLDER_NEEDLES = ("_AIU_PROTECTED_", "__", "{", "%", "[[", "<x", "\ufffd")


BIAS_MIN_ITEMS = 4


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


def _has_errors(found: Iterable[Diagnostic]) -> bool:
    return any(d.severity == "error" for d in found)


def load_and_check(
    source: Source, sources: tuple[str, ...] = ("en",), before: Before | None = None
) -> tuple[Bank | None, list[Diagnostic]]:
    """One bank with the problems found in it alone (runs in a worker process). A bank
    with errors is None, but what reads well of it is checked too: an error in one item
    hides no warning about the others."""
    bank, found = parse_bank(source.shown, source.data, before.items if before else ())
    if bank is not None:
        found.extend(check_bank(bank, sources, before))
        return bank, found
    part = readable_part(source.shown, source.data)
    if part is not None:
        every_item = part.listed is not None and len(part.listed) == len(part.bank.items)
        found.extend(check_bank(part.bank, sources, whole=every_item))
    return None, found


def check_bank(
    bank: Bank, sources: tuple[str, ...] = ("en",), before: Before | None = None, whole: bool = True
) -> Iterable[Diagnostic]:
    """`whole`: the bank has all its items (see `content_checks`)."""
    yield from content_checks(bank, whole)
    said = before.untranslated if before and before.language == bank.language else None
    yield from untranslated(bank, sources, said, _reference_if_needed(bank, sources, said))
    yield from changed_entities(bank)


def _reference_if_needed(
    bank: Bank, sources: tuple[str, ...], said: dict[int, str] | None
) -> reference_texts.Texts | None:
    """The reference's texts of the items whose verdict is not known from the last check
    (a build with nothing new to judge reads no other file)."""
    said = said or {}
    ids = [item.id for item in bank.items if not (item.seal and item.seal in said)]
    return reference_texts.beside(bank, sources, ids) if ids else None


def content_checks(bank: Bank, whole: bool = True) -> Iterator[Diagnostic]:
    """The checks of a bank alone that need no idea of its language (for imports too).
    Not `whole` (some items in error), the checks that need every item are left out."""
    yield from former_ids_taken(bank)
    yield from bidi_controls(bank)
    yield from duplicate_questions(bank)
    yield from placeholders(bank)
    if whole:
        yield from position_bias(bank)
    yield from missing_alt_text(bank)


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
    # a true/false item keeps true first, as imports write it: its answer is no position
    true_false = set(l10n.true_false(bank.language))
    fixed = [i for i in fixed if set(i.choices) != true_false]
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
