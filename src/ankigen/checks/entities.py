"""Texts whose meaning the bank format's three entities changed.

Author text showed every `&` as written until `&lt;`, `&gt;` and `&amp;` became
entities for `<`, `>` and `&` (`text.html`, so that a text can show a tag's name): a
bank written before shows `&lt;`, `&gt;` and `&amp;` as the characters they name now,
where it showed them as written. Exactly the texts that hold one of the three where
it is rendered as text, outside code blocks, show otherwise than they did: each is
pointed at once, with how to write it to show what it showed before.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ankigen.bank.model import Bank, Item
from ankigen.core.errors import Diagnostic
from ankigen.text import markup

# as `text.html` reads them, in the text as written: case counts, and the `;` too
_ENTITY = re.compile(r"&(lt|gt|amp);")
_SHOWN = {"lt": "<", "gt": ">", "amp": "&"}
# what a message quotes: the first entity and what follows it up to a space, a tag or
# another `&` that is no entity (a word such as `&amp;nbsp;` or `&lt;br&gt;`), bounded
_RUN = re.compile(r"&(?:lt|gt|amp);(?:&(?:lt|gt|amp);|[^\s&<]){0,32}")
# the `&` of an entity: written `&amp;`, the text shows the entity as written
_ENTITY_START = re.compile(r"&(?=(?:lt|gt|amp);)")

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
    """A warning for each text the three entities show otherwise than it showed before."""
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
    if _ENTITY.search("\0".join(parts)) is None:
        return
    for text, place in _texts(bank):
        if "&" not in text:
            continue
        shown = _as_text(text, place[3])
        if _ENTITY.search(shown) is not None:
            line, label = _where(bank, place)
            yield Diagnostic(bank.path, line, "warning", f"{label}: {_explained(shown)}")


def _explained(text: str) -> str:
    """What the text's first entity shows now, and how to write it to show it as before."""
    found = _RUN.search(text)
    assert found is not None  # the text holds an entity
    run = found[0]
    now = _ENTITY.sub(lambda entity: _SHOWN[entity[1]], run)
    kept = _ENTITY_START.sub("&amp;", run)
    more = len(_ENTITY.findall(text)) - len(_ENTITY.findall(run))
    return (
        f"{run!r} shows {now!r} since &lt;, &gt; and &amp; became entities; to show "
        f"{run!r} as before, write {kept!r}" + (f" (and {more} more in this text)" if more else "")
    )
