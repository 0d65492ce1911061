"""The keys of a bank and of the project file, declared once: each key's name, whether it
is required, what its value is (as a JSON Schema fragment built from the model's own
limits and patterns), a description and examples. The readers take their key lists and
limits from here (`bank.reader`, `bank.values`, `bank.kept`, `bank.project`), and
`bank.schema` generates the JSON Schemas an editor validates with from the same table,
so the two cannot say different things about which keys exist. This module imports no
YAML."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ankigen.bank.model import (
    ANSWER_FORMATS,
    MAX_CARRIED_TEXT,
    MAX_CHOICES,
    MAX_ID,
    MAX_ITEMS,
    MAX_LONG_TEXT,
    MAX_SHORT_TEXT,
    MAX_TAGS,
    MIN_CHOICES,
    SLUG,
    UNCARRIED_BMP,
)
from ankigen.text import lang

Schema = dict[str, Any]


@dataclass(frozen=True)
class Key:
    """One key of a mapping in a bank or the project file."""

    name: str
    value: Schema
    """What its value may be, as a JSON Schema (draft 2020-12) fragment."""
    description: str
    examples: tuple[object, ...]
    required: bool = False
    limit: int = MAX_SHORT_TEXT
    """The longest text the reader takes, where the value is text."""


def _scalar_text(limit: int, required: bool = True) -> Schema:
    """Text as the reader takes it: any scalar (a number keeps its spelling), stripped
    of white space, within `limit` characters; nothing a card cannot carry."""
    text: Schema = {
        "type": ["string", "number", "boolean"] + ([] if required else ["null"]),
        "maxLength": limit,
        "pattern": _CARRIED,
    }
    if required:
        text["pattern"] = _CARRIED_NONBLANK
    return text


# what `values.uncarried` refuses, but surrogates (JSON text has none) and the other
# planes' noncharacters (an ECMA-262 pattern and Python's spell them differently)
_BAD = UNCARRIED_BMP
_CARRIED = f"^[^{_BAD}]*$"
_CARRIED_NONBLANK = f"^[^{_BAD}]*[^\\s{_BAD}][^{_BAD}]*$"


def _either_case(pattern: str) -> str:
    """A verbose lower-case pattern of `lang`'s as ECMA-262 reads it (an editor's regular
    expressions have no named groups nor `(?i)`), in either case: the reader
    canonicalizes a tag's case."""
    pattern = re.sub(r"\(\?P<\w+>", "(", "".join(pattern.split()))
    pattern = pattern.replace("a-wy-z", "a-wy-zA-WY-Z").replace("-x(", "-[xX](")
    return re.sub(r"a-z(?!A)", "a-zA-Z", pattern)


SLUG_SCHEMA: Schema = {
    "anyOf": [
        {"type": "string", "pattern": f"^{SLUG.pattern}$", "maxLength": MAX_ID},
        # the reader takes a number as it is spelled, and digits make a slug
        {"type": "integer", "minimum": 0},
    ]
}
LANGUAGE_TAG: Schema = {
    "type": "string",
    "pattern": "^" + _either_case(lang.TAG_PATTERN) + "$",
    "maxLength": lang.MAX_TAG_LENGTH,
}
TAG: Schema = {"type": ["string", "number", "boolean"], "pattern": "^\\S+$", "maxLength": 2000}
TAGS: Schema = {"type": "array", "items": TAG, "maxItems": MAX_TAGS}
FLAG: Schema = {"type": "boolean"}


def _one_or_more(item: Schema) -> Schema:
    return {"anyOf": [item, {"type": "array", "items": item, "minItems": 1, "uniqueItems": True}]}


CHOICE_NUMBER: Schema = {"type": "integer", "minimum": 1, "maximum": MAX_CHOICES}

CHOICE_KEYS = (
    Key(
        "text",
        _scalar_text(MAX_SHORT_TEXT),
        "The choice's text.",
        ("All-reduce",),
        required=True,
    ),
    Key(
        "why",
        _scalar_text(MAX_SHORT_TEXT, required=False),
        "Why this choice is right or wrong: shown under it on the back of the card.",
        ("Every rank ends with the same sum.",),
    ),
)

