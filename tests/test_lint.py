"""`ankigen lint`: every problem as PATH:LINE, sorted, a summary, and the exit status."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from tests.conftest import invoke
from tests.helpers import item, write_bank


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


def test_shipped_banks_lint_without_errors(runner: CliRunner) -> None:
    import os

    repo = Path(__file__).parent.parent
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
