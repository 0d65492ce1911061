"""Real quiz files in, faithfully: what the source shows is what the card shows.

Expectations follow Moodle's own importers (question/format/{gift,xml,aiken}/format.php)
and how Moodle then displays each text format: HTML and Moodle's own format are HTML,
plain text is text.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from ankigen.bank.model import Bank
from ankigen.bank.reader import parse_bank
from ankigen.core.errors import InvalidBanks
from ankigen.formats.convert import import_file
from ankigen.formats.htmltext import html_to_text
from ankigen.text.html import inline_html, plain_text
from tests.helpers import DATA, AnkiCollection, invoke

FIDELITY = DATA / "fidelity"


def imported(name: str) -> Bank:
    done = import_file(FIDELITY / name, "t", "en", None)
    text = re.sub(r'explanation: ""  # TODO.*', 'explanation: "x"', done.bank)
    bank, problems = parse_bank("b.yaml", text.encode())
    assert bank is not None, problems
    return bank


def shown(bank: Bank) -> list[tuple[str, ...]]:
    """Each item's question and choices as the card's reader sees them."""
    return [(plain_text(i.question), *map(plain_text, i.choices)) for i in bank.items]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (
            "tags-as-text.xml",
            [
                (
                    "What does <code> mark? It is inline & short.",
                    "Code, as in <code>x</code>",
                    "A break: <br>",
                ),
                ("What does <br> do? And &lt;b&gt;?", "<br> breaks a line", "<b> makes a break"),
            ],
        ),
        (
            "tags-as-text.gift",
            [
                (
                    "What does <b> do in HTML?",
                    "It makes text bold, as this",
                    "It breaks a line like <br>",
                ),
                ("What does <br> do?", "It breaks a line: <br>", "It makes <b>bold</b>"),
            ],
        ),
        (
            "tags-as-text.aiken",
            [("What does <br> do in HTML?", "It breaks a line", "It makes text <b>bold</b>")],
        ),
    ],
)
def test_tag_names_shown_as_text_stay_text(name: str, expected: list[tuple[str, ...]]) -> None:
    assert shown(imported(name)) == expected


def test_a_quiz_page_is_plain_text() -> None:
    done = import_file(FIDELITY / "tags-as-text.page.txt", "t", "en", "page", answers="1")
    text = re.sub(r'explanation: ""  # TODO.*', 'explanation: "x"', done.bank)
    bank, _ = parse_bank("b.yaml", text.encode())
    assert bank is not None
    assert shown(bank) == [("What does <br> do?", "It breaks a line", "It makes <b>bold</b>")]


def test_only_real_markup_becomes_the_cards_markup() -> None:
    bank = imported("tags-as-text.xml")
    html = inline_html(bank.items[0].question)
    assert html == "What does &lt;code&gt; mark? It is <b>inline</b> &amp; short."
    assert (
        inline_html(bank.items[0].choices[0])
        == "Code, as in <code>&lt;code&gt;x&lt;/code&gt;</code>"
    )
    gift = imported("tags-as-text.gift")
    assert inline_html(gift.items[1].choices[1]) == "It makes &lt;b&gt;bold&lt;/b&gt;"


def diagnostics(name: str) -> list[str]:
    done = import_file(FIDELITY / name, "t", "en", None)
    return [str(d).removeprefix(f"{FIDELITY / name}:") for d in done.diagnostics]


def test_an_image_in_feedback_is_dropped_with_a_warning_not_refused() -> None:
    bank = imported("media.xml")
    flag = bank.items[0]
    assert (flag.choices, flag.answer, flag.whys) == (
        ("True", "False"),
        (1,),
        ("Right:", "Look again."),
    )
    assert (
        "10: warning: image 'red.png' in a choice or its feedback was dropped: choices "
        "and their feedback are text" in diagnostics("media.xml")
    )


def test_moodle_19_image_becomes_the_questions_image() -> None:
    done = import_file(FIDELITY / "media.xml", "t", "en", None)
    bank = imported("media.xml")
    picture = bank.items[1]
    assert picture.image.startswith("t/") and picture.image.endswith(".png")
    assert [name for name, _ in done.source.media] == [picture.image]


def test_sound_linked_from_a_question_is_named_as_lost() -> None:
    bank = imported("media.xml")
    assert bank.items[2].question == "Listen to this greeting: hello.mp3. Which language is it?"
    found = diagnostics("media.xml")
    assert (
        "33: warning: 'hello.mp3', linked in this text, is lost: a bank text carries no links, "
        "sound or video (the words around it stay)" in found
    )
    assert not any("not shown in the text" in d for d in found)


def test_partial_credit_is_a_wrong_choice_that_says_its_credit() -> None:
    bank = imported("hometown.gift")
    home = bank.items[0]
    assert home.question == "Jesus Christ was from _____."
    assert home.answer == (4,)
    assert home.whys == (
        "This was an important city, but the wrong answer.",
        "25% in the source: He was born here, but not raised here.",
        "50% in the source: You need to be more specific.",
        "Yes! That's right!",
    )
    assert bank.items[1].answer == (1, 2)  # no `=`: multiple answers, credit adds up
    assert bank.items[2].answer == (1, 2)
    assert diagnostics("hometown.gift") == [
        "2: warning: choice(s) 2 (25%), 3 (50%) give partial credit in a single-answer "
        "question: they are wrong choices in the bank, and their why says their credit",
        "15: warning: 2 choices give full credit in a single-answer question, where Moodle "
        "accepts any one of them: the bank asks for all of them",
    ]


@pytest.mark.parametrize(
    ("single", "answers"), [("False", [(1,), (1, 2)]), ("false", [(1, 2)] * 2)]
)
def test_single_is_read_as_moodle_reads_it_and_a_capital_false_is_said(
    tmp_path: Path, single: str, answers: list[tuple[int, ...]]
) -> None:
    """Moodle's `trans_single` takes only "false" (or "0", or nothing) for false: the
    `<single>False</single>` a script writes with `str(False)` is a single-answer
    question in Moodle, said so here, where nothing said why a choice with part of the
    credit became a wrong one. Two choices sharing the most credit do not "give full
    credit"."""

    def question(name: str, credits: tuple[int, int]) -> str:
        return (
            f'<question type="multichoice"><name><text>{name}</text></name>'
            "<questiontext><text>Which are prime?</text></questiontext>"
            f"<single>{single}</single>"
            f'<answer fraction="{credits[0]}"><text>2</text></answer>'
            f'<answer fraction="{credits[1]}"><text>3</text></answer>'
            '<answer fraction="0"><text>4</text></answer></question>\n'
        )

    path = tmp_path / "q.xml"
    quiz = question("three quarters", (75, 25)) + question("halves", (50, 50))
    path.write_text(f'<?xml version="1.0"?>\n<quiz>\n{quiz}</quiz>\n', "utf-8")
    done = import_file(path, "t", "en", None)
    bank, _ = parse_bank("b.yaml", re.sub(r'""  # TODO.*', '"x"', done.bank).encode())
    assert bank is not None and [item.answer for item in bank.items] == answers
    said = [d.message for d in done.diagnostics]
    capital = (
        "<single>False</single> is read as true (a single-answer question), as Moodle "
        "reads it: only 'false', '0' or nothing is false; write 'false' for multiple answers"
    )
    assert said.count(capital) == (2 if single == "False" else 0)
    assert (
        "2 choices give the most credit (50%) in a single-answer question, where Moodle "
        "accepts any one of them: the bank asks for all of them" in said
    ) == (single == "False")