FORMERLY_KEYS = (
    Key(
        "topic",
        _one_or_more(SLUG_SCHEMA),
        "The bank's older topic (or topics, oldest first): its notes keep their history.",
        ("old-topic", ["first-name", "second-name"]),
    ),
    Key(
        "language",
        _one_or_more(LANGUAGE_TAG),
        "The bank's older language tag (or tags, oldest first).",
        ("pt", ["iw"]),
    ),
)

MAX_FIELDS = 100
"""More than any multiple-choice note type has: a bound on the card templates made."""
# as Anki keeps a field's name (`kept.field_name_problem`)
FIELD_NAME: Schema = {"type": "string", "pattern": '^(?![#/^\\s])[^:{}"]*(?<!\\s)$', "minLength": 1}

KEPT_KEYS = (
    Key(
        "id",
        {"type": "integer", "minimum": 1, "maximum": 2**63 - 1},
        "The note type's id in Anki.",
        (1700000000123,),
        required=True,
    ),
    Key("name", _scalar_text(MAX_SHORT_TEXT), "Its name in Anki.", ("Multiple Choice",), True),
    Key(
        "fields",
        {"type": "array", "items": FIELD_NAME, "minItems": 1, "maxItems": MAX_FIELDS},
        "Its fields, in Anki's order.",
        (["Question", "A", "B", "Answer", "Explanation"],),
        required=True,
    ),
    Key("template", _scalar_text(MAX_SHORT_TEXT), "Its card template's name.", ("Card 1",), True),
    Key("question", _scalar_text(MAX_SHORT_TEXT), "The field with the question.", ("Q",), True),
    Key(
        "choices",
        {
            "type": "array",
            "items": FIELD_NAME,
            "minItems": MIN_CHOICES,
            "maxItems": MAX_CHOICES,
        },
        "The fields with the choices, in order.",
        (["A", "B", "C", "D"],),
        required=True,
    ),
    Key("answer", _scalar_text(MAX_SHORT_TEXT), "The field with the answer.", ("Answer",), True),
    Key(
        "answer_format",
        {"enum": list(ANSWER_FORMATS)},
        "How the answer field says which choices are correct: `bits` (`1 0 0 1`), "
        "`numbers` (`2`, `1 3`), `letters` (`B`, `A, C`) or `text` (the correct choice's text).",
        ("numbers",),
        required=True,
    ),
    Key(
        "explanation",
        _scalar_text(MAX_SHORT_TEXT, required=False),
        "The field with the explanation, if any.",
        ("Extra",),
    ),
    Key(
        "kind",
        _scalar_text(MAX_SHORT_TEXT, required=False),
        "A field such as the Multiple Choice add-on's QType: 2 for one answer, 1 for several.",
        ("QType",),
    ),
    Key(
        "sort_field",
        _scalar_text(MAX_SHORT_TEXT, required=False),
        "The field Anki's browser sorts by, as the adopted note type had it (default: the "
        "question's): a note type whose sort field changes has every note re-stamped, and "
        "learners' notes would then never take an update.",
        ("Number",),
    ),
    Key(
        "adopted",
        {"type": "integer", "minimum": 1_000_000_000, "maximum": 2**63 - 1},
        "When the deck was adopted (seconds since 1970).",
        (1764547200,),
    ),
)

_IMAGE = _scalar_text(MAX_SHORT_TEXT, required=False)

