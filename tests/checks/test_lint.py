"""`ankigen lint`: every problem as PATH:LINE, sorted, a summary, and the exit status."""

from __future__ import annotations

import hashlib
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings
from PIL import Image

from ankigen.bank.files import Source
from ankigen.bank.reader import readable_part
from ankigen.builder.pipeline import build
from ankigen.checks.bankcache import BankCache
from ankigen.checks.incremental import check_outlines
from ankigen.checks.run import check_sources, lint
from ankigen.checks.translation import sources_for
from ankigen.core.errors import InvalidBanks
from ankigen.text.markup import rich_html
from tests.helpers import REPO, invoke, item, write_bank
from tests.support.banktext import EDITS, VALID_BANK, mutate
from tests.support.workers import with_workers


def test_clean_banks(project: Path, runner: CliRunner) -> None:
    write_bank(project / "banks")
    result = invoke(runner, "lint")
    assert (result.exit_code, result.output) == (0, "0 errors, 0 warnings in 1 bank\n")


def test_errors_fail_and_are_sorted_with_a_summary(project: Path, runner: CliRunner) -> None:
    (project / "banks" / "b.yaml").write_text(
        "topic: b\nlanguage: en\ntitle: B\nitems:\n"
        "  - id: x\n    question: q\n    choices: [a, b]\n    answer: 2\n    explanation: e\n"
        "  - id: x\n    question: q\n    choices: [a, b]\n    answer: 1\n    explanation: e\n",
        encoding="utf-8",
    )
    (project / "banks" / "a.yaml").write_text(
        "topic: a\nlanguage: en\ntitle: [\n", encoding="utf-8"
    )
    result = invoke(runner, "lint")
    assert result.exit_code == 1
    assert result.output == (
        "banks/a.yaml:4: error: YAML syntax: did not find expected node content\n"
        "banks/b.yaml:10: error: duplicate item id 'x' (first used at line 5)\n"
        "2 errors, 0 warnings in 2 banks\n"
    )


@pytest.mark.parametrize(
    ("lock", "said"),
    [
        (
            '{\n<<<<<<< HEAD\n "version": 2\n=======\n>>>>>>> theirs\n}\n',
            "banks/ankigen.lock:2: error: the lock file holds git merge conflict markers",
        ),
        ("{", "banks/ankigen.lock: error: the lock file is damaged"),
        # the escape in a lock written in UTF-16, as JSON allows
        (
            b"\xff\xfe"
            + '{"version": 2, "decks": {"demo.en": {"name": "d \\ud800", '
            '"path": "demo/en.yaml", "created": 1700000000, "items": {}}}}'.encode("utf-16-le"),
            "banks/ankigen.lock: error: the lock file is damaged",
        ),
        # the same surrogate as UTF-8 bytes, which JSON's own decoding lets in
        (
            b'{"version": 2, "decks": {"demo.en": {"name": "d \xed\xa0\x80", '
            b'"path": "demo/en.yaml", "created": 1700000000, "items": {}}}}',
            "banks/ankigen.lock: error: the lock file is damaged",
        ),
        # a surrogate alone, which JSON reads but is no text: the build stopped as on a bug
        (
            '{"version": 2, "decks": {"demo.en": {"name": "d \\ud800", "path": "demo/en.yaml", '
            '"created": 1700000000, "items": {}}}}',
            "banks/ankigen.lock: error: the lock file is damaged",
        ),
        ('{"version": 99}', "banks/ankigen.lock: error: lock file version 99 is not one"),
        (
            '{"version": 2, "decks": {"demo.en": {"name": "d", "path": "demo/en.yaml", '
            '"created": 1700000000, "items": {"one": ["h", 1700000000, "not a guid!"]}}}}',
            "banks/ankigen.lock:1: error: item 'one': 'not a guid!' is not a GUID",
        ),
    ],
)
def test_a_lock_that_build_refuses_is_an_error_of_lint(
    project: Path, runner: CliRunner, lock: str | bytes, said: str
) -> None:
    """A commit hook or CI running `lint` learns what `build` would stop at: a lock
    left with merge conflict markers after a merge of two branches' builds."""
    write_bank(project / "banks")
    raw = lock if isinstance(lock, bytes) else lock.encode()
    (project / "banks" / "ankigen.lock").write_bytes(raw)
    built = invoke(runner, "build")
    linted = invoke(runner, "lint")
    assert (built.exit_code, linted.exit_code) == (1, 1)
    assert linted.output.startswith(said), linted.output
    assert linted.output.endswith("1 error, 0 warnings in 1 bank\n")
    message = said.split(": error: ")[1]
    assert message in built.output