def test_code_lists_tables_and_indented_feedback() -> None:
    bank = imported("structure.gift")
    code, lists = bank.items
    assert code.question == "What does this print?\n```python\nprint(sum([1, 2]))\n```"
    assert code.whys == ("Right: 1 + 2.", "No: sum adds, it does not join.")
    assert lists.question == "Steps:\n1. scatter\n2. gather\n• a\n• b\nx | y\n1 | 2"
    assert diagnostics("structure.gift") == [
        "10: warning: a list became lines starting with • or its numbers",
        "10: warning: a table became lines of text, its cells separated by ' | '",
    ]


def test_a_break_in_a_table_cell_keeps_its_row_one_line() -> None:
    """Moodle's editor ends cells with `<br>` (`<td>1 kg<br></td>`), which shows nothing
    in a table; each broke its row across lines (a real Moodle XML file)."""
    table = (
        "<table><tr><th><br></th><th>weight<br></th><th>width</th></tr>"
        "<tr><td>sys1</td><td>1 kg<br></td><td>0.35 m<br></td></tr>"
        "<tr><td>a<br>b</td><td>c</tr></table>after<br>x"
    )
    assert html_to_text(table).text == "| weight | width\nsys1 | 1 kg | 0.35 m\na b | c\nafter\nx"