ITEM_KEYS_TABLE = (
    Key(
        "id",
        SLUG_SCHEMA,
        "The item's id: a slug (a-z, 0-9 and '-'), unique within the bank; the same id in "
        "every language is the same item.",
        ("sharded-state",),
        required=True,
    ),
    Key(
        "question",
        _scalar_text(MAX_LONG_TEXT),
        "The question, as text with a few inline tags (<b> <i> <u> <sub> <sup> <code> <br>).",
        ("Which collective leaves every rank with the sum?",),
        required=True,
        limit=MAX_LONG_TEXT,
    ),
    Key(
        "choices",
        {
            "type": "array",
            "items": {
                "anyOf": [
                    _scalar_text(MAX_SHORT_TEXT),
                    {"$ref": "#/$defs/choice"},
                ]
            },
            "minItems": MIN_CHOICES,
            "maxItems": MAX_CHOICES,
        },
        f"{MIN_CHOICES} to {MAX_CHOICES} choices, in the author's order; each one text, or "
        "a mapping of its `text` and a `why`.",
        (["All-reduce", "Broadcast", {"text": "Scatter", "why": "Each rank gets one part."}],),
        required=True,
    ),
    Key(
        "answer",
        _one_or_more(CHOICE_NUMBER),
        "The 1-based number of the correct choice; a list of numbers when several are correct.",
        (1, [1, 3]),
        required=True,
    ),
    Key(
        "explanation",
        _scalar_text(MAX_LONG_TEXT),
        "Shown on the back of the card.",
        ("All-reduce sums on every rank and leaves each with the result.",),
        required=True,
        limit=MAX_LONG_TEXT,
    ),
    Key("tags", TAGS, "Anki tags for this item, added to the bank's tags.", (["collectives"],)),
    Key(
        "shuffle",
        FLAG,
        "Whether the card shuffles the choices on every review (default: the bank's "
        "`shuffle`); false keeps the author's order, as for 'all of the above'.",
        (False,),
    ),
    Key(
        "retired",
        FLAG,
        "Keep the note, tagged ankigen::retired, so learners can find and remove it.",
        (True,),
    ),
    Key(
        "image",
        _IMAGE,
        "An image shown with the question: a path relative to the media folder.",
        ("diagrams/ring.png",),
    ),
    Key("image_alt", _IMAGE, "What the image shows, for screen readers.", ("A ring of GPUs",)),
    Key(
        "explanation_image",
        _IMAGE,
        "An image shown in the explanation: a path relative to the media folder.",
        ("diagrams/ring-after.png",),
    ),
    Key(
        "explanation_image_alt",
        _IMAGE,
        "What the explanation image shows, for screen readers.",
        ("Every GPU holds the sum",),
    ),
    Key(
        "formerly",
        _one_or_more(SLUG_SCHEMA),
        "Older ids of this item, oldest first: its note keeps the GUID of the oldest.",
        ("old-id", ["first-id", "second-id"]),
    ),
    Key(
        "recall",
        FLAG,
        "The front asks for the answer before it shows the choices (default: the bank's `recall`).",
        (True,),
    ),
    Key(
        "anki_fields",
        {
            "type": "object",
            "additionalProperties": {
                "type": ["string", "number", "boolean", "null"],
                "maxLength": MAX_CARRIED_TEXT,
                "pattern": "^[^\\x00\\x1f]*$",
            },
        },
        "Only in a bank with `anki_notetype`: the adopted note type's other fields, by "
        "name, as the note held them (Anki's HTML).",
        ({"Source": "Chapter 3"},),
    ),
)

