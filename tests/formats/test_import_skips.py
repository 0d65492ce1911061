"""One odd question skips that question, not the file: every importer keeps the rest, says
which question it skipped and why at its line, and fails only when nothing is left."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from ankigen.bank.reader import parse_bank
from tests.helpers import DATA, AnkiCollection, invoke

FORMATS = DATA / "formats"
ONLY = ": only multiple-choice and true/false questions become items"
PICTURE = "is only a picture, which a choice cannot hold"


def run_import(runner: CliRunner, path: Path, *args: str) -> tuple[int, list[str]]:
    result = invoke(runner, "import", str(path), "--topic", "geo", "--lang", "en", *args)
    assert "Traceback" not in result.output
    return result.exit_code, result.stderr.splitlines()


def ids_in(bank: Path) -> list[str]:
    return re.findall(r"^  - id: (\S+)$", bank.read_text(encoding="utf-8"), re.MULTILINE)


# ---- GIFT: a question with two answer blocks ---------------------------------


def test_gift_short_answer_first_block_skips_only_that_question(
    runner: CliRunner, tmp_path: Path
) -> None:
    path = FORMATS / "two_blocks.gift"
    out = tmp_path / "geo.yaml"
    status, lines = run_import(runner, path, "-o", str(out))
    assert status == 0
    assert lines == [
        f"reading {path} as gift (chosen by its extension .gift; --from sets it)",
        f"{path}:24: warning: skipped a short-answer question (its first answer block, "
        f"which Moodle reads as its answers){ONLY}",
        f"wrote {out}",
        "4 items imported, 1 skipped",
    ]
    assert ids_in(out) == [
        "capital-of-france",
        "longest-river",
        "highest-mountain",
        "euro-in-slovakia",
    ]


@pytest.mark.parametrize(
    "blocks",
    [
        "After {1:MC:~a~=an~the} trip, he became {1:MC:~a~an~=the} first man.",
        "After {=an ~a ~the} trip, he became {:MULTICHOICE_S:~a~an~=the} first man.",
        "Name {:SA:=Paris} and {2:NUMERICAL:=3:0.1}.",
    ],
)
def test_gift_holding_moodles_embedded_answers_is_a_cloze_skipped(
    runner: CliRunner, tmp_path: Path, blocks: str
) -> None:
    """Teachers paste Cloze blocks into GIFT files; Moodle's GIFT reader takes the first
    for the choices ("1:MC:" one of them) and leaves the others in the text, answers and
    all: a card that shows its own answer. A Cloze question cannot be an item."""
    path = tmp_path / "cloze.gift"
    path.write_text(f"::Rev1::{blocks}\n\n::Fine::Which? {{=a ~b}}\n", "utf-8")
    out = tmp_path / "geo.yaml"
    status, lines = run_import(runner, path, "-o", str(out))
    assert status == 0
    assert f"{path}:1: warning: skipped a cloze (embedded answers) question{ONLY}" in lines
    assert lines[-1] == "1 item imported, 1 skipped"
    assert ids_in(out) == ["fine"]


@pytest.mark.parametrize(
    ("text", "question", "choices", "warned_at"),
    [
        # the text ends with a '}': Moodle leaves no blank where the first block was
        (
            "// question: 7  name: two in one\n::Two in one::What is 2+2? {=4 ~5 ~22}\n"
            "And 3+3? {=6 ~9}",
            "What is 2+2? \nAnd 3+3? {=6 ~9}",
            ("4", "5", "22"),
            3,
        ),
        # missing word: the blank stays where the first block was
        (
            "Grant is {~buried =entombed ~living} in {=Grant's} tomb.",
            "Grant is _____ in {=Grant's} tomb.",
            ("buried", "entombed", "living"),
            1,
        ),
    ],
)
def test_gift_multiple_choice_first_block_is_read_as_moodle_reads_it(
    tmp_path: Path, text: str, question: str, choices: tuple[str, ...], warned_at: int
) -> None:
    from ankigen.formats.convert import import_file

    path = tmp_path / "q.gift"
    path.write_text(text + "\n\nAnd a plain one? {=yes ~no}\n", encoding="utf-8")
    imported = import_file(path, "t", "en")
    assert [str(d) for d in imported.diagnostics] == [
        f"{path}:{warned_at}: warning: more than one answer block: the first is the choices "
        "and the rest is question text, braces and all, as Moodle reads it (write \\{ and \\} "
        "for literal braces)"
    ]
    first = imported.source.questions[0]
    assert (first.question, tuple(c.text for c in first.choices)) == (question, choices)
    assert len(imported.source.questions) == 2 and imported.source.skipped == 0


def test_gift_tilde_equals_marks_the_right_choice_as_moodle_reads_it(tmp_path: Path) -> None:
    """`~=right`, common in published files, is `=right`: Moodle's reader turns `=` into
    `~=` and splits on `~`, and an answer without text is never saved, so `~~` leaves no
    empty choice either. Before, each such question was skipped as having an empty
    choice, and a file of them was refused."""
    from ankigen.formats.convert import import_file

    path = tmp_path / "review.gift"
    path.write_text(
        "::u6-1:: The tunnel goes {~away~down~=through} the hill.\n\n"
        "::u6-2:: Spaced out {\n  ~away\n  ~=through # yes\n}\n\n"
        "::u6-3:: Doubled tildes {~a~~=b}\n",
        encoding="utf-8",
    )
    imported = import_file(path, "t", "en")
    got = [
        (q.question, [(c.text, c.correct) for c in q.choices]) for q in imported.source.questions
    ]
    assert got == [
        ("The tunnel goes _____ the hill.", [("away", False), ("down", False), ("through", True)]),
        ("Spaced out", [("away", False), ("through", True)]),
        ("Doubled tildes", [("a", False), ("b", True)]),
    ]
    assert imported.source.skipped == 0 and imported.diagnostics == ()


def test_gift_categories_titles_and_empty_wrong_choices_as_course_files_write_them(
    tmp_path: Path,
) -> None:
    """Published course files stack `$CATEGORY:` lines above a question, or start the next
    question's category right after a question's last line; give a question no text but
    its `::title::`; and leave a wrong choice with no text (`~%-25%~path`). Before, the
    category lines went into the question text, the title-only questions were refused
    (a file of them failed), and the empty choice skipped its question."""
    from ankigen.formats.convert import import_file

    path = tmp_path / "course.gift"
    path.write_text(
        "$CATEGORY: $course$/top/Unit 1\n$CATEGORY: $course$/top/Unit 1/Shards\n"
        "::First:: What holds a shard? {=a rank ~no one}\n"
        "$CATEGORY: $course$/top/Unit 2\n"
        "::Second:: Which file? {~%-25%~/etc/hosts =/etc/passwd ~/tmp}\n\n"
        "::What is a collective?::\n{=an operation across ranks ~a file}\n",
        encoding="utf-8",
    )
    imported = import_file(path, "t", "en")
    got = [(q.question, [c.text for c in q.choices], q.tags) for q in imported.source.questions]
    assert got == [
        ("What holds a shard?", ["a rank", "no one"], ("Unit_1::Shards",)),
        ("Which file?", ["/etc/hosts", "/etc/passwd", "/tmp"], ("Unit_2",)),
        ("What is a collective?", ["an operation across ranks", "a file"], ("Unit_2",)),
    ]
    assert imported.source.title == "Unit 1"
    assert [(d.line, d.message) for d in imported.diagnostics] == [
        (5, "a choice with no text was dropped: '%-25%'"),
        (7, "the question has no text but its title, which becomes its text"),
    ]


# ---- Moodle XML: choices that are only a picture -----------------------------


def test_moodle_xml_picture_choices_skip_their_questions_and_their_images(
    runner: CliRunner, tmp_path: Path
) -> None:
    path = FORMATS / "moodle_pictures.xml"
    out = tmp_path / "geo.yaml"
    media = tmp_path / "media"
    status, lines = run_import(runner, path, "-o", str(out), "--media", str(media))
    assert status == 0, lines
    images = sorted((media / "geo").iterdir())
    # only the kept question's picture: the Irish question's map goes with it
    assert len(images) == 1
    assert lines == [
        f"reading {path} as moodle-xml (chosen by its extension .xml; --from sets it)",
        f"{path}:196: warning: choice 2 {PICTURE}; question 'Flag of Italy' skipped",
        f"{path}:395: warning: choice 2 {PICTURE}; question 'Flag of Ireland' skipped",
        f"wrote {images[0]}",
        f"wrote {out}",
        "8 items imported, 2 skipped",
    ]
    assert ids_in(out) == [
        "capital-of-france",
        "longest-river",
        "highest-mountain",
        "this-flag",
        "baltic-states",
        "landlocked",
        "largest-island",
        "euro",
    ]
    bank, problems = parse_bank(str(out), out.read_bytes())
    assert bank is not None, problems
    assert [i.image for i in bank.items if i.image] == [f"geo/{images[0].name}"]


def test_an_inline_svg_in_a_question_text_is_dropped_with_a_warning(tmp_path: Path) -> None:
    from ankigen.formats.convert import import_file

    path = tmp_path / "q.xml"
    path.write_text(
        '<quiz>\n<question type="multichoice"><name><text>n</text></name>\n'
        '<questiontext format="html"><text><![CDATA[<p>Which flag is this?</p>'
        '<svg width="3" height="2"><text x="0" y="1">IE</text></svg>]]></text></questiontext>\n'
        '<answer fraction="100"><text>Ireland</text></answer>\n'
        '<answer fraction="0"><text>Italy</text></answer>\n</question>\n</quiz>\n',
        encoding="utf-8",
    )
    imported = import_file(path, "t", "en")
    # the drawing's label is no text of the question
    assert imported.source.questions[0].question == "Which flag is this?"
    assert [str(d) for d in imported.diagnostics] == [
        f"{path}:3: warning: an inline <svg> picture was dropped: an item's image is an "
        'embedded image file (<img src="@@PLUGINFILE@@/...">)'
    ]


# ---- nothing left: exit 1, nothing written -----------------------------------


@pytest.mark.parametrize(
    ("name", "text", "warning"),
    [
        (
            "odd.gift",
            "::A::The capital of France is {=Paris =paris} and of Italy {=Rome ~Milan}.\n\n"
            # a GIFT export escapes the '=' of an attribute
            "::B::Pick {=<img src\\='a.png'> ~<img src\\='b.png'>}\n",
            f"3: warning: choice 1 {PICTURE}; question 'B' skipped",
        ),
        (
            "odd.xml",
            '<?xml version="1.0" encoding="UTF-8"?>\n<quiz>\n'
            '  <question type="multichoice">\n    <name><text>Flag</text></name>\n'
            '    <questiontext format="html"><text>Which flag?</text></questiontext>\n'
            '    <answer fraction="100" format="html">\n'
            '      <text><![CDATA[<p><img src="@@PLUGINFILE@@/x.png" alt=""></p>]]></text>\n'
            "    </answer>\n"
            '    <answer fraction="0" format="html"><text>None</text></answer>\n'
            "  </question>\n</quiz>\n",
            f"6: warning: choice 1 {PICTURE}; question 'Flag' skipped",
        ),
    ],
)
def test_a_file_of_odd_questions_only_fails_and_writes_nothing(
    runner: CliRunner, tmp_path: Path, name: str, text: str, warning: str
) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    out = tmp_path / "geo.yaml"
    media = tmp_path / "media"
    status, lines = run_import(runner, path, "-o", str(out), "--media", str(media))
    assert status == 1
    skipped = 2 if name.endswith(".gift") else 1
    assert f"{path}:1: error: no question in it can become an item ({skipped} skipped)" in lines
    assert f"{path}:{warning}" in lines
    assert lines[-1] == "1 error; nothing was written"
    assert not out.exists() and not media.exists()


# ---- the other readers --------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "text", "expected", "kept"),
    [
        (
            "q.aiken",
            "Order?\nA. one\nC. three\nANSWER: A\n\n"
            "Fine?\nA. yes\nB. no\nANSWER: A\n\n"
            "Range?\nA. one\nB. two\nANSWER: E\n\n"
            "Run on?\nA. one\nB. two\nNext question without a blank line?\nA. x\nB. y\n"
            "ANSWER: B\n\n"
            "No choices at the end",
            [
                "3: warning: choice C is out of order: choices go A, B, C ...; question skipped",
                "14: warning: ANSWER: names E; the choices are A to B; question skipped",
                "16: warning: this question's choices are followed by line 19, neither a "
                "choice ('A. ...') nor its ANSWER: line (is a blank line missing between two "
                "questions?); question skipped",
                "24: warning: a question without choices ('A. ...') at the end of the file; "
                "question skipped",
            ],
            ["Fine?", "Next question without a blank line?"],
        ),
        (
            "q.csv",
            "id,question,choice1,choice2,choice3,answer,explanation,shuffle\n"
            "fine,Fine?,a,b,,1,ok,\n"
            "gap,Gap?,a,,c,1,ok,\n"
            "range,Range?,a,b,,3,ok,\n"
            "flag,Flag?,a,b,,1,ok,maybe\n"
            "also,Also fine?,a,b,c,2,ok,\n",
            [
                "3: warning: choice2 is empty but choice3 is not; question 'gap' skipped",
                "4: warning: answer '3' is out of range: choices are 1 to 2; "
                "question 'range' skipped",
                "5: warning: shuffle 'maybe' must be true or false; question 'flag' skipped",
            ],
            ["Fine?", "Also fine?"],
        ),
        (
            "q.txt",
            "A page\n\n1. Fine?\n- a\n- b\n\n2. One choice?\n- a\n\n3. Also fine?\n- c\n- d\n",
            ["7: warning: this question has 1 choices; an item needs 2 to 8; question skipped"],
            ["Fine?", "Also fine?"],
        ),
    ],
)
def test_other_readers_skip_a_bad_question_and_keep_the_rest(
    tmp_path: Path, name: str, text: str, expected: list[str], kept: list[str]
) -> None:
    from ankigen.formats.convert import import_file

    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    imported = import_file(path, "t", "en")
    warnings = [str(d) for d in imported.diagnostics if "skipped" in d.message]
    assert warnings == [f"{path}:{line}" for line in expected]
    assert [q.question for q in imported.source.questions] == kept
    assert imported.source.skipped == len(expected)


# ---- the banks build, and Anki imports their packages ------------------------


def test_the_kept_questions_build_and_import_into_anki(
    project: Path, runner: CliRunner, collection: AnkiCollection
) -> None:
    for name, topic in (("moodle_pictures.xml", "flags"), ("two_blocks.gift", "capitals")):
        out = project / "banks" / topic / "en.yaml"
        out.parent.mkdir(parents=True)
        result = invoke(
            runner, "import", str(FORMATS / name), "--topic", topic, "--lang", "en", "-o", str(out)
        )
        assert result.exit_code == 0, result.output
        assert "TODO" not in out.read_text(encoding="utf-8")
    result = invoke(runner, "build")
    assert result.exit_code == 0, result.output
    for package in sorted((project / "out").glob("*.apkg")):
        assert collection.import_package(package).conflicting == 0
    notes = collection.notes()
    assert len(notes) == 8 + 4
    assert {n["ItemId"] for n in notes} >= {"this-flag", "euro", "euro-in-slovakia"}
    assert not {n["ItemId"] for n in notes} & {"flag-of-italy", "flag-of-ireland", "two-capitals"}
    flag = collection.note_by_item("this-flag")
    assert flag["Image"].startswith('<img src="') and "A blue flag" in flag["Image"]
    assert len(list(Path(collection.col.media.dir()).glob("*.png"))) == 1
