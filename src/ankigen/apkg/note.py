"""An item as the fields and tags of one Anki note."""

from __future__ import annotations

import functools
import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ankigen.apkg.kept import kept_fields, with_image
from ankigen.bank.model import Bank, Item
from ankigen.core.hashing import content_hash
from ankigen.identity.guid import note_guid
from ankigen.text import l10n
from ankigen.text.html import plain_text
from ankigen.text.markup import rich_html

RETIRED_TAG = "ankigen::retired"


@dataclass(frozen=True)
class NoteContent:
    """What Anki stores for one item; its hash decides whether the note changed."""

    guid: str
    item_id: str
    fields: tuple[str, ...]
    tags: tuple[str, ...]
    kept: bool = False
    """The fields are a kept note type's (`apkg.kept`), which has no item id."""

    @functools.cached_property
    def hash(self) -> str:
        # asked for when the deck is planned and again when a rebuild looks for swaps
        return content_hash(*self.fields, " ".join(self.tags))

    def hash_as(self, item_id: str) -> str:
        """The hash this content would have under another item id: finds renames and swaps."""
        if self.kept:
            return self.hash
        fields = list(self.fields)
        fields[ITEM_ID_FIELD] = item_id
        return content_hash(*fields, " ".join(self.tags))


def choices_html(choices: Sequence[str], answer: tuple[int, ...], whys: Sequence[str] = ()) -> str:
    """The choices field; `choices` and `whys` are already HTML."""
    rows = "".join(
        f'<li data-choice="{number}"{_CORRECT if number in answer else ""}>{choice}'
        f"{_why(whys, number)}</li>"
        for number, choice in enumerate(choices, start=1)
    )
    return f"<ol>{rows}</ol>"


def _why(whys: Sequence[str], number: int) -> str:
    # inside the choice's <li>: the frozen fields have no other place for it
    why = whys[number - 1] if number <= len(whys) else ""
    return f'<div class="ag-why">{why}</div>' if why else ""


_CORRECT = ' data-correct="true"'
ITEM_ID_FIELD = 6


RETIRED_SEARCH = f'<code dir="ltr">tag:{RETIRED_TAG}</code>'


def retired_notice(language: str) -> str:
    """Shown with the question on both sides of a retired card, in the deck's language."""
    words = html.escape(l10n.deck_word(language, "retired")).replace("{search}", RETIRED_SEARCH)
    return f'<div class="ag-retired" data-retired="true" role="note">{words}</div>'


def card_flags(item: Item) -> str:
    """The `Shuffle` field: space-separated flags the card's script reads, `shuffle` and `recall`.

    It held only "shuffle" or "" before `recall` existed; the fields are frozen, so the new
    flag joins it and notes without `recall` keep exactly their old content.
    """
    return " ".join(flag for flag, on in (("shuffle", item.shuffle), ("recall", item.recall)) if on)


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
    choices = [rich_html(choice) for choice in item.choices]
    answer = "<br>".join(choices[number - 1] for number in item.answer)
    question = rich_html(item.question)
    if item.retired:
        question = retired_notice(bank.language) + question
    whys = [rich_html(why) for why in item.whys]
    tags = set(bank.tags) | set(item.tags)
    if item.retired:
        tags.add(RETIRED_TAG)
    guid = guid or note_guid(bank.topic, bank.language, item.id)
    question_image = image_html(images.get("image", ""), item.image_alt)
    explanation_image = image_html(images.get("explanation_image", ""), item.explanation_image_alt)
    if bank.anki_notetype is not None:
        kept = kept_fields(
            bank.anki_notetype,
            with_image(question, question_image),
            tuple((choice, _why(whys, n)) for n, choice in enumerate(choices, start=1)),
            item.answer,
            with_image(rich_html(item.explanation), explanation_image),
            item.anki_fields,
        )
        return NoteContent(guid, item.id, kept, tuple(sorted(tags)), kept=True)
    fields = (
        question,
        choices_html(choices, item.answer, whys),
        answer,
        rich_html(item.explanation),
        " ".join(str(number) for number in item.answer),
        card_flags(item),
        item.id,
        bank.language,
        bank.direction,
        question_image,
        explanation_image,
    )
    return NoteContent(
        guid=guid,
        item_id=item.id,
        fields=fields,
        tags=tuple(sorted(tags)),
    )
