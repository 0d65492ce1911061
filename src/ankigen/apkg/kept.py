"""ankigen's card on an adopted deck's own note type (`KeptNotetype`).

Anki's importer updates a note only if the package's note type has the collection's id,
field names and template names; it then replaces the template and CSS when the package's
note type is newer, with no schema change and no full sync. So a kept note type is written
with its id, its fields and its template's name, under a name of its own (the Multiple
Choice add-on rewrites a note type found by its old name), and with ankigen's templates
made to read its fields: the choices from one field each, the answer in the note type's
own words (`.ag-key`, read by the card's script).

The fields keep their old format, so a collection that keeps the old template (its note
type changed there since) still shows every note right.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from functools import cache

from ankigen.apkg.notetype import Templates, kept_script, templates
from ankigen.bank.model import KeptNotetype

NAME_SUFFIX = " · ankigen"


def notetype_name(kept: KeptNotetype) -> str:
    return kept.name if kept.name.endswith(NAME_SUFFIX) else kept.name + NAME_SUFFIX


def kept_fields(
    kept: KeptNotetype,
    question: str,
    choices: tuple[tuple[str, str], ...],
    answer: tuple[int, ...],
    explanation: str,
    carried: Sequence[tuple[str, str]] = (),
) -> tuple[str, ...]:
    """A note's fields in the kept note type's order; `question`, `choices` (each with its
    why's `<div>`, "" if none) and `explanation` are ankigen's HTML, images included.
    The item's `carried` fields (`Item.anki_fields`) are written as they are; any other
    field with no part is left empty: what it held (a title, sources) was read into the
    bank's texts."""
    values = dict.fromkeys(kept.fields, "")
    values.update(carried)  # the bank's reader allows only the unmapped fields' names
    values[kept.question] = question
    for name, (choice, why) in zip(kept.choices, choices, strict=False):
        values[name] = choice + why
    texts = tuple(choice for choice, _ in choices)
    values[kept.answer] = answer_field(kept.answer_format, texts, answer)
    if kept.explanation:
        values[kept.explanation] = explanation
    if kept.kind:
        values[kept.kind] = "1" if len(answer) > 1 else "2"  # the add-on's "mc" and "sc"
    return tuple(values.values())


def answer_field(answer_format: str, choices: tuple[str, ...], answer: tuple[int, ...]) -> str:
    """The answer field as the kept note type's format writes it."""
    if answer_format == "bits":
        return " ".join("1" if n in answer else "0" for n in range(1, len(choices) + 1))
    if answer_format == "numbers":
        return " ".join(map(str, answer))
    if answer_format == "letters":
        return ", ".join(chr(ord("A") + number - 1) for number in answer)
    return choices[answer[0] - 1]


def _field(name: str) -> str:
    return "{{" + name + "}}"


@cache
def kept_templates(kept: KeptNotetype) -> Templates:
    """ankigen's templates, reading the kept note type's fields. A note type is shared by
    every bank that keeps it, so nothing of one bank is in them: the direction comes from
    the text (`dir="auto"`), and the choices keep their order."""
    ours = templates()
    key = (
        f'<div class="ag-key" hidden data-format="{html.escape(kept.answer_format)}">'
        f"{_field(kept.answer)}</div>"
    )
    rows = "".join(
        f'{{{{#{name}}}}}<li data-choice="{n}">{_field(name)}</li>{{{{/{name}}}}}'
        for n, name in enumerate(kept.choices, start=1)
    )
    explanation = _field(kept.explanation) if kept.explanation else ""
    replacements = {
        "{{Question}}": _field(kept.question),
        "{{Choices}}": f"<ol>{rows}</ol>{key}",
        "{{Answer}}": "",
        "{{Explanation}}": explanation,
        "{{Language}}": "",
        "{{Direction}}": "auto",
        "{{ItemId}}": "",
        "{{Shuffle}}": "",
    }

    shim = f"<script>\n{kept_script()}\n</script>\n"

    def made(template: str) -> str:
        out = _IMAGES.sub("", template)  # the images are in the question and explanation
        out = _TOKEN.sub(lambda m: replacements[m[0]], out)
        at = out.index("<script>")  # before card.js, which reads the choices it marks
        out = out[:at] + shim + out[at:]
        left = _ANY_FIELD.findall(out)
        assert set(left) <= set(kept.fields), left  # every field of ours was replaced
        return out

    return Templates(front=made(ours.front), back=made(ours.back), css=ours.css)


_IMAGES = re.compile(r"\{\{#(Image|ExplanationImage)\}\}.*?\{\{/\1\}\}", re.DOTALL)
_TOKEN = re.compile(
    r"\{\{(?:Question|Choices|Answer|Explanation|Language|Direction|ItemId|Shuffle)\}\}"
)
_ANY_FIELD = re.compile(r"\{\{[#/^]?([^}#/^][^}]*)\}\}")


_WITH_IMAGE = re.compile(r'(.*)<div class="ag-image">(<img [^>]*>)</div>$', re.DOTALL)
_TAG = re.compile(r"<[^>]*>")


def with_image(markup: str, image: str) -> str:
    """A question or explanation with its `<img>`, as one field of a kept note type holds
    both (`split_image` takes them apart)."""
    return markup + (f'<div class="ag-image">{image}</div>' if image else "")


def split_image(markup: str) -> tuple[str, str]:
    """The text and the `<img>` of a field made by `with_image`."""
    found = _WITH_IMAGE.match(markup)
    return (found[1], found[2]) if found else (markup, "")


def correct_choices(answer_format: str, value: str, choices: Sequence[str]) -> set[int]:
    """The numbers of the choices an answer field marks correct, as the card's script
    (`kept.js`) reads it: the inverse of `_answer`; `choices` are the choice fields."""
    words = _plain(value)
    tokens = words.replace(",", " ").split()
    if answer_format == "bits":
        return {n for n, bit in enumerate(tokens, start=1) if bit == "1"}
    if answer_format == "numbers":
        return {int(token) for token in tokens if token.isdigit()}
    if answer_format == "letters":
        return {ord(t.upper()) - ord("A") + 1 for t in tokens if len(t) == 1 and t.isalpha()}
    texts = [_plain(choice.split('<div class="ag-why">')[0]) for choice in choices]
    return {n for n, text in enumerate(texts, start=1) if text == words}


def _plain(markup: str) -> str:
    return " ".join(html.unescape(_TAG.sub(" ", markup)).split())
