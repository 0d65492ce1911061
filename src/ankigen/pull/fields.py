"""A note's fields, as Anki holds them, read back into the texts of the item they came from.

The inverse of `apkg.note.note_content` for what an author can fix in Anki's editor: the
question, each choice and its `why`, the explanation, and the images' alt text. A field
that is still exactly what the bank's text makes gives that text back as it is written;
only a changed one is read, by the same reducer the importers use
(`formats.htmltext`): `<div>` and block ends become line breaks, `<strong>` becomes
`<b>`, styles and spans go and their text stays, `&nbsp;` (the editor's way to keep a
space) becomes a space (a no-break space where the bank's text has them), and text
that looks like a tag stays text. What a bank text cannot carry (an image, a link, a
list, another answer) is reported, never dropped silently. Code blocks keep the
language the bank gave them.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from html.parser import HTMLParser

from ankigen.apkg.kept import correct_choices, split_image
from ankigen.apkg.note import choices_html, image_html, retired_notice
from ankigen.bank.model import Bank, Item, KeptNotetype
from ankigen.formats.htmltext import Converted, html_to_text
from ankigen.text.html import literal
from ankigen.text.markup import FENCE, FENCE_LINE, rich_html, segments


@dataclass(frozen=True)
class Read:
    """The texts of one note that differ from the bank's, by their PO context
    (`ITEM|question`, `ITEM|choice 2`, `ITEM|why 2`, ...), and what could not be carried."""

    texts: dict[str, str] = field(default_factory=dict)
    lost: tuple[str, ...] = ()


def text_of(markup: str, now: str) -> tuple[str, list[str]]:
    """The bank text for a field's HTML, whose bank text is `now`; and what it lost."""
    if markup == rich_html(now):
        return now, []
    # `&nbsp;` is how Anki's editor keeps a second space or a last one, and how a bank's
    # own no-break space (French typography: "réseau :") reaches the field: the bank
    # text before says which
    markup = markup.replace("&nbsp;", "\u00a0" if "\u00a0" in now else " ")
    # a line break next to a code block is a blank line the bank wrote there, which the
    # reducer would take for the space around a block; a line of spaces between two
    # such breaks stays as the bank wrote it
    markup = _BREAK_BY_CODE.sub(lambda m: m[0].replace("<br>", _KEPT_BREAK), markup)
    converted = html_to_text(markup)
    text = converted.text.replace(_KEPT_BREAK, "\n")
    return _with_languages(text, now), _losses(converted)


_KEPT_BREAK = "\x02"
_BREAK_BY_CODE = re.compile(r'(?<=</pre></div>)(?:\s*<br>)+|(?:<br>\s*)+(?=<div class="ag-code">)')


def _losses(converted: Converted) -> list[str]:
    lost = converted.losses()
    lost += [link.lost() for link in converted.links]
    lost += [
        f"an image ({image.src!r}) in this text is lost: a bank text holds no images "
        "(an item has `image:` and `explanation_image:`)"
        for image in converted.images
    ]
    return lost


def _with_languages(text: str, now: str) -> str:
    """Each code block with the language of the bank's block in its place: the card's
    HTML does not name it."""
    if FENCE not in text:
        return text
    languages = iter([s.language for s in segments(now) if s.language is not None])
    lines = text.split("\n")
    opened = ""  # the backticks of the block the line is in
    for number, line in enumerate(lines):
        fence = FENCE_LINE.match(line)
        if fence is None:
            continue
        if not opened:
            opened = fence[1]
            language = next(languages, None)
            if language is not None:  # else a block the bank did not have
                lines[number] = fence[1] + language
        elif not fence[2] and len(fence[1]) >= len(opened):
            opened = ""
    return "\n".join(lines)


@dataclass
class _Choice:
    number: str = ""
    correct: bool = False
    text: list[str] = field(default_factory=list)
    why: list[str] = field(default_factory=list)


