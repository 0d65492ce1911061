"""Every kind of problem `lint` reports has its own stable rule id (`checks.ruleset`),
and the table of ids in docs/commands.md is the code's."""

from __future__ import annotations

import hashlib
import re
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from ankigen.bank.files import Source
from ankigen.checks.ruleset import OTHER, RULES, rule_of
from ankigen.checks.run import check_sources, lint
from tests.helpers import REPO
from tests.support.banktext import EDITS, VALID_BANK, mutate

ITEM = """\
  - id: {id}
    question: "Question {id}?"
    choices: ["first {id}", "second {id}", "third {id}"]
    answer: {answer}
    explanation: "Because {id}."
"""


def items(*answers: object, **extra: str) -> str:
    text = "".join(ITEM.format(id=f"i{n}", answer=a) for n, a in enumerate(answers))
    return text + "".join(f"    {key}: {value}\n" for key, value in extra.items())


def bank(body: str, topic: str = "demo", language: str = "en", head: str = "") -> str:
    return f"topic: {topic}\nlanguage: {language}\ntitle: {topic} quiz\n{head}items:\n{body}"


CASES: dict[str, dict[str, str | bytes]] = {
    "ankigen/file-encoding": {"demo/en.yaml": bank(items(1)).encode("utf-16")},
    "ankigen/file-too-large": {
        "demo/en.yaml": bank(items(1)),
        "ankigen.toml": "#" + "x" * (1 << 20),
    },
    "ankigen/yaml-syntax": {"demo/en.yaml": "topic: [demo\n"},
    "ankigen/yaml-feature": {"demo/en.yaml": bank(items(1)).replace("title:", "title: &a")},
    "ankigen/toml-syntax": {"demo/en.yaml": bank(items(1)), "ankigen.toml": "deck = ["},
    "ankigen/empty-bank": {"demo/en.yaml": ""},
    "ankigen/missing-key": {"demo/en.yaml": "topic: demo\nlanguage: en\nitems:\n" + items(1)},
    "ankigen/unknown-key": {"demo/en.yaml": bank(items(1, explantion='"x"'))},
    "ankigen/duplicate-key": {"demo/en.yaml": bank(items(1, answer="2"))},
    "ankigen/answer-missing": {"demo/en.yaml": bank(items("[]"))},
    "ankigen/answer-out-of-range": {"demo/en.yaml": bank(items(5))},
    "ankigen/answer-not-plain": {"demo/en.yaml": bank(items("010"))},
    "ankigen/answer-repeated": {"demo/en.yaml": bank(items("[1, 1]"))},
    "ankigen/answer-type": {"demo/en.yaml": bank(items('"one"'))},
    "ankigen/choice-count": {
        "demo/en.yaml": bank(items(1)).replace('["first i0", "second i0", "third i0"]', "[a]")
    },
    "ankigen/duplicate-choice": {
        "demo/en.yaml": bank(items(1)).replace('"second i0"', '"first i0"')
    },
    "ankigen/duplicate-id": {"demo/en.yaml": bank(items(1, 2)).replace("id: i1", "id: i0")},
    "ankigen/empty-text": {"demo/en.yaml": bank(items(1)).replace('"Because i0."', '"<b></b>"')},
    "ankigen/control-character": {
        "demo/en.yaml": bank(items(1)).replace('"Because i0."', '"a\\u0007b"')
    },
    "ankigen/bidi-control": {
        "demo/en.yaml": bank(items(1)).replace('"Because i0."', '"a\\u202eb"')
    },
    "ankigen/backup-topic": {"backup-x/en.yaml": bank(items(1), topic="backup-x")},
    "ankigen/bad-slug": {"demo/en.yaml": bank(items(1)).replace("id: i0", "id: Not An Id")},
    "ankigen/bad-language": {"demo/en.yaml": bank(items(1), language="english")},
    "ankigen/duplicate-bank": {"demo/en.yaml": bank(items(1)), "other/en.yaml": bank(items(1))},
    "ankigen/deck-merge": {
        "demo/en.yaml": bank(items(1)),
        "other/en.yaml": bank(items(1), topic="other", head="deck: demo quiz (en)\n"),
    },
    "ankigen/deck-name": {"demo/en.yaml": bank(items(1), head='deck: "a::::b"\n')},
    "ankigen/formerly": {
        "demo/en.yaml": bank(items(1, 2)).replace(
            '    explanation: "Because i1."\n', "    explanation: x\n    formerly: [i0]\n"
        )
    },
    "ankigen/parity-missing-item": {
        "demo/en.yaml": bank(items(1, 2)),
        "demo/de.yaml": bank(items(1), language="de"),
    },
    "ankigen/parity-not-checked": {
        "demo/en.yaml": bank(items(9)),
        "demo/de.yaml": bank(items(1), language="de"),
    },
    "ankigen/parity-choices": {
        "demo/en.yaml": bank(items(1)),
        "demo/de.yaml": bank(items(1), language="de").replace(', "third i0"', ""),
    },
    "ankigen/parity-answer": {
        "demo/en.yaml": bank(items(1)),
        "demo/de.yaml": bank(items(2), language="de"),
    },
    "ankigen/parity-recall": {
        "demo/en.yaml": bank(items(1, recall="true")),
        "demo/de.yaml": bank(items(1), language="de"),
    },
    "ankigen/untranslated": {
        "demo/en.yaml": bank(items(1)),
        "demo/ar.yaml": bank(items(1), language="ar"),
    },
    "ankigen/placeholder": {
        "demo/en.yaml": bank(items(1)).replace('"Because i0."', '"Because _AIU_PROTECTED_11__."')
    },
    "ankigen/same-question": {
        "demo/en.yaml": bank(items(1, 2)).replace("Question i1?", "Question i0?")
    },
    "ankigen/position-bias": {"demo/en.yaml": bank(items(*[1] * 10), head="shuffle: false\n")},
    "ankigen/amp-entity": {
        "demo/en.yaml": bank(items(1)).replace('"Because i0."', '"a &amp;nbsp; b"')
    },
    "ankigen/math": {"demo/en.yaml": bank(items(1)).replace('"Because i0."', '"\\\\( x"')},
    "ankigen/code-block": {
        "demo/en.yaml": bank(items(1)).replace('"Because i0."', '"```\\nx = 1"')
    },
    "ankigen/image": {"demo/en.yaml": bank(items(1, image="nothere.png"))},
    "ankigen/project-file": {
        "demo/en.yaml": bank(items(1)),
        "ankigen.toml": 'media = "/elsewhere"\n',
    },
    "ankigen/lock-file": {
        "demo/en.yaml": bank(items(1)),
        "ankigen.lock": '{\n<<<<<<< HEAD\n "version": 2\n=======\n>>>>>>> theirs\n}\n',
    },
    "ankigen/image-alt": {"demo/en.yaml": bank(items(1, image="nothere.png"))},
    "ankigen/file-unreadable": {"demo/en.yaml": bank(items(1)), "demo/de.yaml/x": ""},
    "ankigen/kept-notetype": {"demo/en.yaml": bank(items(1), head="anki_notetype: {}\n")},
    "ankigen/parity-why": {
        "demo/en.yaml": bank(items(1)).replace('"first i0"', '{text: "first i0", why: "so"}'),
        "demo/de.yaml": bank(items(1), language="de"),
    },
    "ankigen/type": {"demo/en.yaml": bank(items(1, tags="5"))},
    "ankigen/limit": {
        "demo/en.yaml": bank(items(1)).replace('"Because i0."', '"' + "x" * 70_000 + '"')
    },
}


