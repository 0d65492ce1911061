"""A bank's `anki_notetype:`: the note type of an adopted deck, kept so that its learners'
notes stay where they are (`KeptNotetype`). `ankigen import --from apkg` writes it; an
author rarely edits it, but a wrong one would break every learner's cards, so each of
its problems is reported at its line."""

from __future__ import annotations

import re
from collections.abc import Sequence

import yaml

from ankigen.bank import keys as table
from ankigen.bank.keys import KEPT_KEYS, MAX_FIELDS
from ankigen.bank.model import (
    ANSWER_FORMATS,
    MAX_CARRIED_TEXT,
    MAX_CHOICES,
    MIN_CHOICES,
    Item,
    KeptNotetype,
)
from ankigen.bank.values import Reader, is_null
from ankigen.bank.yamltree import line_of
from ankigen.core.times import EARLIEST

KEYS = table.names(KEPT_KEYS)
_REQUIRED = table.required(KEPT_KEYS)
_ROLES = ("question", "answer", "explanation", "kind")
_FORBIDDEN = set(':{}"')


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
        key: r.text(keys[key], f"anki_notetype: {key}", required=key in _REQUIRED)
        for key in ("name", "template", "answer_format", "sort_field", *_ROLES)
        if key in keys
    }
    fields = _names(r, keys["fields"], "fields")
    choices = _names(r, keys["choices"], "choices")
    if fields is None or choices is None or None in numbers.values() or None in texts.values():
        return None
    given = {key: text or "" for key, text in texts.items()}
    if not _parts_fit(r, keys, given, fields, choices):
        return None
    return KeptNotetype(
        id=numbers["id"] or 0,
        name=given["name"],
        fields=fields,
        template=given["template"],
        question=given["question"],
        choices=choices,
        answer=given["answer"],
        answer_format=given["answer_format"],
        explanation=given.get("explanation", ""),
        kind=given.get("kind", ""),
        sort_field=given.get("sort_field", ""),
        adopted=numbers.get("adopted") or 0,
    )


def _parts_fit(
    r: Reader,
    keys: dict[str, yaml.Node],
    texts: dict[str, str],
    fields: tuple[str, ...],
    choices: tuple[str, ...],
) -> bool:
    """Whether the answer format is known, the choice fields are as many as a card can
    have, and each part of the card names one of the fields no other part names; each
    problem reported."""
    ok = True
    if texts["answer_format"] not in ANSWER_FORMATS:
        r.report(keys["answer_format"], f"anki_notetype: answer_format is one of {ANSWER_FORMATS}")
        ok = False
    if not MIN_CHOICES <= len(choices) <= MAX_CHOICES:
        r.report(keys["choices"], f"anki_notetype: {MIN_CHOICES} to {MAX_CHOICES} choice fields")
        ok = False
    sort_field = texts.get("sort_field", "")
    if sort_field and sort_field not in fields:
        r.report(
            keys["sort_field"],
            f"anki_notetype: sort_field: {sort_field!r} is not one of its fields",
        )
        ok = False
    used: list[str] = []
    for role, names in (("choices", choices), *((k, (texts.get(k, ""),)) for k in _ROLES)):
        for name in filter(None, names):
            if name not in fields:
                r.report(keys[role], f"anki_notetype: {role}: {name!r} is not one of its fields")
                ok = False
            elif name in used:
                r.report(keys[role], f"anki_notetype: {role}: {name!r} already holds another part")
                ok = False
            used.append(name)
    return ok


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


# Anki joins a note's fields with U+001F, and SQLite's UTF-8 text has no NUL or
# surrogates: a carried field holds everything but these
_NOT_IN_A_FIELD = re.compile("[\x00\x1f\ud800-\udfff]")


def carried_line(name: str) -> str:
    """The key of `Item.lines` that says where a carried field's value is."""
    return f"anki_fields {name}"


def read_carried(
    r: Reader, node: yaml.Node, what: str, lines: dict[str, int]
) -> tuple[tuple[str, str], ...] | None:
    """An item's `anki_fields:`, field name to value, each value exactly as YAML reads it
    (not stripped: it is Anki's HTML, which ankigen does not own). Whether the names are
    the kept note type's is `check_items`'s to say, once the bank's note type is read."""
    what = f"{what}: anki_fields"
    if not isinstance(node, yaml.MappingNode):
        r.report(node, f"{what} must be a mapping of a note type's field names to their values")
        return None
    found: dict[str, str] = {}
    ok = True
    for key, value in node.value:
        name = str(key.value) if isinstance(key, yaml.ScalarNode) and not is_null(key) else ""
        if not name or name in found:
            said = f"{name!r} is listed twice" if name else "a key is not a field's name"
            r.report(key, f"{what}: {said}")
            ok = False
            continue
        lines[carried_line(name)] = line_of(key)
        text = "" if isinstance(value, yaml.ScalarNode) and is_null(value) else value.value
        bad = _NOT_IN_A_FIELD.search(text) if isinstance(text, str) else None
        if not isinstance(text, str) or bad or len(text) > MAX_CARRIED_TEXT:
            why = (
                "must be text (Anki's HTML, as the note holds it)"
                if not isinstance(text, str)
                else f"holds U+{ord(bad[0]):04X}, which no Anki field holds"
                if bad
                else f"is {len(text)} characters long; the limit is {MAX_CARRIED_TEXT}"
            )
            r.report(value, f"{what}: {name} {why}")
            ok = False
            continue
        found[name] = text
    return tuple(found.items()) if ok else None


def check_uncarried(r: Reader, items: Sequence[Item]) -> None:
    """Items that carry fields in a bank that keeps no note type to carry them in."""
    for item in items:
        if item.anki_fields:
            r.report(
                item.line_at("anki_fields"),
                f"item {item.id!r}: anki_fields are the fields of an adopted deck's note type, "
                "carried as they are: only a bank with anki_notetype: has them",
            )


def check_items(r: Reader, kept: KeptNotetype, items: Sequence[Item]) -> None:
    """What an item holds that the kept note type has no field for."""
    mapped = kept.mapped
    for item in items:
        for name, _ in item.anki_fields:
            if name in kept.fields and name not in mapped:
                continue
            why = (
                "the build writes the item's texts there"
                if name in mapped
                else f"the kept note type {kept.name!r} has no such field"
            )
            r.report(
                item.line_at(carried_line(name)),
                f"item {item.id!r}: anki_fields: {name!r} cannot be carried: {why} (its "
                f"fields: {', '.join(kept.fields)})",
            )
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


def asks_explanations(kept: yaml.Node | None) -> bool:
    """Whether the items need an explanation: a card shows one, but a bank that keeps an
    adopted note type with no field for it (`anki_notetype:` without `explanation`) has
    nowhere to show it, and asks none (an exam deck's 400 notes were refused for it)."""
    if not isinstance(kept, yaml.MappingNode):
        return True
    return any(
        isinstance(key, yaml.ScalarNode) and key.value == "explanation" for key, _ in kept.value
    )