class _Choices(HTMLParser):
    """The choices field, `<ol><li data-choice="N" data-correct="true">TEXT<div
    class="ag-why">WHY</div></li>...</ol>`, split into each choice's HTML and why's HTML,
    both as written."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.choices: list[_Choice] = []
        self.outside = False  # anything but white space around the choices
        self._depth = 0  # elements open inside the current choice
        self._why = 0  # the depth at which its why opened (0: not in it)

    def _raw(self, markup: str) -> None:
        if not self.choices or not self._depth:
            self.outside = self.outside or bool(markup.strip())
            return
        choice = self.choices[-1]
        (choice.why if self._why else choice.text).append(markup)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "ol" and not self._depth:
            return
        if tag == "li" and not self._depth:
            self.choices.append(
                _Choice(values.get("data-choice") or "", values.get("data-correct") == "true")
            )
            self._depth = 1
            return
        classes = (values.get("class") or "").split()
        if self._depth and not self._why and tag == "div" and "ag-why" in classes:
            self._depth += 1
            self._why = self._depth
            return
        self._raw(self.get_starttag_text() or "")
        if self._depth and tag not in _VOID:
            self._depth += 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._raw(self.get_starttag_text() or "")

    def handle_endtag(self, tag: str) -> None:
        if not self._depth:
            if tag not in ("ol", "li"):
                self.outside = True
            return
        if self._why and self._depth == self._why and tag == "div":
            self._why = 0
            self._depth -= 1
            return
        if self._depth == 1 and tag == "li":
            self._depth = 0
            return
        if tag in _VOID:
            return
        self._depth = max(1, self._depth - 1)
        self._raw(f"</{tag}>")

    def handle_data(self, data: str) -> None:
        self._raw(data)

    def handle_entityref(self, name: str) -> None:
        self._raw(f"&{name};")

    def handle_charref(self, name: str) -> None:
        self._raw(f"&#{name};")


_Take = Callable[[str, str, str, str], None]
"""Read one text: its context, its HTML in the note, its bank text now, and its name."""

_VOID = frozenset("br img hr wbr input meta link source area col embed track".split())


def read_note(bank: Bank, item: Item, fields: dict[str, str], images: dict[str, str]) -> Read:
    """What the note's fields (its Choices without the card's version, `card_version`) say
    that the item does not; `images` maps "image" and "explanation_image" to the media
    file names the build gave the item's images."""
    texts: dict[str, str] = {}
    lost: list[str] = []

    def take(context: str, markup: str, now: str, what: str) -> None:
        text, losses = text_of(markup, now)
        lost.extend(f"{what}: {loss}" for loss in losses)
        if text != now:
            texts[f"{item.id}|{context}"] = text

    question = fields.get("Question", "")
    notice = retired_notice(bank.language) if item.retired else ""
    if notice and question.startswith(notice):
        question = question[len(notice) :]
    take("question", question, item.question, "the question")
    take("explanation", fields.get("Explanation", ""), item.explanation, "the explanation")
    _read_choices(item, fields.get("Choices", ""), take, lost)
    for key, name in (("image", "Image"), ("explanation_image", "ExplanationImage")):
        _read_image(item, key, fields.get(name, ""), images.get(key, ""), texts, lost)
    return Read(texts, tuple(lost))


def field_texts(fields: dict[str, str], notice: str = "") -> dict[str, str]:
    """The HTML of each text in a note's fields (by ankigen's names, as `read_note` takes
    them), by the last part of its context (`question`, `choice 2`, `why 2`, ...), the
    images' tags standing for their alt texts; `notice`: a retired card's, left out."""
    question = fields.get("Question", "")
    if notice and question.startswith(notice):
        question = question[len(notice) :]
    out = {"question": question, "explanation": fields.get("Explanation", "")}
    parser = _Choices()
    parser.feed(fields.get("Choices", ""))
    parser.close()
    for number, choice in enumerate(parser.choices, start=1):
        out[f"choice {number}"] = "".join(choice.text)
        out[f"why {number}"] = "".join(choice.why)
    out["image_alt"] = fields.get("Image", "")
    out["explanation_image_alt"] = fields.get("ExplanationImage", "")
    return out


def _read_choices(item: Item, markup: str, take: _Take, lost: list[str]) -> None:
    parser = _Choices()
    parser.feed(markup)
    parser.close()
    found = parser.choices
    numbers = [c.number for c in found]
    if numbers != [str(n) for n in range(1, len(item.choices) + 1)] or parser.outside:
        lost.append(
            f"the choices: {len(found)} choices, numbered {', '.join(numbers) or 'none'}, "
            f"where the item has {len(item.choices)}: choices added, removed or reordered in "
            "Anki are not carried back; change them in the bank"
        )
        return
    correct = tuple(n for n, c in enumerate(found, start=1) if c.correct)
    if correct != tuple(item.answer):
        lost.append(
            f"the answer: Anki marks choice(s) {', '.join(map(str, correct)) or 'none'} correct, "
            f"the bank {', '.join(map(str, item.answer))}: the answer is not carried back; "
            "change `answer:` in the bank"
        )
    for number, choice in enumerate(found, start=1):
        take(f"choice {number}", "".join(choice.text), item.choices[number - 1], f"choice {number}")
        take(f"why {number}", "".join(choice.why), item.why(number), f"the why of choice {number}")


_IMAGE = re.compile(r'^<img src="([^"]*)" alt="([^"]*)">$')


def _read_image(
    item: Item, key: str, markup: str, name: str, texts: dict[str, str], lost: list[str]
) -> None:
    alt_key = f"{key}_alt"
    now = getattr(item, alt_key)
    if markup == image_html(name, now):
        return
    found = _IMAGE.match(markup.strip())
    if found is None or html.unescape(found[1]) != name:
        lost.append(
            f"the {key.replace('_', ' ')}: changed or replaced in Anki ({markup[:80]!r}); "
            f"an image is not carried back: change `{key}:` in the bank"
        )
        return
    alt = literal(html.unescape(found[2]))
    if alt != now:
        texts[f"{item.id}|{alt_key}"] = alt


def ankigen_fields(kept: KeptNotetype, values: dict[str, str]) -> dict[str, str]:
    """A kept note's fields (by name) as ankigen's own note type names and lays them out,
    for `read_note`: the inverse of `apkg.kept.kept_fields`. What the kept fields cannot
    say (the flags, the language) is left out."""
    question, image = split_image(values.get(kept.question, ""))
    explanation, explanation_image = split_image(values.get(kept.explanation, ""))
    choices = [values.get(name, "") for name in kept.choices]
    while choices and not choices[-1]:
        choices.pop()
    correct = correct_choices(kept.answer_format, values.get(kept.answer, ""), choices)
    return {
        "Question": question,
        "Choices": choices_html(choices, tuple(sorted(correct))),  # each with its why
        "Explanation": explanation,
        "Image": image,
        "ExplanationImage": explanation_image,
    }