def linted_rules(tmp_path: Path, files: dict[str, str | bytes]) -> set[str]:
    banks = tmp_path / "banks"
    banks.mkdir()
    for name, text in files.items():
        path = banks / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(textwrap.dedent(text), encoding="utf-8")
    return {rule_of(d).id for d in lint(banks).diagnostics}


@pytest.mark.parametrize("rule", sorted(CASES))
def test_each_kind_of_problem_has_its_rule(rule: str, tmp_path: Path) -> None:
    found = linted_rules(tmp_path, CASES[rule])
    assert rule in found
    assert OTHER.id not in found


def test_every_rule_is_made_by_some_problem() -> None:
    assert {rule.id for rule in RULES} == set(CASES)


def test_ids_are_unique_and_well_formed() -> None:
    ids = [rule.id for rule in RULES]
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"ankigen/[a-z]+(-[a-z]+)*", i) for i in ids)


def test_the_docs_table_is_the_codes() -> None:
    text = (REPO / "docs" / "commands.md").read_text("utf-8")
    rows = re.findall(r"^\| `(ankigen/[a-z-]+)` \| (.+?) \|$", text, re.MULTILINE)
    assert rows == [(rule.id, rule.summary) for rule in (*RULES, OTHER)]


def test_the_shipped_banks_problems_all_have_rules() -> None:
    found = {rule_of(d).id for d in lint(REPO / "banks").diagnostics}
    assert found == {"ankigen/untranslated"}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(EDITS, EDITS)
def test_whatever_a_bank_says_wrong_has_its_rule(
    en_edits: list[tuple[int, int, str]], de_edits: list[tuple[int, int, str]]
) -> None:
    """A reference and its translation, both edited at random: every problem found is
    named by a rule of the table, none falls to `ankigen/other`."""
    de_bank = VALID_BANK.replace("language: en", "language: de")
    texts = {"en": mutate(VALID_BANK, en_edits), "de": mutate(de_bank, de_edits)}
    sources = []
    for name, text in texts.items():
        data = text.encode("utf-8", "surrogatepass")
        sources.append(
            Source(Path(f"banks/demo/{name}.yaml"), data, hashlib.sha256(data).hexdigest())
        )
    unnamed = [d for d in check_sources(sources).diagnostics if rule_of(d) is OTHER]
    assert unnamed == []