def test_a_file_name_with_a_line_break_is_one_line_per_problem(
    project: Path, runner: CliRunner
) -> None:
    """A crafted name printed as it is made two lines of one problem, the first a
    line that reads as no problem at all (or as one of its own)."""
    (project / "banks" / "topic\none.yaml").write_text(
        "topic: x\nlanguage: de\nitems: [\n", encoding="utf-8"
    )
    for command in ("lint", "build"):
        result = invoke(runner, command)
        assert result.exit_code == 1
        assert "banks/topic\\none.yaml:4: error: YAML syntax" in result.output.splitlines()[0]


def test_a_name_quoted_in_a_message_cannot_reach_the_terminal(
    project: Path, runner: CliRunner
) -> None:
    """A folder named with an escape sequence (here one that sets a terminal's title),
    quoted in another bank's problem, and a C1 control: printed escaped, in text and in
    GitHub's workflow commands alike."""
    write_bank(project / "banks")
    hostile = project / "banks" / "t\x1b]0;PWNED\x07\u009b"
    hostile.mkdir()
    (project / "banks" / "demo" / "en.yaml").rename(hostile / "en.yaml")
    write_bank(project / "banks")  # the same topic and language again: quotes the other
    for args in (("lint",), ("lint", "--format", "github"), ("build",)):
        result = invoke(runner, *args)
        assert result.exit_code == 1
        assert not {"\x1b", "\x07", "\u009b"} & set(result.output), result.output
        assert "t\\x1b]0;PWNED\\x07\\x9b" in result.output


def test_warnings_pass_unless_strict(project: Path, runner: CliRunner) -> None:
    write_bank(
        project / "banks",
        language="hi",
        items=[item("a", question="What is the answer?", explanation="Because.")],
    )
    result = invoke(runner, "lint")
    assert result.exit_code == 0
    assert result.output == (
        "banks/demo/hi.yaml:5: warning: item 'a': untranslated? question, choices, explanation "
        "in Latin script, not Devanagari\n"
        "0 errors, 1 warning in 1 bank\n"
    )
    assert invoke(runner, "lint", "--strict").exit_code == 1


def test_script_check_counts_words_not_letters(project: Path, runner: CliRunner) -> None:
    write_bank(
        project / "banks",
        language="ur",
        items=[
            item(
                "a",
                question="PyTorch DistributedDataParallel مواصلات میں تاخیر کو کیسے چھپاتا ہے؟",
                choices=2,
                explanation="یہ درست ہے۔",
            )
            | {"choices": ["پہلا جواب", "دوسرا جواب"]}
        ],
    )
    assert invoke(runner, "lint").output == "0 errors, 0 warnings in 1 bank\n"


def test_translation_parity(project: Path, runner: CliRunner) -> None:
    write_bank(project / "banks", language="en", items=[item("a", 1), item("b", 2), item("c", 1)])
    write_bank(
        project / "banks",
        language="de",
        items=[
            item(i, answer, question=f"Welche Antwort ({i})?", explanation="Die zweite.", **extra)
            for i, answer, extra in (("a", 2, {}), ("b", 2, {"choices": 3}), ("extra", 1, {}))
        ],
    )
    result = invoke(runner, "lint")
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert lines == [
        "banks/demo/de.yaml:4: warning: item 'c' is missing in 'de' (it is in banks/demo/en.yaml)",
        "banks/demo/de.yaml:12: warning: item 'a': answer 2 differs from 1 in 'en'",
        "banks/demo/de.yaml:16: warning: item 'b' has 3 choices; in 'en' it has 4",
        "banks/demo/en.yaml:4: warning: item 'extra' is missing in 'en' (it is in banks/demo/de.yaml)",
        "0 errors, 4 warnings in 2 banks",
    ]


def test_placeholders_are_flagged(project: Path, runner: CliRunner) -> None:
    write_bank(
        project / "banks",
        items=[
            item("a", question="Map Idinku _AIU_PROTECTED_11__?"),
            item("b", explanation="Value {{0}} here."),
            item("c", choices=2) | {"choices": ["%s files", "ok"]},
        ],
    )
    out = invoke(runner, "lint").output
    assert (
        "item 'a': question: '_AIU_PROTECTED_11__' looks like a translation tool's placeholder"
        in out
    )
    assert "item 'b': explanation: '{{0}}' looks like" in out
    assert "item 'c': choice 1: '%s' looks like" in out


