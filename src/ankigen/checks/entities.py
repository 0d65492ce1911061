"""Texts whose meaning changed when `&amp;` became the entity for `&`.

Author text showed every `&` as written until `&lt;`, `&gt;` and `&amp;` became
entities for `<`, `>` and `&` (`text.html`, so that a text can show a tag's name). A
bank written before that and meant to show an entity's source, `&amp;nbsp;` or
`Q&amp;A`, now shows `&nbsp;` or `Q&A`. Those texts are pointed at, each once, with how
to write it to show what it showed before: `&amp;` followed by a letter, but not by
`lt;`, `gt;` or `amp;`, where it is rendered as text (outside code blocks). `&lt;`,
`&gt;`, `&amp;lt;` and the like are how the format writes a tag's name or an entity now,
and importers write them: warning of them would never end.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ankigen.bank.model import Bank, Item
from ankigen.core.errors import Diagnostic
from ankigen.text import markup

# as `text.html` reads it, in the text as written: case counts, and the `;` too
_CHANGED = re.compile(r"&amp;(?!(?:lt|gt|amp);)[A-Za-z]")
# what a message quotes: the entity and the word after it (`&amp;nbsp;`, `&amp;A`)
_RUN = re.compile(r"&amp;[A-Za-z][A-Za-z0-9]{0,31};?")

# where a text is: the item (None for the bank's settings), the key and the choice's
# number, resolved to a line and a label only for a text warned of (see `_where`); and
# whether the text may hold code blocks (an item's texts, not its image descriptions)
_Place = tuple[Item | None, str, int, bool]


def _texts(bank: Bank) -> Iterator[tuple[str, _Place]]:
    """Every text of a bank that a card or a deck's description shows."""
    for key in ("title", "description", "level", "source", "license", "deck"):
        yield getattr(bank, key), (None, key, 0, False)
    for item in bank.items:
        yield item.question, (item, "question", 0, True)
        for n, choice in enumerate(item.choices, start=1):
            yield choice, (item, "choice", n, True)
        for n, why in enumerate(item.whys, start=1):
            yield why, (item, "why", n, True)
        yield item.explanation, (item, "explanation", 0, True)
        yield item.image_alt, (item, "image_alt", 0, False)
        yield item.explanation_image_alt, (item, "explanation_image_alt", 0, False)


def _where(bank: Bank, place: _Place) -> tuple[int, str]:
    item, key, number, _ = place
    if item is None:
        return bank.lines.get(key, 1), key
    line = item.line_at(f"choice {number}" if number else key)
    return line, f"item {item.id!r}: {key}" + (f" {number}" if number else "")


def _as_text(text: str, rich: bool) -> str:
    """The parts of a text read for entities: all but its code blocks (`markup.rich_html`)."""
    if not rich or markup.FENCE not in text:
        return text
    return "\n".join(s.text for s in markup.segments(text) if s.language is None)


def changed_entities(bank: Bank) -> Iterator[Diagnostic]:
    """A warning for each text with an `&amp;` that most likely meant the five characters."""
    # most banks hold none: all their texts are tried at once first, joined by NUL (which
    # makes no entity), and only a bank that has one is walked text by text (0.01 s at
    # 10,000 items, where walking every text with its line took 0.27 s)
    parts = [bank.title, bank.description, bank.level, bank.source, bank.license, bank.deck]
    for item in bank.items:
        parts.append(item.question)
        parts.extend(item.choices)
        parts.extend(item.whys)
        parts.append(item.explanation)
        parts.append(item.image_alt)
        parts.append(item.explanation_image_alt)
    if _CHANGED.search("\0".join(parts)) is None:
        return
    for text, place in _texts(bank):
        if "&" not in text:
            continue
        shown = _as_text(text, place[3])
        if _CHANGED.search(shown) is not None:
            line, label = _where(bank, place)
            yield Diagnostic(bank.path, line, "warning", f"{label}: {_explained(shown)}")


def _explained(text: str) -> str:
    """What the text's first changed `&amp;` shows now, and how to write it as before."""
    found = _RUN.search(text)
    assert found is not None  # the text holds one
    run = found[0]
    now, kept = run.replace("&amp;", "&", 1), run.replace("&amp;", "&amp;amp;", 1)
    more = len(_CHANGED.findall(text)) - 1
    return (
        f"{run!r} shows {now!r} since &amp; became the entity for &; to show {run!r} as "
        f"before, write {kept!r}" + (f" (and {more} more in this text)" if more else "")
    )