def test_import_reports_what_build_would_refuse_at_the_source_line() -> None:
    found = diagnostics("dots.aiken")
    assert found == [
        "1: warning: item 'q1': choice 2 repeats choice 1 (`ankigen build` refuses it until "
        "it is fixed)",
    ]
    written = yaml.safe_load(import_file(FIDELITY / "dots.aiken", "t", "en", None).bank)
    formula = written["items"][1]["question"]
    assert formula == r"What is \[\int_{0}^{2} x\,dx\]?"  # Moodle's $$ as Anki's MathJax reads it


def test_kahoots_template_is_read_as_such() -> None:
    bank = imported("kahoot.csv")
    assert [(i.choices, i.answer) for i in bank.items] == [
        (("all-reduce", "broadcast", "scatter", "gather"), (1,)),
        (("all-gather", "print", "reduce-scatter"), (1, 3)),
        (("Paris", "Lyon"), (1,)),  # the answer given as the choice's text
    ]
    assert diagnostics("kahoot.csv") == [
        "1: warning: column 'Time limit (sec) – 5, 10, 20, 30, 60, 90, 120, or 240 secs' is "
        "not part of an item; ignored",
        "1: warning: the header is Kahoot's quiz template's: its columns are read as such",
    ]


def test_blookets_template_is_read_as_such(tmp_path: Path) -> None:
    """Blooket's import template, as its users save it: the question under "Question
    Text", rows numbered under "Question #", the right answers by number. Before, the
    file was refused, both columns suggested as the question."""
    path = tmp_path / "blooket.csv"
    path.write_text(
        "Question #,Question Text,Answer 1,Answer 2,Answer 3 (Optional),Answer 4 (Optional),"
        "Time Limit (sec) (Max: 300 seconds),Correct Answer(s) (Only include Answer #)\n"
        "1,¿Qué es un socket?,Una base de datos,Un punto de conexión,,,20,2\n"
        '2,¿Qué clases crean sockets?,Socket,ServerSocket,Thread,,20,"1,2"\n',
        encoding="utf-8",
    )
    found = import_file(path, "t", "es", None)
    bank, problems = parse_bank(
        "b.yaml", found.bank.replace('explanation: ""', 'explanation: "x"').encode()
    )
    assert bank is not None, problems
    assert [(i.question, i.choices, i.answer) for i in bank.items] == [
        ("¿Qué es un socket?", ("Una base de datos", "Un punto de conexión"), (2,)),
        ("¿Qué clases crean sockets?", ("Socket", "ServerSocket", "Thread"), (1, 2)),
    ]
    assert [d.message for d in found.diagnostics] == [
        "column 'Question #' is not part of an item; ignored",
        "column 'Time Limit (sec) (Max: 300 seconds)' is not part of an item; ignored",
        "the header is Blooket's quiz template's: its columns are read as such",
    ]