BANK_KEYS_TABLE = (
    Key(
        "topic",
        {**SLUG_SCHEMA, "not": {"type": "string", "pattern": "^backup-"}},
        "The topic: a slug (a-z, 0-9 and '-'), the same in every language. Not "
        "`backup-*`, which Anki takes for a collection backup.",
        ("fsdp",),
        required=True,
    ),
    Key(
        "language",
        LANGUAGE_TAG,
        "The bank's language: a BCP 47 tag.",
        ("en", "bn", "pt-BR"),
        required=True,
    ),
    Key(
        "title",
        _scalar_text(MAX_SHORT_TEXT),
        "The deck's title, in this language.",
        ("Fully sharded data parallel",),
        required=True,
    ),
    Key(
        "description",
        _scalar_text(MAX_LONG_TEXT, required=False),
        "Shown in the deck's description in Anki.",
        ("How FSDP shards parameters, gradients and optimizer state.",),
        limit=MAX_LONG_TEXT,
    ),
    Key("level", _scalar_text(MAX_SHORT_TEXT, False), "Free text.", ("intermediate",)),
    Key("tags", TAGS, "Anki tags added to every note of the bank.", (["distributed-training"],)),
    Key(
        "deck",
        {
            **_scalar_text(MAX_SHORT_TEXT, required=False),
            # an empty part around '::', in a deck name that is not empty
            "not": {
                "type": "string",
                "pattern": "\\S",
                "allOf": [{"pattern": "(^|::)\\s*(::|$)"}],
            },
        },
        "The deck's name (default: `TITLE (LANGUAGE)`); `::` makes subdecks.",
        ("Training::FSDP (en)",),
    ),
    Key("shuffle", FLAG, "The default of the items' `shuffle` (default: true).", (False,)),
    Key("source", _scalar_text(MAX_SHORT_TEXT, False), "Where the questions come from.", ("",)),
    Key("license", _scalar_text(MAX_SHORT_TEXT, False), "The content's licence.", ("CC BY 4.0",)),
    Key(
        "formerly",
        {"$ref": "#/$defs/formerly"},
        "The bank's older topic and/or language: its notes keep their history.",
        ({"topic": "old-topic"}, {"language": "pt"}),
    ),
    Key(
        "items",
        {
            "type": "array",
            "items": {"$ref": "#/$defs/item"},
            "minItems": 1,
            "maxItems": MAX_ITEMS,
        },
        "The bank's questions.",
        (
            [
                {
                    "id": "sharded-state",
                    "question": "What does FSDP shard?",
                    "choices": ["Parameters only", "Parameters, gradients and optimizer state"],
                    "answer": 2,
                    "explanation": "All three, across the ranks.",
                }
            ],
        ),
        required=True,
    ),
    Key("recall", FLAG, "The default of the items' `recall` (default: false).", (True,)),
    Key(
        "anki_notetype",
        {"$ref": "#/$defs/anki_notetype"},
        "An adopted deck's own Anki note type, kept so its learners keep their cards "
        "(`ankigen import --from apkg` writes it).",
        (
            {
                "id": 1700000000123,
                "name": "Multiple Choice",
                "fields": ["Q", "A", "B", "Answer"],
                "template": "Card 1",
                "question": "Q",
                "choices": ["A", "B"],
                "answer": "Answer",
                "answer_format": "numbers",
            },
        ),
    ),
)

PLACEHOLDERS = ("title", "topic", "language", "topic_title")
"""What a project's deck template may name."""

PROJECT_KEYS_TABLE = (
    Key(
        "deck",
        {
            "type": "string",
            "pattern": "^(\\{\\{|\\}\\}|\\{(" + "|".join(PLACEHOLDERS) + ")\\}|[^{}])*$",
        },
        "The deck name of every bank, from {title} {topic} {language} {topic_title} "
        "({{ and }} for braces); a bank's own `deck` wins.",
        ("Distributed training::{topic_title}::{title} ({language})",),
    ),
    Key(
        "reference",
        {"anyOf": [LANGUAGE_TAG, {"const": ""}]},
        "The reference language of every topic (default: English where a topic has it).",
        ("en",),
    ),
    Key(
        "tags",
        {"type": "array", "items": {"type": "string", "pattern": "^\\S+$"}},
        "Tags added to every note of every bank.",
        (["distributed-training"],),
    ),
    Key(
        "media",
        {"type": "string", "pattern": "^[^\\x00]*$"},
        "The media folder, relative to the banks folder, inside the project.",
        ("../media",),
    ),
    Key(
        "topics",
        {
            "type": "object",
            "propertyNames": SLUG_SCHEMA,
            "additionalProperties": {"type": "string", "pattern": "\\S"},
        },
        "Display names of topics, for {topic_title}.",
        ({"fsdp": "FSDP"},),
    ),
)


def names(table: tuple[Key, ...]) -> list[str]:
    return [key.name for key in table]


def required(table: tuple[Key, ...]) -> tuple[str, ...]:
    return tuple(key.name for key in table if key.required)


BANK_KEYS = names(BANK_KEYS_TABLE)
REQUIRED_BANK_KEYS = required(BANK_KEYS_TABLE)
ITEM_KEYS = names(ITEM_KEYS_TABLE)
REQUIRED_ITEM_KEYS = required(ITEM_KEYS_TABLE)
BANK_TEXT_LIMITS = {key.name: key.limit for key in BANK_KEYS_TABLE}
ITEM_TEXT_LIMITS = {key.name: key.limit for key in ITEM_KEYS_TABLE}
