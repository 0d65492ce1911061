"""The fast paths of reading a bank: an item laid out plainly, or as ankigen writes it,
read from its text without YAML nodes (`read_plain_item`, `read_text_item`); and the seal
that lets the next build reuse an item as it was read (`item_seal`)."""

from __future__ import annotations

import dataclasses
import hashlib
import marshal
import operator
import re

import yaml

from ankigen.bank import yamltree
from ankigen.bank.keys import REQUIRED_ITEM_KEYS
from ankigen.bank.model import (
    MAX_CHOICES,
    MAX_ID,
    MAX_LONG_TEXT,
    MAX_SHORT_TEXT,
    MIN_CHOICES,
    SLUG,
    Item,
)
from ankigen.bank.values import (
    NULL_SPELLINGS,
    PLAIN_NUMBER,
    lookalike_key,
    shared_keys,
    uncarried,
    visually_empty,
)

_PLAIN_ITEM_KEYS = frozenset(REQUIRED_ITEM_KEYS)


_CHOICE_KEYS = tuple(f"choice {number}" for number in range(1, MAX_CHOICES + 1))


def _plain_value(value: str, limit: int) -> str | None:
    """A scalar's value as `Reader.rich_text` accepts it without a word, else None."""
    if value in NULL_SPELLINGS:
        return None
    value = value.strip()
    if not value or len(value) > limit or "`" in value or "\\" in value:
        return None
    if visually_empty(value) or uncarried(value):
        return None
    return value


def read_plain_item(
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
        or not PLAIN_NUMBER.fullmatch(raw_answer)
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


def read_text_item(text: str, line: int, defaults: tuple[bool, bool], chunk: int) -> Item | None:
    """The item `read_plain_item` reads from the node libyaml composes of `text` (an
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