def test_position_bias_when_shuffling_is_off(project: Path, runner: CliRunner) -> None:
    items = [item(f"q{n}", answer=2) for n in range(4)] + [item("q9", answer=1)]
    write_bank(project / "banks", items=items, shuffle=False)
    out = invoke(runner, "lint").output
    assert "warning: 4 of 5 unshuffled items have choice 2 as the answer" in out
    write_bank(project / "banks", items=items)  # shuffled: the position does not matter
    assert "unshuffled" not in invoke(runner, "lint").output
    # true/false items, which keep true first as imports write them, are no position
    true_false = [item(f"t{n}", choices=2) | {"choices": ["True", "False"]} for n in range(5)]
    write_bank(project / "banks", items=true_false + items, shuffle=False)
    assert (
        "warning: 4 of 5 unshuffled items have choice 2 as the answer"
        in invoke(runner, "lint").output
    )


def test_shipped_banks_lint_without_errors(runner: CliRunner) -> None:
    import os

    repo = REPO
    old = Path.cwd()
    os.chdir(repo)
    try:
        result = invoke(runner, "lint")
    finally:
        os.chdir(old)
    assert result.exit_code == 0
    assert result.output.endswith("0 errors, 13 warnings in 10 banks\n")


def test_recall_that_differs_between_languages_is_warned_of(
    project: Path, runner: CliRunner
) -> None:
    banks = project / "banks"
    write_bank(banks, language="en", items=[item("a", recall=True), item("b")])
    de = write_bank(
        banks, language="de", items=[item("a", question="Welche?"), item("b", question="Was?")]
    )
    result = invoke(runner, "lint")
    line = de.read_text(encoding="utf-8").splitlines().index("- id: a") + 1
    assert (
        f"banks/demo/de.yaml:{line}: warning: item 'a': recall is false here and true in 'en': "
        "learners of the two languages get different cards"
    ) in result.output
    # the build checks against the reference through the bank cache's parities
    built = invoke(runner, "build")
    assert built.exit_code == 0 and "1 warning in the banks" in built.output
    write_bank(
        banks,
        language="de",
        items=[item("a", question="Welche?", recall=True), item("b", question="Was?")],
    )
    assert "recall is" not in invoke(runner, "lint").output


def test_a_bank_with_errors_hides_no_other_problem(project: Path, runner: CliRunner) -> None:
    banks = project / "banks"
    write_bank(banks, "a", items=[item("one", answer=9)])  # out of range: the bank fails
    write_bank(banks, "c", title="a quiz")  # its deck name is a's
    write_bank(banks, "z", items=[item("one")], formerly={"topic": "a"})
    write_bank(banks, "b", items=[item("one"), item("two")])
    write_bank(banks, "b", "fr", items=[item("one")])  # two is missing
    result = invoke(runner, "lint")
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        "banks/a/en.yaml:3: error: the deck name 'a quiz (en)' is also the deck of "
        "banks/c/en.yaml; Anki would merge both into one deck: give one a different "
        "`deck:` or title",
        "banks/a/en.yaml:12: error: item 'one': answer 9 is out of range; choices are "
        "numbered 1 to 4",
        "banks/b/fr.yaml:4: warning: item 'two' is missing in 'fr' (it is in banks/b/en.yaml)",
        "banks/b/fr.yaml:5: warning: item 'one': untranslated? question, choices, explanation "
        "the same as in 'en'",
        "banks/z/en.yaml:4: error: formerly: 'a.en' is the live bank banks/a/en.yaml; "
        "a deck's former name cannot be another deck's current one",
        "3 errors, 2 warnings in 5 banks",
    ]


