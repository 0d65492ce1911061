"""The JSON Schemas of a bank and of the project file (`bank.schema`): shipped as generated,
valid for every bank shipped and tested, and of the reader's own verdict on generated banks,
but for what docs/bank-format.md lists as beyond a schema."""

from __future__ import annotations

import copy
import json
import tomllib
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ankigen.bank.keys import BANK_KEYS, ITEM_KEYS
from ankigen.bank.project import parse_project
from ankigen.bank.reader import parse_bank
from ankigen.bank.schema import KINDS, generate, schema_path
from tests.helpers import REPO
from tests.support.adopt import GENANKI_KEPT

TESTS = REPO / "tests"


class NoAliases(yaml.SafeDumper):
    """Each value written out where it is: a bank has no anchors (the reader refuses them,
    a rule of YAML's text, which a schema of the data does not see)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def validator(kind: str) -> jsonschema.Draft202012Validator:
    schema = json.loads(schema_path(kind).read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


BANK = validator("bank")
PROJECT = validator("project")


def schema_accepts(data: object) -> bool:
    return BANK.is_valid(data)


def reader_accepts(text: str) -> bool:
    bank, _ = parse_bank("bank.yaml", text.encode("utf-8"))
    return bank is not None


@pytest.mark.parametrize("kind", KINDS)
def test_the_shipped_schema_is_a_fresh_generation(kind: str) -> None:
    """As cog's check: a change to the table of keys regenerates the files
    (`python -m ankigen.bank.schema`), or this fails."""
    assert schema_path(kind).read_text(encoding="utf-8") == generate(kind)


@pytest.mark.parametrize("kind", KINDS)
def test_every_key_has_a_description_and_examples(kind: str) -> None:
    """Each example is itself valid, as an editor offers it for completion."""
    schema = json.loads(schema_path(kind).read_text(encoding="utf-8"))
    objects = [schema, *schema.get("$defs", {}).values()]
    keys = [(name, value) for found in objects for name, value in found["properties"].items()]
    assert len(keys) >= 5
    for name, value in keys:
        assert value.get("description"), name
        assert value.get("examples"), name
        for example in value["examples"]:
            one = jsonschema.Draft202012Validator({**value, "$defs": schema.get("$defs", {})})
            assert one.is_valid(example), (name, example)


def test_the_bank_schema_names_the_readers_keys() -> None:
    schema = json.loads(schema_path("bank").read_text(encoding="utf-8"))
    assert list(schema["properties"]) == BANK_KEYS
    assert list(schema["$defs"]["item"]["properties"]) == ITEM_KEYS


def shipped_banks() -> list[Path]:
    return sorted((REPO / "banks").rglob("*.yaml"))


def test_there_are_banks_to_validate() -> None:
    assert len(shipped_banks()) >= 10


@pytest.mark.parametrize("path", shipped_banks(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_shipped_bank_is_valid(path: Path) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert [error.message for error in BANK.iter_errors(data)] == []


@pytest.mark.parametrize(
    "path",
    sorted(TESTS.glob("golden/**/*.yaml")) + sorted(TESTS.glob("data/**/*.yaml")),
    ids=lambda p: str(p.relative_to(REPO)),
)
def test_every_test_bank_has_the_readers_verdict(path: Path) -> None:
    """The test banks are imports with their TODOs left: both refuse them."""
    text = path.read_text(encoding="utf-8")
    assert schema_accepts(yaml.safe_load(text)) == reader_accepts(text)


def test_the_shipped_project_file_is_valid() -> None:
    data = tomllib.loads((REPO / "banks" / "ankigen.toml").read_text(encoding="utf-8"))
    assert [error.message for error in PROJECT.iter_errors(data)] == []


@pytest.mark.parametrize(
    "text",
    [
        'deck = "Training::{topic_title}::{title} ({language})"\nreference = "en"\n',
        'deck = "{title:>9}"\n',
        'deck = "{nope}"\n',
        'deck = "a {{braces}}"\n',
        'deck = "lone {"\n',
        'reference = "english"\n',
        'reference = ""\n',
        'tags = ["a", "b"]\n',
        'tags = ["a b"]\n',
        'tags = "a"\n',
        'media = "media"\n',
        "media = 5\n",
        '[topics]\nfsdp = "FSDP"\n',
        '[topics]\nBad = "x"\n',
        '[topics]\nfsdp = " "\n',
        "colour = 1\n",
    ],
)
def test_the_project_schema_has_the_readers_verdict(text: str, tmp_path: Path) -> None:
    _, problems = parse_project("ankigen.toml", text.encode(), tmp_path / "banks")
    assert PROJECT.is_valid(tomllib.loads(text)) == (problems == [])


# Values a bank's keys are given: well and badly formed, but none of what a schema cannot
# say (look-alike choices, visually empty text, markup, several items of one id).
TEXT = ["Demo", "x" * 2001, "", "   ", None, 2024, True, ["t"], "  padded  ", {"a": 1}]
SLUG = ["demo", "Bad Topic", "a" * 101, "", None, 7, -1, "backup-x", ["x"], "a--b"]
LANGUAGE = ["en", "pt-br", "sr-Latn", "english", "", None, 5, "e" * 36]
FLAG = [True, False, "yes", None, 1]
TAGS = [["a"], ["a b"], "a", [""], [1], ["x"] * 51, [], None, [None]]
DECK = ["A::B", "A::", "::", "", None, "A:: ::B", 5, "  A  ", ["A"]]
FORMERLY = [{"topic": "old"}, {}, {"topic": "Bad"}, {"language": "pt"}, {"x": 1}, "old", None]
ITEM_FORMERLY = ["old", ["a", "b"], ["a", "a"], [], "Bad", 3, None]
CHOICE = [
    "All-reduce",
    42,
    False,
    "y" * 2001,
    "",
    None,
    {"text": "Scatter"},
    {"text": "Reduce", "why": "w"},
    {"text": "Barrier", "why": None},
    {"text": "Barrier", "why": ["w"]},
    {"why": "w"},
    {"text": "Send", "colour": 1},
    ["nested"],
    " padded choice ",
]
CHOICES = [
    *(["Broadcast", "Gather", choice] for choice in CHOICE),
    ["Broadcast"],
    [f"c{n}" for n in range(8)],
    [f"c{n}" for n in range(9)],
    [],
    "a",
    None,
]
ANSWER = [1, 2, 3, 4, 0, 5, 9, -1, [1, 2], [3], [4], [], [1, 1], None, True, "1", [1, "2"], 1.5]
ITEM_VALUES = {
    "id": SLUG,
    "question": TEXT,
    "choices": CHOICES,
    "answer": ANSWER,
    "explanation": TEXT,
    "tags": TAGS,
    "shuffle": FLAG,
    "retired": FLAG,
    "recall": FLAG,
    "image": TEXT,
    "image_alt": TEXT,
    "explanation_image": TEXT,
    "formerly": ITEM_FORMERLY,
    "anki_fields": [{"Source": "x"}, "x"],
    "colour": ["red"],
}
BANK_VALUES = {
    "topic": SLUG,
    "language": LANGUAGE,
    "title": TEXT,
    "description": TEXT,
    "level": TEXT,
    "tags": TAGS,
    "deck": DECK,
    "shuffle": FLAG,
    "recall": FLAG,
    "source": TEXT,
    "license": TEXT,
    "formerly": FORMERLY,
    "colour": ["red"],
    "items": ["none", None, {"a": 1}, [], ["not an item"], [None]],
}
GOOD = {
    "topic": "demo",
    "language": "en",
    "title": "Demo",
    "question": "Which collective sums on every rank?",
    "choices": ["All-reduce", "Broadcast", "Gather"],
    "answer": 1,
    "explanation": "It leaves every rank with the sum.",
    "tags": ["a"],
    "shuffle": False,
    "retired": True,
    "recall": True,
    "image": "ring.png",
    "image_alt": "A ring",
    "formerly": "old",
    "description": "About it",
    "level": "easy",
    "deck": "A::B",
    "source": "Notes",
    "license": "CC BY 4.0",
}
"""A well-formed value of each key (anki_fields has none without anki_notetype)."""


def _good_item(number: int, optional: list[str]) -> dict[str, Any]:
    keys = ["id", "question", "choices", "answer", "explanation", *optional]
    return {key: f"q{number}" if key == "id" else copy.deepcopy(GOOD[key]) for key in keys}


def good_bank() -> dict[str, Any]:
    return {"topic": "demo", "language": "en", "title": "Demo", "items": [_good_item(1, [])]}


def each_fault() -> list[tuple[str, str, Any]]:
    """Every key, in the bank and in an item, left out or given each of its values."""
    missing = object()
    found: list[tuple[str, str, Any]] = []
    for where, values in (("bank", BANK_VALUES), ("item", ITEM_VALUES)):
        for key, options in values.items():
            found += [(where, key, value) for value in [missing, *options]]
    return found


FAULTS = each_fault()


@pytest.mark.parametrize(("where", "key", "value"), FAULTS)
def test_the_schema_and_the_reader_agree_on_each_fault(where: str, key: str, value: Any) -> None:
    bank = good_bank()
    mapping = bank if where == "bank" else bank["items"][0]
    if isinstance(value, str | int | float | list | dict | type(None)):
        mapping[key] = copy.deepcopy(value)
    else:
        mapping.pop(key, None)
    assert_same_verdict(bank)


def assert_same_verdict(bank: Any) -> None:
    text = yaml.dump(bank, Dumper=NoAliases, allow_unicode=True, sort_keys=False)
    _, problems = parse_bank("bank.yaml", text.encode("utf-8"))
    said = [p.message for p in problems if p.severity == "error"]
    errors = [f"{list(e.absolute_path)}: {e.message[:120]}" for e in BANK.iter_errors(bank)]
    assert (said == []) == (errors == []), (text, said, errors)


ITEM_POOLS = {key: st.sampled_from(values) for key, values in ITEM_VALUES.items()}
BANK_POOLS = {key: st.sampled_from(values) for key, values in BANK_VALUES.items()}
OPTIONAL_BANK = [
    key for key in BANK_VALUES if key in GOOD and key not in ("topic", "language", "title")
]
OPTIONAL_ITEM = [
    key
    for key in ITEM_VALUES
    if key in GOOD and key not in ("question", "choices", "answer", "explanation")
]


@st.composite
def banks(draw: st.DrawFn) -> Any:
    """A well-formed bank with a few faults: a key left out, or given a value drawn from
    its pool of good and bad ones, in the bank or in one of its items."""
    if draw(st.integers(0, 40)) == 0:
        return draw(st.sampled_from([["a list"], "text", 5]))
    optional = OPTIONAL_BANK
    bank: dict[str, Any] = {
        "topic": "demo",
        "language": "en",
        "title": "Demo",
        **{key: GOOD[key] for key in draw(st.lists(st.sampled_from(optional), unique=True))},
    }
    item_optional = OPTIONAL_ITEM
    bank["items"] = [
        _good_item(number, draw(st.lists(st.sampled_from(item_optional), unique=True)))
        for number in range(draw(st.integers(1, 3)))
    ]
    for _ in range(draw(st.integers(0, 2))):
        listed = bank.get("items")
        count = len(listed) if isinstance(listed, list) else 0
        where = draw(st.integers(-1, count - 1))
        mapping, pools = (bank, BANK_POOLS) if where < 0 else (listed[where], ITEM_POOLS)
        if not isinstance(mapping, dict):
            continue
        key = draw(st.sampled_from(sorted(pools)))
        if draw(st.integers(0, 4)) == 0:
            mapping.pop(key, None)
        else:
            mapping[key] = draw(pools[key])
    return bank


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(banks())
def test_the_schema_and_the_reader_agree_on_generated_banks(bank: Any) -> None:
    assert_same_verdict(bank)


def test_explanations_are_asked_as_the_reader_asks_them() -> None:
    """Each item needs an explanation, but in a bank that keeps an adopted note type with
    no field to show one in: the schema and the reader agree on both."""
    kept = {key: value for key, value in GENANKI_KEPT.items() if key != "explanation"}
    bank = {
        "topic": "exam",
        "language": "en",
        "title": "Exam",
        "anki_notetype": kept,
        "items": [{"id": "q1", "question": "Which?", "choices": ["a", "b"], "answer": 1}],
    }
    assert schema_accepts(bank) and reader_accepts(yaml.safe_dump(bank))
    with_field = {**bank, "anki_notetype": GENANKI_KEPT}
    without_kept = {key: value for key, value in bank.items() if key != "anki_notetype"}
    for asking in (with_field, without_kept):
        assert not schema_accepts(asking) and not reader_accepts(yaml.safe_dump(asking))
