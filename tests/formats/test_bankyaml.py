"""The one bank writer (`formats.bankyaml`): any bank that loads, written and read back,
loads to an equal bank, over every field the format has."""

from __future__ import annotations

import dataclasses
from typing import Any

import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from ankigen.bank.keys import BANK_KEYS, ITEM_KEYS
from ankigen.bank.model import Bank
from ankigen.bank.reader import parse_bank
from ankigen.formats.bankyaml import bank_yaml
from ankigen.formats.model import from_bank

TEXT = st.text(
    st.sampled_from(list("abcXYZ 019\"'\\:#-&<>[]{},*!%@`|\n\tàßদআỌ̀ب\u200f\u00a0")),
    min_size=1,
    max_size=12,
).filter(lambda t: t.strip() and not t.startswith(("<", "&")) and "`" not in t)
SLUG = st.from_regex(r"[a-z][a-z0-9-]{0,6}", fullmatch=True)
TAGS = st.lists(st.from_regex(r"[a-z][a-z0-9:_]{0,5}", fullmatch=True), max_size=3, unique=True)
LANGUAGES = st.sampled_from(["en", "de", "ur", "pt-BR", "yo"])


@st.composite
def banks(draw: st.DrawFn) -> dict[str, Any]:
    """A bank as plain data, dumped by PyYAML: an independent writer to read from."""
    items = []
    for number, item_id in enumerate(draw(st.lists(SLUG, min_size=1, max_size=4, unique=True))):
        count = draw(st.integers(2, 5))
        texts = [f"{number}.{n} {draw(TEXT)}" for n in range(count)]
        choices: list[Any] = [
            {"text": text, "why": draw(TEXT)} if draw(st.booleans()) else text for text in texts
        ]
        answer = sorted(draw(st.sets(st.integers(1, count), min_size=1)))
        entry: dict[str, Any] = {
            "id": item_id,
            "question": draw(TEXT),
            "choices": choices,
            "answer": answer[0] if len(answer) == 1 else answer,
            "explanation": draw(TEXT),
        }
        optional = {
            "tags": TAGS.filter(bool),
            "shuffle": st.booleans(),
            "retired": st.booleans(),
            "image": st.just(f"img/{item_id}.png"),
            "image_alt": TEXT,
            "explanation_image": st.just(f"img/{item_id}-x.png"),
            "explanation_image_alt": TEXT,
            "formerly": st.lists(SLUG, min_size=1, max_size=2, unique=True).map(
                lambda old, item_id=item_id: [f"old-{o}-{item_id}" for o in old]
            ),
            "recall": st.booleans(),
        }
        for key, strategy in optional.items():
            if draw(st.booleans()):
                entry[key] = draw(strategy)
        items.append(entry)
    bank: dict[str, Any] = {
        "topic": draw(SLUG),
        "language": draw(LANGUAGES),
        "title": draw(TEXT),
        "items": items,
    }
    optional_bank = {
        "description": TEXT,
        "level": TEXT,
        "deck": TEXT.map(lambda t: t.replace(":", "")),
        "source": TEXT,
        "license": TEXT,
        "tags": TAGS.filter(bool),
        "shuffle": st.booleans(),
        "recall": st.booleans(),
        "formerly": st.fixed_dictionaries(
            {}, optional={"topic": st.just(["older-topic"]), "language": st.just(["fr"])}
        ).filter(bool),
    }
    for key, strategy in optional_bank.items():
        if draw(st.booleans()):
            bank[key] = draw(strategy)
    return bank


def without_lines(bank: Bank) -> Bank:
    return dataclasses.replace(
        bank, path="", items=tuple(dataclasses.replace(i, line=0) for i in bank.items)
    )


def written(bank: Bank) -> Bank:
    text = bank_yaml(from_bank(bank), [i.id for i in bank.items], bank.topic, bank.language)
    again, problems = parse_bank("written.yaml", text.encode("utf-8"))
    assert again is not None, (problems, text)
    return again


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(banks())
def test_any_bank_that_loads_is_written_and_read_back_equal(data: dict[str, Any]) -> None:
    text = yaml.safe_dump(data, allow_unicode=True, sort_keys=False)
    bank, _ = parse_bank("dumped.yaml", text.encode("utf-8"))
    assume(bank is not None)
    assert bank is not None
    assert without_lines(written(bank)) == without_lines(bank)


def test_the_writer_knows_every_key_of_the_format() -> None:
    """A key the format gains is written: this bank has every one, each set away from
    its default, and reads back equal."""
    text = """\
topic: every
language: ur
title: "All"
description: d
level: l
tags: [a]
deck: "D::E"
shuffle: false
source: s
license: CC0
formerly: {topic: [old], language: [fa]}
recall: true
anki_notetype:
  id: 1342697561419
  name: "MC: old"
  fields: [Front, A, B, Correct, Back, Kind, Notes, "Extra 1"]
  template: Card 1
  question: Front
  choices: [A, B]
  answer: Correct
  answer_format: numbers
  explanation: Back
  kind: Kind
  adopted: 1700000000
items:
  - id: one
    question: q
    choices: [{text: a, why: because}, b]
    answer: 1
    explanation: e
    tags: [t]
    shuffle: true
    retired: true
    image: i.png
    image_alt: ia
    explanation_image: e.png
    explanation_image_alt: ea
    formerly: [zero]
    recall: false
    anki_fields: {Notes: " <b>as</b> it is\n", "Extra 1": ""}
"""
    root = yaml.safe_load(text)
    assert set(root) == set(BANK_KEYS)
    assert set(root["items"][0]) == set(ITEM_KEYS)
    bank, problems = parse_bank("every.yaml", text.encode())
    assert bank is not None, problems
    assert without_lines(written(bank)) == without_lines(bank)