def test_an_item_left_unexplained_hides_none_of_its_own_problems(
    project: Path, runner: CliRunner
) -> None:
    """An import leaves every explanation its source lacked empty (`# TODO`): the item
    was not read, and lint said nothing of its other problems (a placeholder, another
    item asking the same) until each had its explanation."""
    banks = project / "banks"
    items = [item("one", explanation=""), item("two", question="Question one?")]
    write_bank(banks, "a", items=items)
    text = (banks / "a" / "en.yaml").read_text("utf-8")
    (banks / "a" / "en.yaml").write_text(text.replace("Question one?", "Value {{0}}?"), "utf-8")
    result = invoke(runner, "lint")
    assert result.exit_code == 1
    found = [line.split(": ", 2)[1:] for line in result.output.splitlines()[:-1]]
    placeholder = "question: '{{0}}' looks like a translation tool's placeholder"
    assert found == [
        ["warning", f"item 'one': {placeholder}"],
        ["error", "item 'one': explanation is empty"],
        ["warning", f"item 'two': {placeholder}"],
        ["warning", "item 'two': the same question as item 'one' (line 6)"],
    ]


def translated(item_id: str, answer: Any = 1, **extra: Any) -> dict[str, Any]:
    """An item in another language than the reference's: its own question and explanation."""
    texts = {"question": f"Frage {item_id}?", "explanation": f"Weil {item_id}."}
    return item(item_id, answer, **(texts | extra))


def reference_in_error(banks: Path) -> None:
    """A topic whose reference (en) has an item in error: its answer is out of range."""
    write_bank(
        banks,
        "tr",
        items=[
            item("a"),
            item("b", answer=9),
            item("c", question="Value {{0}} here?"),  # its own warning stands
            item("d"),
        ],
    )
    # c is missing, a has another number of choices, b's reference is in error
    write_bank(
        banks, "tr", "de", items=[translated("a", choices=3), translated("b"), translated("d")]
    )
    # compared with en, not with de, the first language that loads
    write_bank(
        banks,
        "tr",
        "fr",
        items=[translated("a", 2), translated("b"), translated("c"), translated("d")],
    )


def test_a_reference_in_error_hides_no_warning_of_its_translations(
    project: Path, runner: CliRunner
) -> None:
    reference_in_error(project / "banks")
    result = invoke(runner, "lint")
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        "banks/tr/de.yaml:4: warning: item 'c' is missing in 'de' (it is in banks/tr/en.yaml)",
        "banks/tr/de.yaml:7: warning: item 'a' has 3 choices; in 'en' it has 4",
        "banks/tr/de.yaml:13: warning: item 'b': parity with 'en' not checked: the reference "
        "item has an error (banks/tr/en.yaml:14)",
        "banks/tr/en.yaml:21: error: item 'b': answer 9 is out of range; choices are numbered "
        "1 to 4",
        "banks/tr/en.yaml:24: warning: item 'c': question: '{{0}}' looks like a translation "
        "tool's placeholder",
        "banks/tr/fr.yaml:12: warning: item 'a': answer 2 differs from 1 in 'en'",
        "banks/tr/fr.yaml:14: warning: item 'b': parity with 'en' not checked: the reference "
        "item has an error (banks/tr/en.yaml:14)",
        "1 error, 6 warnings in 3 banks",
    ]


def test_what_cannot_be_told_of_a_bank_in_error_is_said_once(
    project: Path, runner: CliRunner
) -> None:
    """An item whose id does not read may be any item: which items its bank lacks is not
    told. A translation in error is still compared where its items read."""
    banks = project / "banks"
    write_bank(banks, "tr", items=[item("a"), item("Not An Id"), item("c"), item("e")])
    write_bank(banks, "tr", "de", items=[translated("a", 2), translated("b", 9), translated("e")])
    result = invoke(runner, "lint")
    assert result.output.splitlines() == [
        "banks/tr/de.yaml:4: warning: item 'c' is missing in 'de' (it is in banks/tr/en.yaml)",
        "banks/tr/de.yaml:12: warning: item 'a': answer 2 differs from 1 in 'en'",
        "banks/tr/de.yaml:21: error: item 'b': answer 9 is out of range; choices are numbered "
        "1 to 4",
        "banks/tr/en.yaml:4: warning: whether items of the other languages are missing in 'en' "
        "is not checked: not every item's id here reads",
        "banks/tr/en.yaml:14: error: item 'Not An Id': id is not a slug (a-z, 0-9 and '-')",
        "2 errors, 3 warnings in 2 banks",
    ]


def build_says() -> list[str]:
    """What a build says of the banks: its warnings, or every problem if it fails."""
    try:
        result = build(Path("banks"), Path("out"))
    except InvalidBanks as failed:
        return [str(d) for d in failed.diagnostics]
    return [str(d) for d in result.warnings]


