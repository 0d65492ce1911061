"""`ankigen import --from page`: quiz pages in every shape and script become banks, text kept exactly."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from ankigen.bank.reader import parse_bank
from ankigen.formats.convert import import_file
from ankigen.formats.page import PageError, parse_page
from tests.helpers import DATA, TESTS, invoke

SEEDS = sorted((DATA / "seeds").glob("*.txt"))
PAGES = TESTS / "pages"
GOLDEN = TESTS / "golden" / "import"


def seed_lines(path: Path) -> list[str]:
    """Every question and choice line of a seed, with its marker removed and trimmed."""
    out = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        match = re.match(r"^\s*(?:\d+\.|[•-])\s+(.*)$", raw)
        if match:
            out.append(match[1].strip())
    return out


def test_the_seeds_are_there() -> None:
    assert len(SEEDS) == 5


@pytest.mark.parametrize("seed", SEEDS, ids=lambda p: p.name)
def test_each_seed_imports_to_8_items_of_4_choices_with_the_source_text(seed: Path) -> None:
    page = parse_page(seed.read_text(encoding="utf-8"), str(seed))
    assert [len(item.choices) for item in page.items] == [4] * 8
    flat = [text for item in page.items for text in (item.question, *item.choices)]
    assert flat == seed_lines(seed)


@pytest.mark.parametrize("seed", SEEDS, ids=lambda p: p.name)
def test_seed_import_matches_golden_bank(seed: Path, runner: CliRunner) -> None:
    result = runner.invoke(
        __import__("ankigen.cli.app", fromlist=["cli"]).cli,
        ["import", str(seed), "--topic", "t", "--lang", "en"],
    )
    assert result.exit_code == 0
    golden = (GOLDEN / f"{seed.stem}.yaml").read_text(encoding="utf-8")
    assert result.stdout == golden


def test_page_furniture_of_the_urdu_seed() -> None:
    seed = next(p for p in SEEDS if p.name.startswith("003"))
    page = parse_page(seed.read_text(encoding="utf-8"))
    assert page.title == "ڈیٹا متوازی کوئز"
    assert page.description.startswith("نقل شدہ ماڈلز")
    assert page.level == "درمیانہ سطح"
    assert page.count == 8
    assert [n for n, _ in page.dropped] == [1, 4, 5, 6, 7]


def test_page_furniture_of_the_wolof_seed() -> None:
    seed = next(p for p in SEEDS if p.name.startswith("004"))
    page = parse_page(seed.read_text(encoding="utf-8"))
    assert page.title == "ZeRO ak Quiz buy gëna xéewale"
    assert page.description.startswith("Dafay muur etape ZeRO")
    assert page.level == "Dëgër Niveau"
    assert page.count == 8
    assert "Sooy def quiz bi, tontu yi ak leeral yi dañuy feeñ." in dict(page.dropped).values()


def test_notice_line_is_not_a_description() -> None:
    seed = next(p for p in SEEDS if p.name.startswith("000"))
    page = parse_page(seed.read_text(encoding="utf-8"))
    assert page.title == "সম্পূর্ণভাবে শার্ডেড ডেটা প্যারালাল কুইজ"
    assert page.description == ""
    assert page.count is None


def test_numbered_page_with_3_and_5_choices_and_a_two_line_question() -> None:
    page = parse_page((PAGES / "numbered_3_and_5.txt").read_text(encoding="utf-8"))
    assert page.title == "Quiz d'entraînement"
    assert page.description == "Un petit quiz pour tester l'import."
    assert [len(i.choices) for i in page.items] == [3, 5, 3]
    assert page.items[1].choices[4] == "« quatre » & <quatre>"
    assert page.items[2].question == "Complétez la phrase :\nla capitale de la France est"


def test_dash_page_with_colon_and_unmarked_question_uses_the_header_count() -> None:
    page = parse_page((PAGES / "dash_colon_and_unmarked.txt").read_text(encoding="utf-8"))
    assert page.level == "中級レベル"
    assert page.count == 3
    assert [i.question for i in page.items] == [
        "勾配を同期する集団通信は？",
        "次の文を完成させてください：",
        "Pick the collective that FSDP uses before a forward pass",
    ]
    assert [len(i.choices) for i in page.items] == [2, 2, 2]


def test_dash_page_without_count_is_refused_when_the_grouping_is_ambiguous() -> None:
    text = (PAGES / "dash_colon_and_unmarked.txt").read_text(encoding="utf-8")
    without_count = text.replace("問題 1 / 3\n", "")
    with pytest.raises(PageError, match=r"ambiguous .* pass --choices N"):
        parse_page(without_count)
    page = parse_page(without_count, choices=2)
    assert len(page.items) == 3


def test_greek_question_mark_groups_a_dash_page() -> None:
    page = parse_page((PAGES / "greek_semicolon.txt").read_text(encoding="utf-8"))
    assert [len(i.choices) for i in page.items] == [3, 3]
    assert page.items[1].question == "Ποιο είναι το πλεονέκτημα του FSDP;"


def test_arabic_dash_page_with_five_choices() -> None:
    page = parse_page((PAGES / "arabic_five_choices.txt").read_text(encoding="utf-8"))
    assert [len(i.choices) for i in page.items] == [5, 5]
    assert page.items[0].question == "ما الذي يفعله all-reduce؟"


def test_ambiguous_page_names_the_options_and_choices_resolves_it(runner: CliRunner) -> None:
    result = invoke(
        runner, "import", str(PAGES / "dash_ambiguous.txt"), "--topic", "t", "--lang", "en"
    )
    assert result.exit_code == 1
    assert result.output.endswith(
        "dash_ambiguous.txt:2: error: none of these 8 list lines reads as a question (ends "
        "in a question mark or a colon), and the page header gives no question count: any "
        "grouping would be a guess; pass --choices N (the number of choices per question)\n"
        "1 error; nothing was written\n"
    )
    result = invoke(
        runner,
        "import",
        str(PAGES / "dash_ambiguous.txt"),
        "--topic",
        "t",
        "--lang",
        "en",
        "--choices",
        "3",
    )
    assert result.exit_code == 0
    assert result.stdout.count("  - id: q") == 2


def test_answers_option_and_written_bank_round_trip(tmp_path: Path, runner: CliRunner) -> None:
    out = tmp_path / "bank.yaml"
    result = invoke(
        runner,
        "import",
        str(PAGES / "numbered_3_and_5.txt"),
        "--topic",
        "quiz",
        "--lang",
        "fr",
        "--answers",
        "1,2+5,1",
        "-o",
        str(out),
    )
    assert result.exit_code == 0
    assert result.output.endswith(
        "bank.yaml; fill in the 3 places marked TODO\n3 items imported, 0 skipped\n"
    )
    text = out.read_text(encoding="utf-8")
    assert text.count("# TODO") == 3
    text = text.replace(
        'explanation: ""  # TODO: why the answer is right', 'explanation: "Parce que."'
    )
    bank, problems = parse_bank("bank.yaml", text.encode())
    assert [p for p in problems if p.severity == "error"] == []
    assert bank is not None
    assert [i.answer for i in bank.items] == [(1,), (2, 5), (1,)]
    assert bank.items[1].choices[4] == "« quatre » & <quatre>"


def test_missing_answers_are_errors_at_their_lines() -> None:
    text = import_file(PAGES / "greek_semicolon.txt", "t", "el", "page").bank
    _, problems = parse_bank("b.yaml", text.encode())
    lines = text.splitlines()
    messages = [(lines[p.line - 1].strip().split(":")[0], p.message) for p in problems]
    assert messages == [
        ("answer", "item 'q1': answer is missing: set the number of the correct choice"),
        ("explanation", "item 'q1': explanation is empty"),
        ("answer", "item 'q2': answer is missing: set the number of the correct choice"),
        ("explanation", "item 'q2': explanation is empty"),
    ]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "the file is empty"),
        (b"   \n\n", "the file is empty"),
        (b"\x00\x01\x02binary\xff", "binary file"),
        ("Quiz\n1. Which?\n- a\n- b\n".encode("utf-16"), "UTF-16 text, not UTF-8"),
        ("Quiz\n1. Which?\n- a\n- b\n".encode("utf-16-le"), "UTF-16LE text, not UTF-8"),
        (b"caf\xe9\n1. x?\n- a\n- b\n", "not UTF-8 text"),
        (b"Just a title\nand some prose.\n", "no questions found"),
        (b"Title\n- Only?\n- one\n", "cannot group these 2 list lines"),
    ],
)
def test_bad_pages_give_a_clear_error(
    tmp_path: Path, runner: CliRunner, content: bytes, message: str
) -> None:
    page = tmp_path / "page.txt"
    page.write_bytes(content)
    result = invoke(runner, "import", str(page), "--topic", "t", "--lang", "en")
    assert result.exit_code == 1
    *_, problem, summary = result.stderr.splitlines()
    assert problem.startswith(f"{page}:") and ": error: " in problem and message in problem
    assert summary == "1 error; nothing was written"


def test_a_page_of_odd_questions_only_gives_a_clear_error(
    tmp_path: Path, runner: CliRunner
) -> None:
    page = tmp_path / "page.txt"
    page.write_bytes(b"Title\n1. Only?\n- one\n")
    result = invoke(runner, "import", str(page), "--topic", "t", "--lang", "en")
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        f"reading {page} as page (chosen by its content; --from sets it)",
        f"{page}:1: error: no question in it can become an item (1 skipped)",
        f"{page}:2: warning: this question has 1 choices; an item needs 2 to 8; question skipped",
        "1 error; nothing was written",
    ]


@pytest.mark.parametrize(
    ("args", "hint"),
    [
        (["--topic", "Not A Slug", "--lang", "en"], "--topic"),
        (["--topic", "t", "--lang", "english!"], "--lang"),
        (["--topic", "t", "--lang", "en", "--answers", "1,2"], "--answers"),
        (["--topic", "t", "--lang", "en", "--answers", "1,2,9"], "--answers"),
    ],
)
def test_bad_options_are_usage_errors(runner: CliRunner, args: list[str], hint: str) -> None:
    result = invoke(runner, "import", str(PAGES / "numbered_3_and_5.txt"), *args)
    assert result.exit_code == 2
    assert hint in result.output


def test_indented_numbered_page_under_furniture_in_german() -> None:
    page = parse_page((PAGES / "indented_furniture_de.txt").read_text(encoding="utf-8"))
    assert page.title == "Pipeline-Parallelität"
    assert page.description == "Stufen, Mikrobatches und Blasen im Überblick."
    assert page.level == "Fortgeschrittenes Niveau"
    assert page.count == 2
    assert [len(i.choices) for i in page.items] == [3, 5]
    assert page.items[1].choices[0] == "Um die „Blase“ leerer Stufen zu verkleinern"
    dropped = dict(page.dropped).values()
    assert (
        "Frage 1 von 2" in dropped
        and "Was teilt Pipeline-Parallelität auf die GPUs auf?" in dropped
    )
    assert "Antworten und Erklärungen erscheinen, während Sie das Quiz machen." in dropped


def test_one_question_is_no_evidence_of_a_uniform_grouping(runner: CliRunner) -> None:
    """ "Select the gas giant." may be a second question or a choice: one question of five
    choices fits as well as two of two, and a single item has no "same number of choices"
    to prove it; the page asks, where it took the question marks at their word."""
    page = str(PAGES / "dash_unmarked_question.txt")
    result = invoke(runner, "import", page, "--topic", "t", "--lang", "en")
    assert result.exit_code == 1
    assert result.output.endswith(
        "dash_unmarked_question.txt:3: error: the grouping of these 6 list lines is ambiguous "
        "(1 or 2 questions would fit); pass --choices N (the number of choices per question)\n"
        "1 error; nothing was written\n"
    )
    result = invoke(runner, "import", page, "--topic", "t", "--lang", "en", "--choices", "2")
    assert result.exit_code == 0
    assert result.stdout.count("  - id: q") == 2


def test_a_first_question_over_several_lines_is_the_first_item() -> None:
    """The questions began at the first numbered line directly followed by a bullet: a
    first question of several lines went into the header, dropped as page text, and
    every id after it moved by one."""
    text = (PAGES / "numbered_first_over_lines.txt").read_text(encoding="utf-8")
    page = parse_page(text)
    assert page.items[0].question == (
        'Read the sentence below.\n"The treaty was signed in 1648."\nWhich treaty is it?'
    )
    assert [len(item.choices) for item in page.items] == [2, 2, 2]
    assert (page.title, page.description, page.dropped) == ("History quiz", "", ())


def test_code_in_a_question_keeps_its_indentation_and_its_lines() -> None:
    """Code over a question's lines keeps its indentation beyond the page's; in a fence,
    a line starting with a bullet or a number is code, not a choice or a question."""
    unfenced = parse_page((PAGES / "numbered_code_unfenced.txt").read_text(encoding="utf-8"))
    assert unfenced.items[0].question == "What does this print?\nfor i in range(2):\n    print(i)"
    text = (PAGES / "numbered_code_fenced.txt").read_text(encoding="utf-8")
    text = text.replace("    print(i)", "    print(i)\n- not a choice\n3. not a question")
    fenced = parse_page(text)
    assert fenced.items[1].question == (
        "What does this print?\n```python\nfor i in range(2):\n    print(i)\n"
        "- not a choice\n3. not a question\n```"
    )
    assert [item.choices for item in fenced.items] == [("def", "fun"), ("0 1", "1 2")]


def test_a_number_in_a_latin_word_is_no_question_count() -> None:
    """`#### Q1.` above a question list was read as "1 question" and refused the page."""
    page = parse_page("Git quiz\n#### Q1.\n- What is git?\n- a VCS\n- a shell\n")
    assert page.count is None and len(page.items) == 1


def test_ids_are_places_on_the_page_skipped_questions_counted(tmp_path: Path) -> None:
    """Two translations of a page, one with a question of a single choice (skipped): the
    questions after it kept their ids only in the other."""
    page = tmp_path / "page.txt"
    page.write_text(
        "Quiz\n1. First?\n- a\n- b\n2. Odd?\n- only\n3. Third?\n- c\n- d\n", encoding="utf-8"
    )
    imported = import_file(page, "t", "en")
    assert imported.ids == ("q1", "q3")


def test_numbered_lines_in_code_before_the_first_choices_are_code() -> None:
    """A fence of numbered lines in the first question: the questions began inside it, and
    its closing fence opened another that swallowed the page."""
    page = parse_page((PAGES / "numbered_fence_of_numbers.txt").read_text(encoding="utf-8"))
    assert [item.question for item in page.items] == [
        "How many items does this list render?\n```\n1. one\n2. two\n```",
        "Which character starts a heading?",
    ]
