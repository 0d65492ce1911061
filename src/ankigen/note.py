"""An item as the fields and tags of one Anki note."""

from __future__ import annotations

from dataclasses import dataclass

from ankigen import ids
from ankigen.bank import Bank, Item
from ankigen.html import inline_html

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


def choices_html(choices: tuple[str, ...], answer: tuple[int, ...]) -> str:
    rows = "".join(
        f'<li data-choice="{number}" data-correct="{str(number in answer).lower()}">'
        f"{inline_html(choice)}</li>"
        for number, choice in enumerate(choices, start=1)
    )
    return f'<ol class="ag-choice-list">{rows}</ol>'


def note_content(bank: Bank, item: Item) -> NoteContent:
    answer = "<br>".join(inline_html(item.choices[number - 1]) for number in item.answer)
    fields = (
        inline_html(item.question),
        choices_html(item.choices, item.answer),
        answer,
        inline_html(item.explanation),
        " ".join(str(number) for number in item.answer),
        "shuffle" if item.shuffle else "",
        item.id,
        bank.language,
        bank.direction,
        "",
        "",
    )
    tags = set(bank.tags) | set(item.tags)
    if item.retired:
        tags.add(RETIRED_TAG)
    return NoteContent(
        guid=ids.note_guid(bank.topic, bank.language, item.id),
        item_id=item.id,
        fields=fields,
        tags=tuple(sorted(tags)),
    )