def lint_says() -> list[str]:
    return [str(d) for d in lint(Path("banks")).diagnostics]


@pytest.mark.parametrize("how", ["cold", "cached", "workers"])
def test_a_build_says_of_banks_in_error_what_lint_says(
    project: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """Cold, with the translations' cache entries of a build before the error, and with
    workers (which let go of each bank's bytes once it is checked)."""
    banks = project / "banks"
    reference_in_error(banks)
    write_bank(banks, "other", title="tr quiz", deck="tr quiz (en)")  # the deck of tr/en
    if how == "cached":
        write_bank(banks, "tr", items=[item(i) for i in "abcd"])
        write_bank(banks, "other", title="other quiz")
        assert build_says()  # the translations' warnings
        reference_in_error(banks)
        write_bank(banks, "other", title="tr quiz", deck="tr quiz (en)")
    if how == "workers":
        with_workers(monkeypatch)
    said = build_says()
    assert said == lint_says()
    assert "banks/tr/de.yaml:7: warning: item 'a' has 3 choices; in 'en' it has 4" in said
    assert any("the deck name 'tr quiz (en)' is also the deck of" in line for line in said)


# each as a question's text: some that the entities show otherwise than before (the
# three, in any text but a code block), some that they do not; of the first, those with
# `&amp;` and a letter after it (not `lt;`, `gt;`, `amp;`) are warned of
ENTITY_TEXTS = [
    "Q&A",
    "&nbsp;",
    "&#38;",
    "&quot;",
    "&AMP;",
    "&amp no semicolon",
    "&lt",
    "&amp;",
    "&amp;nbsp;",
    "&amp;eacute;",
    "&amp;amp;",
    "a &&lt; b",
    "&lt;br&gt; breaks",
    "&gt;",
    "<code>&amp;</code>",
    "\\(a &lt; b\\)",
    "<b>&lt;</b>",
    "code:\n```\nx &amp;&amp; y\n```",
    "code:\n```\nx &amp; y\n```\nthen &amp; here",
]


def test_lint_warns_of_exactly_the_texts_the_entities_show_otherwise(
    project: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`&lt;`, `&gt;` and `&amp;` show `<`, `>` and `&` since 74f814b; before, every `&`
    showed as written. Rendered both ways, every text warned of differs, and so does
    every text with `&amp;` and a letter after it that is not `lt;`, `gt;` or `amp;`."""
    import ankigen.text.html

    items = [item(f"t{n}", question=f"Question {n}: {text}") for n, text in enumerate(ENTITY_TEXTS)]
    write_bank(project / "banks", items=items)
    output = invoke(runner, "lint").output
    now = [rich_html(i["question"]) for i in items]
    monkeypatch.setattr(ankigen.text.html, "_BANK_ENTITY", re.compile("(?!)(x)"))  # as before
    before = [rich_html(i["question"]) for i in items]
    warned = [f"warning: item 't{n}': question: " in output for n in range(len(items))]
    differs = [a != b for a, b in zip(now, before, strict=True)]
    assert differs.count(True) == 11
    assert all(d for d, w in zip(differs, warned, strict=True) if w)
    assert [ENTITY_TEXTS[n] for n, w in enumerate(warned) if w] == ["&amp;nbsp;", "&amp;eacute;"]
    assert output.count("since &amp; became the entity for &") == 2


def test_a_changed_text_is_warned_of_once_with_how_to_keep_it(
    project: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ankigen.text.html

    banks = project / "banks"
    path = write_bank(
        banks,
        title="Q&amp;A",
        items=[
            item("a", question="What does &amp;nbsp; show, and &lt;br&gt; or &amp;eacute;?"),
            item("b", image="x.png", image_alt="a &lt; b, &amp;lt; shows &lt;")
            | {"choices": [{"text": "one", "why": "&amp;gt is no entity"}, "two"]},
        ],
    )
    (project / "media").mkdir()
    Image.new("RGB", (2, 2)).save(project / "media" / "x.png")
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [lines[n - 1].split(":")[0] for n in (3, 6, 17, 23)] == [
        "title",
        "  question",
        "  - text",
        "  image_alt",
    ]
    result = invoke(runner, "lint")
    assert result.output.splitlines() == [
        "banks/demo/en.yaml:3: warning: title: '&amp;A' shows '&A' since &amp; became the "
        "entity for &; to show '&amp;A' as before, write '&amp;amp;A'",
        "banks/demo/en.yaml:6: warning: item 'a': question: '&amp;nbsp;' shows '&nbsp;' since "
        "&amp; became the entity for &; to show '&amp;nbsp;' as before, write "
        "'&amp;amp;nbsp;' (and 1 more in this text)",
        "banks/demo/en.yaml:17: warning: item 'b': why 1: '&amp;gt' shows '&gt' since &amp; "
        "became the entity for &; to show '&amp;gt' as before, write '&amp;amp;gt'",
        "0 errors, 3 warnings in 1 bank",
    ]
    # what it says to write shows what the text showed before
    shown_now = rich_html("&amp;amp;nbsp;")
    monkeypatch.setattr(ankigen.text.html, "_BANK_ENTITY", re.compile("(?!)(x)"))
    assert shown_now == rich_html("&amp;nbsp;") == "&amp;amp;nbsp;"


def test_a_build_warns_of_changed_texts_as_lint_does(
    project: Path, settled: None, reads: list[str]
) -> None:
    """Cold, with the bank's check read from its cache entry, and with nothing to do."""
    banks = project / "banks"
    write_bank(banks, "a", items=[item("x", question="What does &amp;nbsp; show?")])
    write_bank(banks, "b")
    cold = build_says()
    assert cold == lint_says()
    assert [line.split(": warning: ")[0] for line in cold] == ["banks/a/en.yaml:6"]
    write_bank(banks, "b", items=[item("one"), item("two", 3)])
    reads.clear()
    assert build_says() == cold
    assert reads == ["b/en.yaml"]  # a's warning comes from its cache entry
    reads.clear()
    assert build_says() == cold  # nothing to do: the warnings the last build recorded
    assert reads == []


DE_BANK = """\
topic: demo
language: de
title: "Demo"
items:
  - id: one
    question: "Was ist 1 + 1?"
    choices: ["1", "2", "3", "4"]
    answer: 2
    explanation: "Rechnen."
  - id: two
    question: "Beide"
    choices: [a, b]
    answer: 1
    explanation: gut
  - id: three
    question: "Drei?"
    choices: [a, b]
    answer: 1
    explanation: gut
"""


# item one's answer out of range: the reference is in error, its items all listed
OUT_OF_RANGE = [(VALID_BANK.index("answer: 2") + len("answer: "), 2, "9")]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(EDITS)
@example(OUT_OF_RANGE)
def test_lint_and_the_builds_check_agree_whatever_the_reference(
    edits: list[tuple[int, int, str]],
) -> None:
    """A reference edited at random, in error or not, against a translation: `lint`'s check
    and the build's (through the bank cache) find the same, never crash, and say what
    the reference lacks wherever every id it lists reads."""
    en = mutate(VALID_BANK, edits).encode("utf-8", "surrogatepass")

    def sources() -> list[Source]:
        return [
            Source(Path(f"banks/demo/{name}.yaml"), data, hashlib.sha256(data).hexdigest())
            for name, data in (("de", DE_BANK.encode()), ("en", en))
        ]

    linted = check_sources(sources()).diagnostics
    with tempfile.TemporaryDirectory() as folder:
        cache = BankCache(Path(folder), sources_for(""))
        built = check_outlines(sources(), None, cache).diagnostics
    assert linted == built
    assert all(d.line >= 1 and d.message for d in linted)
    part = readable_part("banks/demo/en.yaml", en)
    ids = [i for i, _ in part.listed or [(None, 0)]] if part is not None else [None]
    if part is not None and part.bank.key == "demo.en" and None not in ids:
        missing = "item 'three' is missing in 'en' (it is in banks/demo/de.yaml)"
        assert (missing in [d.message for d in linted]) == ("three" not in ids)


def test_an_error_of_the_whole_command_quotes_its_path_escaped(
    project: Path, runner: CliRunner
) -> None:
    """An error that stops a command (here a damaged lock) names a path of the user's:
    printed with its escape sequence escaped, as each problem's line is."""
    banks = project / "b\x1b]0;PWNED\x07"
    write_bank(banks)
    (banks / "ankigen.lock").write_text("{", encoding="utf-8")
    result = invoke(runner, "build", str(banks.relative_to(project)))
    assert result.exit_code == 1
    assert "\x1b" not in result.output and "\x07" not in result.output
    assert "b\\x1b]0;PWNED\\x07/ankigen.lock: the lock file is damaged" in result.output
