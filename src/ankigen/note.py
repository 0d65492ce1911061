"""An item as the fields and tags of one Anki note."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ankigen import identity, ids, l10n
from ankigen.bank import Bank, Item
from ankigen.html import inline_html, plain_text

RETIRED_TAG = "ankigen::retired"


@dataclass(frozen=True)
class NoteContent:
    """What Anki stores for one item; its hash decides whether the note changed."""

    guid: str
    item_id: str
    fields: tuple[str, ...]
    tags: tuple[str, ...]

    @property
    def hash(self) -> str:
        return ids.content_hash(*self.fields, " ".join(self.tags))

    def hash_as(self, item_id: str) -> str:
        """The hash this content would have under another item id: finds renames and swaps."""
        fields = list(self.fields)
        fields[ITEM_ID_FIELD] = item_id
        return ids.content_hash(*fields, " ".join(self.tags))


def choices_html(choices: Sequence[str], answer: tuple[int, ...]) -> str:
    """The choices field; `choices` is already HTML."""
    rows = "".join(
        f'<li data-choice="{number}"{_CORRECT if number in answer else ""}>{choice}</li>'
        for number, choice in enumerate(choices, start=1)
    )
    return f"<ol>{rows}</ol>"


_CORRECT = ' data-correct="true"'
ITEM_ID_FIELD = 6


RETIRED_SEARCH = f'<code dir="ltr">tag:{RETIRED_TAG}</code>'


def retired_notice(language: str) -> str:
    """Shown with the question on both sides of a retired card, in the deck's language."""
    words = html.escape(l10n.deck_word(language, "retired")).replace("{search}", RETIRED_SEARCH)
    return f'<div class="ag-retired" data-retired="true" role="note">{words}</div>'


def image_html(name: str, alt: str) -> str:
    if not name:
        return ""
    return f'<img src="{html.escape(name)}" alt="{html.escape(plain_text(alt))}">'


def note_content(
    bank: Bank, item: Item, images: Mapping[str, str] | None = None, guid: str | None = None
) -> NoteContent:
    """The note for an item; `images` maps "image"/"explanation_image" to media file names.

    `guid` is the one identity resolved for the item (renames keep the oldest);
    without it, the GUID of the item's current names.
    """
    images = images or {}
    choices = [inline_html(choice) for choice in item.choices]
    answer = "<br>".join(choices[number - 1] for number in item.answer)
    question = inline_html(item.question)
    if item.retired:
        question = retired_notice(bank.language) + question
    fields = (
        question,
        choices_html(choices, item.answer),
        answer,
        inline_html(item.explanation),
        " ".join(str(number) for number in item.answer),
        "shuffle" if item.shuffle else "",
        item.id,
        bank.language,
        bank.direction,
        image_html(images.get("image", ""), item.image_alt),
        image_html(images.get("explanation_image", ""), item.explanation_image_alt),
    )
    tags = set(bank.tags) | set(item.tags)
    if item.retired:
        tags.add(RETIRED_TAG)
    return NoteContent(
        guid=guid or identity.note_guid(bank.topic, bank.language, item.id),
        item_id=item.id,
        fields=fields,
        tags=tuple(sorted(tags)),
    )
