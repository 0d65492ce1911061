"""JSON Schemas (draft 2020-12) of a bank and of the project file, generated from the
table of keys the readers use (`bank.keys`), for editors (yaml-language-server, Taplo)
and CI. The generated files ship in the package (`schemas/`); a test holds them equal to
a fresh generation. What no schema can say (duplicate ids, look-alike choices, the other
banks of a topic...) only `ankigen lint` says: docs/bank-format.md lists it."""

from __future__ import annotations

import json
import os
from pathlib import Path

from ankigen.bank.keys import (
    BANK_KEYS_TABLE,
    CHOICE_KEYS,
    FORMERLY_KEYS,
    ITEM_KEYS_TABLE,
    KEPT_KEYS,
    PROJECT_KEYS_TABLE,
    Key,
    Schema,
)
from ankigen.bank.model import MAX_CHOICES, MIN_CHOICES
from ankigen.core.userfile import STDOUT

SCHEMA_DIR = Path(__file__).parent / "schemas"
"""Where the generated schemas ship, as package data."""
KINDS = ("bank", "project")
DRAFT = "https://json-schema.org/draft/2020-12/schema"


def schema_path(kind: str) -> Path:
    """The shipped schema of a bank or of the project file."""
    return SCHEMA_DIR / f"{kind}.schema.json"


def schema_comment(bank: Path) -> str:
    """The first line of a new bank to be written at `bank`: yaml-language-server's
    modeline, naming the installed bank schema by its path relative to the bank's folder
    (the server resolves it so). Nothing is fetched from the network, no file is added
    to the project, and the schema is always the one of the ankigen that reads the bank."""
    target = schema_path("bank").absolute()
    try:
        where = Path(os.path.relpath(target, bank.absolute().parent)).as_posix()
    except ValueError:  # on another drive (Windows): no relative path leads there
        where = target.as_uri()
    return f"# yaml-language-server: $schema={where}"


def with_schema_comment(bank: Path, text: str) -> str:
    """The text of a new bank to be written at `bank`, `schema_comment` first; as it is
    on standard output, where the bank will be is not known, nor where the schema is
    from there."""
    return text if str(bank) == STDOUT else schema_comment(bank) + "\n" + text


def _object(table: tuple[Key, ...], description: str) -> Schema:
    properties = {
        key.name: {
            **key.value,
            "description": key.description,
            "examples": list(key.examples),
        }
        for key in table
    }
    out: Schema = {"type": "object", "description": description, "properties": properties}
    required = [key.name for key in table if key.required]
    if required:
        out["required"] = required
    out["additionalProperties"] = False
    return out


def _answers_within_choices() -> list[Schema]:
    """An answer names one of the item's choices: with N choices, no number above N."""
    rules = []
    for count in range(MIN_CHOICES, MAX_CHOICES):
        rules.append(
            {
                "if": {
                    "properties": {"choices": {"type": "array", "maxItems": count}},
                    "required": ["choices"],
                },
                "then": {
                    "properties": {
                        "answer": {
                            "anyOf": [
                                {"type": "integer", "maximum": count},
                                {"type": "array", "items": {"maximum": count}},
                            ]
                        }
                    }
                },
            }
        )
    return rules


def bank_schema() -> Schema:
    """The JSON Schema of a bank file."""
    item = _object(ITEM_KEYS_TABLE, "One multiple-choice question.")
    item["allOf"] = _answers_within_choices()
    # asked of each item unless the bank keeps a note type with no field to show it in
    item["required"] = [name for name in item["required"] if name != "explanation"]
    formerly = _object(FORMERLY_KEYS, "Older names of the bank.")
    formerly["minProperties"] = 1
    bank = _object(BANK_KEYS_TABLE, "")
    # an item carries anki_fields only where the bank keeps a note type to carry them in
    bank["allOf"] = [
        {
            "if": {"not": {"required": ["anki_notetype"]}},
            "then": {"properties": {"items": {"items": {"not": {"required": ["anki_fields"]}}}}},
        },
        {
            "if": {
                "required": ["anki_notetype"],
                "properties": {"anki_notetype": {"not": {"required": ["explanation"]}}},
            },
            "else": {"properties": {"items": {"items": {"required": ["explanation"]}}}},
        },
    ]
    return {
        "$schema": DRAFT,
        "title": "ankigen bank",
        **bank,
        "description": "One topic in one language: one Anki deck (ankigen's bank format, "
        "version 1). `ankigen lint` checks what this schema cannot: see docs/bank-format.md.",
        "$defs": {
            "item": item,
            "choice": _object(CHOICE_KEYS, "A choice with why it is right or wrong."),
            "formerly": formerly,
            "anki_notetype": _object(KEPT_KEYS, "An adopted deck's own Anki note type."),
        },
    }


def project_schema() -> Schema:
    """The JSON Schema of the project file, `BANKS/ankigen.toml`."""
    return {
        "$schema": DRAFT,
        "title": "ankigen project file (ankigen.toml)",
        **_object(PROJECT_KEYS_TABLE, "Settings for every bank of a project."),
    }


def generate(kind: str) -> str:
    """A schema as the shipped file holds it."""
    made = bank_schema() if kind == "bank" else project_schema()
    return json.dumps(made, indent=2, ensure_ascii=False) + "\n"


def write_all() -> None:
    """Generate the shipped schemas again (after a change to `bank.keys`)."""
    for kind in KINDS:
        schema_path(kind).write_text(generate(kind), encoding="utf-8")


if __name__ == "__main__":
    write_all()
