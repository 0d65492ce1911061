"""A bank's `anki_notetype:`: the note type of an adopted deck, kept so that its learners'
notes stay where they are (`KeptNotetype`). `ankigen import --from apkg` writes it; an
author rarely edits it, but a wrong one would break every learner's cards, so each of
its problems is reported at its line."""

from __future__ import annotations

from collections.abc import Sequence

import yaml

from ankigen.bank.model import ANSWER_FORMATS, MAX_CHOICES, MIN_CHOICES, Item, KeptNotetype
from ankigen.bank.values import Reader
from ankigen.core.times import EARLIEST

KEYS = (
    "id",
    "name",
    "fields",
    "template",
    "question",
    "choices",
    "answer",
    "answer_format",
    "explanation",
    "kind",
    "adopted",
)
_REQUIRED = ("id", "name", "fields", "template", "question", "choices", "answer", "answer_format")
_ROLES = ("question", "answer", "explanation", "kind")
_FORBIDDEN = set(':{}"')
MAX_FIELDS = 100
"""More than any multiple-choice note type has: a bound on the card templates made."""


def field_name_problem(name: str) -> str | None:
    """Why Anki would not keep `name` as a field that a template can name, if it would not
    (rslib's `NoteField::fix_name`)."""
    if name != name.strip() or not name:
        return "has spaces around it"
    if _FORBIDDEN & set(name) or name[0] in "#/^":
        return 'holds : { } or ", or starts with # / ^'
    return None


def read_kept(r: Reader, node: yaml.Node) -> KeptNotetype | None:
    keys = r.mapping(node, KEYS, "anki_notetype")
    if keys is None:
        return None
    missing = [key for key in _REQUIRED if key not in keys]
    if missing:
        r.report(node, f"anki_notetype: missing {', '.join(missing)}")
        return None
    numbers = {key: _number(r, keys[key], key) for key in ("id", "adopted") if key in keys}
    texts = {
        key: r.text(keys[key], f"anki_notetype: {key}", required=key not in ("explanation", "kind"))
        for key in ("name", "template", "answer_format", *_ROLES)
        if key in keys
    }
    fields = _names(r, keys["fields"], "fields")
    choices = _names(r, keys["choices"], "choices")
    if fields is None or choices is None or None in numbers.values() or None in texts.values():
        return None
    ok = True
    if texts["answer_format"] not in ANSWER_FORMATS:
        r.report(keys["answer_format"], f"anki_notetype: answer_format is one of {ANSWER_FORMATS}")
        ok = False
    if not MIN_CHOICES <= len(choices) <= MAX_CHOICES:
        r.report(keys["choices"], f"anki_notetype: {MIN_CHOICES} to {MAX_CHOICES} choice fields")
        ok = False
    used: list[str] = []
    for role, names in (("choices", choices), *((k, (texts.get(k) or "",)) for k in _ROLES)):
        for name in filter(None, names):
            if name not in fields:
                r.report(keys[role], f"anki_notetype: {role}: {name!r} is not one of its fields")
                ok = False
            elif name in used:
                r.report(keys[role], f"anki_notetype: {role}: {name!r} already holds another part")
                ok = False
            used.append(name)
    if not ok:
        return None
    return KeptNotetype(
        id=numbers["id"] or 0,
        name=texts["name"] or "",
        fields=fields,
        template=texts["template"] or "",
        question=texts["question"] or "",
        choices=choices,
        answer=texts["answer"] or "",
        answer_format=texts["answer_format"] or "",
        explanation=texts.get("explanation") or "",
        kind=texts.get("kind") or "",
        adopted=numbers.get("adopted") or 0,
    )


def _number(r: Reader, node: yaml.Node, key: str) -> int | None:
    text = r.text(node, f"anki_notetype: {key}")
    if text is None or not text.isascii() or not text.isdigit() or not 0 < int(text) < 2**63:
        if text is not None:
            r.report(node, f"anki_notetype: {key} is a positive whole number")
        return None
    if key == "adopted" and int(text) < EARLIEST:
        r.report(node, f"anki_notetype: adopted is {text}, before 2001: not a real time")
        return None
    return int(text)


def _names(r: Reader, node: yaml.Node, key: str) -> tuple[str, ...] | None:
    if not isinstance(node, yaml.SequenceNode) or not node.value:
        r.report(node, f"anki_notetype: {key} is a list of field names")
        return None
    if len(node.value) > MAX_FIELDS:
        r.report(
            node, f"anki_notetype: {len(node.value)} {key}; a note type has at most {MAX_FIELDS}"
        )
        return None
    names: list[str] = []
    for name_node in node.value:
        name = r.text(name_node, f"anki_notetype: {key}")
        if name is None:
            return None
        problem = field_name_problem(name)
        if problem or name in names:
            r.report(name_node, f"anki_notetype: {key}: {name!r} " + (problem or "is listed twice"))
            return None
        names.append(name)
    return tuple(names)


def check_items(r: Reader, kept: KeptNotetype, items: Sequence[Item]) -> None:
    """What an item holds that the kept note type has no field for."""
    for item in items:
        if len(item.choices) > len(kept.choices):
            r.report(
                item.line_at("choices"),
                f"item {item.id!r} has {len(item.choices)} choices; the kept note type "
                f"{kept.name!r} has {len(kept.choices)} choice fields",
            )
        if kept.answer_format == "text" and len(item.answer) > 1:
            r.report(
                item.line_at("answer"),
                f"item {item.id!r} has several answers; the kept note type's {kept.answer!r} "
                "holds one correct choice's text",
            )