def test_gimkits_template_is_read_as_such(tmp_path: Path) -> None:
    """Gimkit's import template: the right answer's text, then the wrong ones. Before,
    every row was skipped, the hints leading to an answer that named no choice."""
    path = tmp_path / "gimkit.csv"
    path.write_bytes(
        "\ufeffQuestion,Correct Answer,Incorrect Answer 1,Incorrect Answer 2 (Optional),"
        "Incorrect Answer 3 (Optional)\r\n"
        "What is the capital of France?,Paris,Lyon,Marseille,Nice\r\n"
        "Is water wet?,Yes,No,,\r\n".encode()
    )
    found = import_file(path, "t", "en", None)
    bank, problems = parse_bank(
        "b.yaml", found.bank.replace('explanation: ""', 'explanation: "x"').encode()
    )
    assert bank is not None, problems
    assert [(i.question, i.choices, i.answer) for i in bank.items] == [
        ("What is the capital of France?", ("Paris", "Lyon", "Marseille", "Nice"), (1,)),
        ("Is water wet?", ("Yes", "No"), (1,)),
    ]
    assert [d.message for d in found.diagnostics] == [
        "the header is Gimkit's quiz template's: its columns are read as such",
    ]


def test_quizizzs_template_is_read_as_such(tmp_path: Path) -> None:
    """Quizizz's (Wayground's) import template: a type per row, five options, the answer
    by option number, an explanation. Before, the file was refused, twelve errors long;
    its fill-in-the-blank and poll rows are skipped as other importers skip such kinds."""
    path = tmp_path / "quizizz.csv"
    path.write_text(
        "Question Text,Question Type,Option 1,Option 2,Option 3,Option 4,Option 5,"
        "Correct Answer,Time in seconds,Image Link,Answer explanation\n"
        "What is 2+2?,Multiple Choice,3,4,5,6,,2,30,,Because arithmetic.\n"
        'Which are prime?,Checkbox,2,3,4,9,10,"1,2",30,,Only 2 and 3.\n'
        "Capital of France?,Fill-in-the-Blank,Paris,,,,,,30,,\n"
        "Your favourite?,Poll,Red,Blue,,,,,30,,\n"
        "Hyphenated?,Multiple-Choice,yes,no,,,,1,30,,Yes.\n",
        encoding="utf-8",
    )
    found = import_file(path, "t", "en", None)
    bank, problems = parse_bank("b.yaml", found.bank.encode())
    assert bank is not None, problems
    assert [(i.question, i.choices, i.answer, i.explanation) for i in bank.items] == [
        ("What is 2+2?", ("3", "4", "5", "6"), (2,), "Because arithmetic."),
        ("Which are prime?", ("2", "3", "4", "9", "10"), (1, 2), "Only 2 and 3."),
        ("Hyphenated?", ("yes", "no"), (1,), "Yes."),
    ]
    assert found.source.skipped == 2
    assert [d.message for d in found.diagnostics] == [
        "column 'Image Link' is not part of an item; ignored",
        "column 'Time in seconds' is not part of an item; ignored",
        "the header is Quizizz's quiz template's: its columns are read as such",
        "skipped a question of type 'Fill-in-the-Blank': only multiple-choice and checkbox "
        "questions become items",
        "skipped a question of type 'Poll': only multiple-choice and checkbox questions "
        "become items",
    ]


@pytest.mark.parametrize(
    ("header", "hint"),
    [
        ("Answer1", "did you mean 'choice1'?"),
        ("Option B", "did you mean 'choice2'?"),
        ("Feedback 3", "did you mean 'why3'?"),
        ("Correct", "did you mean 'answer'?"),
        ("Time", "the columns are id, question, choice1-choice8, answer,"),
        ("Question type", "or map it with --columns 'Question type=COLUMN'"),
    ],
)
def test_unknown_columns_get_a_hint_of_the_same_meaning(
    tmp_path: Path, header: str, hint: str
) -> None:
    path = tmp_path / "q.csv"
    path.write_text(f"question,choice1,choice2,{header}\nQ,a,b,x\n", encoding="utf-8")
    with pytest.raises(InvalidBanks) as error:
        import_file(path, "t", "en")
    (problem,) = error.value.diagnostics
    assert problem.line == 1
    assert problem.message.startswith(f"unknown column {header!r}; ")
    assert hint in problem.message


def test_columns_maps_any_layout(project: Path, runner: CliRunner) -> None:
    source = project / "other.csv"
    source.write_text(
        "Prompt,Option A,Option B,Key,Notes\nWhich is even?,3,4,4,easy\n", encoding="utf-8"
    )
    mapping = "Prompt=question,Option A=choice1,Option B=choice2,Key=answer,Notes="
    result = invoke(
        runner,
        "import",
        str(source),
        "--topic",
        "t",
        "--lang",
        "en",
        "-o",
        "-",
        "--columns",
        mapping,
    )
    assert result.exit_code == 0, result.output
    written = yaml.safe_load(result.stdout)
    assert written["items"][0]["choices"] == ["3", "4"]
    assert written["items"][0]["answer"] == 2
    bad = invoke(
        runner, "import", str(source), "--topic", "t", "--lang", "en", "--columns", "Key=solution"
    )
    assert bad.exit_code == 2
    assert "'solution' is not a column" in bad.output
    gift = invoke(
        runner,
        "import",
        str(FIDELITY / "hometown.gift"),
        "--topic",
        "t",
        "--lang",
        "en",
        "--columns",
        "A=id",
    )
    assert (gift.exit_code, "--columns is for CSV files, not gift" in gift.output) == (2, True)


def test_what_the_teacher_wrote_reaches_anki(
    project: Path, runner: CliRunner, collection: AnkiCollection
) -> None:
    for name in ("tags-as-text.xml", "hometown.gift", "media.xml"):
        topic = Path(name).stem
        out = project / "banks" / topic / "en.yaml"
        out.parent.mkdir(parents=True)
        args = ("import", str(FIDELITY / name), "--topic", topic, "--lang", "en", "-o", str(out))
        assert invoke(runner, *args).exit_code == 0
        filled = re.sub(r"answer: ~  # TODO.*", "answer: 1", out.read_text(encoding="utf-8"))
        out.write_text(re.sub(r'""  # TODO.*', '"x"', filled), encoding="utf-8")
    result = invoke(runner, "build")
    assert result.exit_code == 0, result.output
    for package in sorted((project / "out").glob("*.apkg")):
        collection.import_package(package)
    html = collection.note_by_item("html-source")["Question"]
    assert html == "What does &lt;code&gt; mark? It is <b>inline</b> &amp; short."
    home = collection.note_by_item("jesus-hometown")
    assert home["Question"] == "Jesus Christ was from _____."

    def opening(choice: str) -> str:  # the <li ...> of a choice
        return str(home["Choices"].split(choice)[0].split("<li")[-1])

    assert 'data-correct="true"' not in opening("Galilee")
    assert 'data-correct="true"' in opening("Nazareth")
    assert "50% in the source: You need to be more specific." in home["Choices"]
    assert collection.note_by_item("old-picture")["Image"].startswith('<img src="')


def test_kahoots_template_with_its_title_rows_and_numbering() -> None:
    bank = imported("kahoot-template.csv")
    assert [(i.question, i.answer) for i in bank.items] == [
        ("Which collective sums across ranks?", (1,)),
        ("Which of these are collectives?", (1, 3)),
    ]
    found = diagnostics("kahoot-template.csv")
    assert found[0] == "1: warning: 4 row(s) before the header, on line 6, were skipped"
    assert not any("has no name" in line for line in found)  # Kahoot's numbering column
