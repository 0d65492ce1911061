"""`ankigen import --from gift|aiken|moodle-xml|csv`: every mapping rule, every bad input."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from ankigen.bank.model import Bank, Item
from ankigen.bank.reader import parse_bank
from ankigen.core.errors import InvalidBanks
from ankigen.formats.convert import import_file
from ankigen.formats.model import choice_whys
from ankigen.formats.registry import detect, formats
from tests.helpers import DATA, AnkiCollection, invoke

FORMATS = DATA / "formats"


def bank_of(name: str, language: str = "en", fmt: str | None = None, topic: str = "t") -> Bank:
    """Import a sample and load the written bank, with its TODOs filled in."""
    imported = import_file(FORMATS / name, topic, language, fmt)
    bank, problems = parse_bank("b.yaml", fill_todos(imported.bank).encode())
    assert bank is not None, problems
    return bank


def fill_todos(text: str) -> str:
    text = re.sub(r"answer: ~  # TODO.*", "answer: 1", text)
    return text.replace('explanation: ""  # TODO: why the answer is right', 'explanation: "x"')


def items(bank: Bank) -> dict[str, tuple[str, tuple[str, ...], tuple[int, ...], str]]:
    return {i.id: (i.question, i.choices, i.answer, i.explanation) for i in bank.items}


def by_id(bank: Bank, item_id: str) -> Item:
    return next(i for i in bank.items if i.id == item_id)


def assert_feedback(item: Item, general: str, whys: tuple[str, ...]) -> None:
    """Each choice's feedback is its why; the general feedback is the explanation."""
    assert (item.explanation, choice_whys(item)) == (general, whys)


# ---- GIFT -----------------------------------------------------------------


def test_gift_every_mapping_rule() -> None:
    bank = bank_of("multilingual.gift", "bn")
    got = items(bank)
    # ::title:: -> slug id; #feedback -> each choice's why; ####general feedback -> explanation
    assert got["all-reduce-sum"][:3] == (
        "Which collective leaves every rank with the sum of all gradients?",
        ("All-reduce", "Broadcast", "Scatter"),
        (1,),
    )
    assert_feedback(
        by_id(bank, "all-reduce-sum"),
        "All-reduce is reduce + broadcast in one step.",
        (
            "Every rank ends with the same sum.",
            "It copies one rank's tensor; nothing is summed.",
            "It splits a tensor; nothing is summed.",
        ),
    )
    # weighted: every positive weight is correct
    assert got["two-of-three"][2] == (1, 2)
    # escapes: \: \~ \= \# \{ \} \\ and \n
    assert got["escapes"][0] == "Which symbols does GIFT reserve: ~ = # { } and \\?"
    assert got["escapes"][1] == ("All of them: ~ = # { } \\", "None")
    assert got["escapes"][3].startswith("They are written with a backslash: \\~ and \\=.\nOn two")
    # non-Latin titles fall back to the position; the text is kept exactly
    assert got["q4"][:3] == ("কোন কৌশল প্যারামিটার ভাগ করে?", ("FSDP", "DDP", "কোনটিই নয়"), (1,))
    assert got["q5"][0] == "ما الذي يفعله all-reduce؟"
    # true/false: two choices in the bank's language, not shuffled, feedback on each
    tf = by_id(bank, "true-or-false")
    assert (tf.choices, tf.answer, tf.shuffle) == (("সত্য", "মিথ্যা"), (1,), False)
    assert_feedback(
        tf,
        "Sharding (FSDP, ZeRO-3) removes the copies.",
        ("Yes: every GPU holds it all.", "No: plain data parallelism copies the model."),
    )
    assert got["no-brackets-false"][2] == (2,)
    # [html] and [markdown] reduced to the inline tags
    assert got["html-text"][:2] == (
        "Pick the <b>fastest</b> interconnect & <i>why</i>:",
        ("NV<b>Link</b>", "PCIe"),
    )
    assert got["markdown-text"][:2] == (
        "Which call <b>starts</b> the process group?",
        ("<code>init_process_group</code>", "<code>barrier</code>"),
    )
    # missing-word format and $CATEGORY -> tags; an untitled question is named by its
    # place in the file, the five other kinds skipped before it counted
    assert got["q15"][0] == "Missing word: ZeRO _____ the optimizer state."
    assert bank.items[0].tags == ("Distributed_training::Collectives",)
    assert bank.items[-1].tags == ("Distributed_training::Other_kinds",)
    assert bank.title == "Collectives"


def test_a_warning_names_the_other_questions_line_in_the_file(tmp_path: Path) -> None:
    """Checks of the bank name other items by their lines in the bank; an import says the
    line of the file the teacher has, where the bank's would point nowhere."""
    path = tmp_path / "twice.gift"
    path.write_text(
        "// a comment\n// another\n\n\n::first:: Grant is buried in Grant's tomb.{TRUE}\n\n"
        "::second:: Grant is buried in Grant's tomb.{FALSE}\n",
        encoding="utf-8",
    )
    imported = import_file(path, "t", "en")
    assert [str(d) for d in imported.diagnostics] == [
        f"{path}:7: warning: item 'second': the same question as item 'first' (line 5)"
    ]


def test_gift_other_kinds_are_skipped_with_a_warning_each(runner: CliRunner) -> None:
    path = FORMATS / "multilingual.gift"
    result = invoke(runner, "import", str(path), "--topic", "t", "--lang", "en")
    assert result.exit_code == 0
    warnings = [line for line in result.stderr.splitlines() if "warning:" in line]
    kinds = ["an essay", "a numerical", "a matching", "a short-answer", "a description"]
    assert warnings == [
        f"{path}:{line}: warning: skipped {kind}"
        + (" question" if kind != "a description" else " (no answers)")
        + ": only multiple-choice and true/false questions become items"
        for line, kind in zip([43, 45, 47, 49, 51], kinds, strict=True)
    ]
    assert result.stderr.startswith(f"reading {path} as gift (chosen by its extension .gift")
    assert result.stderr.endswith("10 items imported, 5 skipped\n")
    assert result.stdout.count("  - id: ") == 10


def test_gift_unclosed_brace_skips_its_question(runner: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "bank.yaml"
    path = FORMATS / "unclosed_brace.gift"
    result = invoke(runner, "import", str(path), "--topic", "t", "--lang", "en", "-o", str(out))
    assert result.exit_code == 0
    assert result.output == (
        f"reading {path} as gift (chosen by its extension .gift; --from sets it)\n"
        f"{path}:3: warning: unclosed brace: this '{{' has no '}}' before the next blank line "
        "(write \\{ for a literal brace); question 'broken' skipped\n"
        f"wrote {out}; fill in the 2 places marked TODO\n2 items imported, 1 skipped\n"
    )
    assert re.findall(r"  - id: (.*)", out.read_text(encoding="utf-8")) == ["ok", "also-ok"]


SKIPPED = "; question skipped"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "Q {=a ~b",
            f"1: warning: unclosed brace: this '{{' has no '}}' before the next blank line (write \\{{ for a literal brace){SKIPPED}",
        ),
        (
            "Q } {=a ~b}",
            f"1: warning: '}}' without an opening '{{' (write \\}} for a literal brace){SKIPPED}",
        ),
        (
            "Q {=a ~b}\n}",
            f"2: warning: '}}' without an opening '{{' (write \\}} for a literal brace){SKIPPED}",
        ),
        (
            "Q {=a ~b} and {=c ~d}",
            "1: warning: more than one answer block: the first is the choices",
        ),
        (
            "Q {=a ~b ~c ~d ~e ~f ~g ~h ~i}",
            f"1: warning: this question has 9 choices; an item needs 2 to 8{SKIPPED}",
        ),
        ("::t::Q {~a ~b}", "1: warning: no choice has a positive weight"),
        # a penalty a teacher set on a wrong choice: the bank has no marks to keep it in
        ("::t::Q {=a ~%-50%b ~c}", "1: warning: the negative marks of choice(s) 2 (-50%) are"),
        # an empty choice is no choice, as in Moodle, which saves no answer without text
        (
            "\n\n// c\nQ {=a ~}",
            f"4: warning: this question has 1 choices; an item needs 2 to 8{SKIPPED}",
        ),
        ("::t::[plain]Q {=#why ~a}", "1: warning: choice 1 is empty; question 't' skipped"),
        (
            "Q {=a ~<img src\\=x.png>}",
            f"1: warning: choice 2 is only a picture, which a choice cannot hold{SKIPPED}",
        ),
        ("Q {=a ~%50%b ~c}", "1: warning: choice(s) 2 (50%) give partial credit in a single"),
    ],
)
def test_gift_bad_questions(tmp_path: Path, text: str, message: str) -> None:
    check_import(tmp_path / "q.gift", text, message)


def test_gift_a_brace_inside_the_answers_is_text_as_moodle_reads_it(tmp_path: Path) -> None:
    """Moodle's answers run from the first '{' to the first '}' (qformat_gift::readquestion),
    so `{=s \\= {1, 2 ~[1, 2]}` is two choices, the first `s = {1, 2`: read so, with a
    warning, where the whole question was refused."""
    path = tmp_path / "q.gift"
    path.write_text("::a::Which is a set? {=s \\= {1, 2 ~[1, 2]}\n", encoding="utf-8")
    imported = import_file(path, "t", "en")
    assert [str(d) for d in imported.diagnostics] == [
        f"{path}:1: warning: a '{{' inside the answers is read as text, as Moodle reads it "
        "(write \\{ to say so)"
    ]
    bank, _ = parse_bank("b.yaml", fill_todos(imported.bank).encode())
    assert bank is not None
    item = bank.items[0]
    assert list(item.choices) == ["s = {1, 2", "[1, 2]"]
    assert item.answer == (1,)


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        # Python-Markdown before 3.11 recurses once per nested list level; 3.11 caps the
        # nesting itself and renders: either way a warning, never a traceback
        (
            "q.gift",
            "::a::[markdown]" + "- " * 500 + "x {=x ~y}",
            (
                "1: warning: a Markdown text nested too deep to render; question 'a' skipped",
                "1: warning: a list became lines starting with •",
            ),
        ),
        # and its time grows faster than linearly with the nesting
        (
            "q.gift",
            "::a::[markdown]" + "".join("  " * i + "- a\\n" for i in range(400)) + " {=x ~y}",
            "1: warning: a Markdown text of ",
        ),
        (
            "q.xml",
            '<quiz><question type="multichoice"><questiontext format="markdown"><text>'
            + "- " * 600
            + "x</text></questiontext></question></quiz>",
            (
                "1: warning: a Markdown text nested too deep to render; question skipped",
                "1: warning: this question has 0 choices",
            ),
        ),
        (
            "q.xml",
            '<?xml version="1.0" encoding="x-bogus"?>\n<quiz/>',
            "1: error: the file declares the encoding 'x-bogus', which can't be read",
        ),
        ("q.xml", '<?xml version="1.0" encoding="utf-7"?>\n<quiz/>', "1: error: the file declares"),
    ],
)
def test_hostile_markdown_and_encodings(
    tmp_path: Path, name: str, text: str, message: str | tuple[str, ...]
) -> None:
    check_import(tmp_path / name, text, message)


def test_a_fifo_is_refused_not_waited_on(tmp_path: Path, runner: CliRunner) -> None:
    fifo = tmp_path / "q.gift"
    os.mkfifo(fifo)
    for options in (["--from", "gift"], []):
        result = invoke(runner, "import", str(fifo), "--topic", "t", "--lang", "en", *options)
        assert result.exit_code == 1
        assert result.stderr == f"error: {fifo}: not a regular file\n"


def check_import(path: Path, text: str, message: str | tuple[str, ...]) -> None:
    """The file read without a traceback, with the message (or one of the messages)."""
    path.write_text(text, encoding="utf-8")
    try:
        found = [str(d) for d in import_file(path, "t", "en").diagnostics]
    except InvalidBanks as error:
        found = [str(d) for d in error.diagnostics]
    messages = (message,) if isinstance(message, str) else message
    assert any(f"{path}:{one}" in line for line in found for one in messages), found


# ---- Aiken ----------------------------------------------------------------


def test_aiken_stems_choices_and_answers() -> None:
    imported = import_file(FORMATS / "hindi.aiken.txt", "t", "hi")
    assert imported.format.name == "aiken" and imported.chosen_by == "its content"
    bank, _ = parse_bank("b.yaml", fill_todos(imported.bank).encode())
    assert bank is not None
    got = items(bank)
    assert got["q1"][:3] == (
        "डेटा पैरेलल में हर GPU क्या रखता है?",
        ("मॉडल की पूरी प्रति", "मॉडल का एक टुकड़ा", "कुछ नहीं"),
        (1,),
    )
    assert got["q2"][:3] == (
        "Which of these\nare collectives?",
        ("All-reduce", "Broadcast", "Optimizer", "All-gather"),
        (1, 2, 4),
    )
    assert [str(d) for d in imported.diagnostics] == [
        f"{FORMATS / 'hindi.aiken.txt'}:14: warning: no ANSWER: line; the answer is left as TODO"
    ]
    assert imported.bank.count("answer: ~  # TODO") == 1
    assert imported.bank.count('explanation: ""  # TODO') == 4


def test_aiken_bad_questions_are_skipped_at_their_lines() -> None:
    with pytest.raises(InvalidBanks) as error:
        import_file(FORMATS / "bad.aiken", "t", "en")
    path = FORMATS / "bad.aiken"
    # every question is skipped: nothing is left to write
    assert [str(d) for d in error.value.diagnostics] == [
        f"{path}:1: error: no question in it can become an item (2 skipped)",
        f"{path}:3: warning: choice C is out of order: choices go A, B, C ...; question skipped",
        f"{path}:9: warning: ANSWER: names E; the choices are A to B; question skipped",
    ]


def test_aiken_choices_without_a_space_as_moodle_reads_them(tmp_path: Path) -> None:
    """Moodle's reader takes `B)Correct` as a choice (`/^[A-Z][).][ \\t]?/`, its test file
    `aiken_errors.txt` has such a question); here as the next letter only, so that a stem
    going on with "U.S. ..." stays stem."""
    path = tmp_path / "exemple.txt"
    path.write_text(
        "Quel format Moodle lit-il?\nA.XML\nB.Aiken\nC.PHP\nANSWER: B\n\n"
        "Which agency is\nU.S. federal?\nA) NASA\nB)ESA\nANSWER: A\n",
        encoding="utf-8",
    )
    imported = import_file(path, "t", "fr")
    assert imported.format.name == "aiken" and imported.chosen_by == "its content"
    got = [
        (q.question, [(c.text, c.correct) for c in q.choices]) for q in imported.source.questions
    ]
    assert got == [
        ("Quel format Moodle lit-il?", [("XML", False), ("Aiken", True), ("PHP", False)]),
        ("Which agency is\nU.S. federal?", [("NASA", True), ("ESA", False)]),
    ]
    assert imported.diagnostics == ()


def test_aiken_lines_without_choices_before_a_blank_line_are_no_question(
    tmp_path: Path,
) -> None:
    """A header, or a stray `Feedback:` line after an `ANSWER:`, went into the next
    question's stem with no warning; Moodle starts a new question at each such line and
    reports the unfinished one. Skipped here, with a warning at their first line."""
    path = tmp_path / "quiz.txt"
    path.write_text(
        "category\nCORE\n\nWhich collective sums?\nA. All-reduce\nB. Broadcast\nANSWER: A\n"
        "Feedback: obviously\n\nWhich copies?\nA. All-reduce\nB. Broadcast\nANSWER: B\n",
        encoding="utf-8",
    )
    imported = import_file(path, "t", "en")
    assert [q.question for q in imported.source.questions] == [
        "Which collective sums?",
        "Which copies?",
    ]
    assert [(d.line, d.message) for d in imported.diagnostics] == [
        (1, "lines without choices ('A. ...') before a blank line; question skipped"),
        (8, "lines without choices ('A. ...') before a blank line; question skipped"),
    ]


# ---- Moodle XML -----------------------------------------------------------


def test_moodle_xml_multichoice_truefalse_images_html(tmp_path: Path, runner: CliRunner) -> None:
    out = tmp_path / "banks" / "dp" / "ur.yaml"
    out.parent.mkdir(parents=True)
    media = tmp_path / "media"
    path = FORMATS / "quiz_ur.xml"
    result = invoke(
        runner,
        "import",
        str(path),
        "--topic",
        "dp",
        "--lang",
        "ur",
        "-o",
        str(out),
        "--media",
        str(media),
    )
    assert result.exit_code == 0, result.output
    images = list((media / "dp").iterdir())
    assert len(images) == 1 and images[0].suffix == ".png"
    assert result.stderr.splitlines() == [
        f"reading {path} as moodle-xml (chosen by its extension .xml; --from sets it)",
        f"{path}:46: warning: dropped <script> and its content from the text",
        f"{path}:66: warning: skipped a short-answer question: only multiple-choice and "
        "true/false questions become items",
        f"{path}:72: warning: skipped an essay question: only multiple-choice and "
        "true/false questions become items",
        f"wrote {images[0]}",
        # with a why per choice, the question whose only feedback is per choice needs an explanation
        f"wrote {out}; fill in the 1 place marked TODO",
        "3 items imported, 2 skipped",
    ]
    bank, problems = parse_bank("b.yaml", fill_todos(out.read_text(encoding="utf-8")).encode())
    assert bank is not None, problems
    first, second, third = bank.items
    assert first.id == "dp-full-copy"  # <idnumber> wins over <name>
    assert first.question == "ڈیٹا متوازی میں ہر <b>GPU</b> کیا رکھتا ہے؟"
    assert first.choices == ("پورا ماڈل", "ماڈل کا ایک حصہ", "<کچھ نہیں>")
    assert_feedback(
        first,
        "ہر GPU پورے ماڈل کی <i>نقل</i> رکھتا ہے & اپنا ڈیٹا۔",
        ("درست۔", "یہ <b>FSDP</b> ہے۔", ""),
    )
    assert first.image == f"dp/{images[0].name}" and first.image_alt == "چار GPU ایک دائرے میں"
    assert first.tags == ("Data_parallel::اردو", "data_parallel")
    assert first.shuffle is True
    assert second.id == "pick-two-collectives"
    assert second.question == "Which two are collectives?\nPick both."
    assert (second.answer, second.shuffle) == ((1, 2), False)
    assert (third.choices, third.answer, third.shuffle) == (("درست", "غلط"), (1,), False)
    assert bank.title == "اردو"


@pytest.mark.parametrize(
    ("name", "line", "message"),
    [
        ("truncated.xml", 6, "not well-formed XML (no element found); is the file truncated?"),
        ("xxe.xml", 2, "the file has a DTD (<!DOCTYPE ...>)"),
        ("billion_laughs.xml", 2, "the file has a DTD (<!DOCTYPE ...>)"),
    ],
)
def test_moodle_xml_bad_input(runner: CliRunner, name: str, line: int, message: str) -> None:
    path = FORMATS / name
    result = invoke(runner, "import", str(path), "--topic", "t", "--lang", "en")
    assert result.exit_code == 1
    assert f"{path}:{line}: error: {message}" in result.stderr
    assert "Traceback" not in result.output and result.stdout == ""


@pytest.mark.parametrize(
    ("xml", "column", "said"),
    [
        ("<question type=multichoice>", 16, "a character XML does not allow there (an attribute's"),
        ("<question><name><text>A & B</text></name>", 26, "a bare & or < in text"),
        ("<question><name><text>A</name>", 26, "this closing tag is not that of the element"),
    ],
)
def test_moodle_xml_not_well_formed_is_said_where_and_why(
    runner: CliRunner, tmp_path: Path, xml: str, column: int, said: str
) -> None:
    """expat's "not well-formed (invalid token)" came with "is the file truncated?",
    wrong for a file whole but for one unquoted attribute (a real file's), and no column."""
    path = tmp_path / "bad.xml"
    path.write_text(f'<?xml version="1.0"?>\n<quiz>\n{xml}\n</quiz>\n', "utf-8")
    result = invoke(runner, "import", str(path), "--topic", "t", "--lang", "en")
    assert result.exit_code == 1
    assert f"{path}:3: error: not well-formed XML at column {column}: " in result.stderr
    assert said in result.stderr and "truncated" not in result.stderr


def test_moodle_xml_cdata_not_closed_is_said_where_it_opens(
    runner: CliRunner, tmp_path: Path
) -> None:
    """expat says "unclosed CDATA section" at the file's end: the line was the last one,
    and the file, whole but for a `]]>` mistyped, was asked whether it was truncated."""
    path = tmp_path / "bad.xml"
    path.write_text(
        '<?xml version="1.0"?>\n<quiz>\n<question type="multichoice"><name><text>'
        "<![CDATA[Q1]]></text></name>\n<questiontext><text><![CDATA[<p>Which?</p>]]</text>"
        "\n</questiontext></question>\n</quiz>\n",
        "utf-8",
    )
    result = invoke(runner, "import", str(path), "--topic", "t", "--lang", "en")
    assert result.exit_code == 1
    assert f"{path}:4: error: a CDATA section is not closed: no ']]>' after this" in result.stderr


def test_moodle_xml_image_pillow_cannot_read_skips_its_question(runner: CliRunner) -> None:
    path = FORMATS / "not_an_image.xml"
    result = invoke(runner, "import", str(path), "--topic", "t", "--lang", "en")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[1:] == [
        f"{path}:1: error: no question in it can become an item (1 skipped)",
        f"{path}:7: warning: 'fake.png' is not an image Pillow can read; "
        "question 'bad image' skipped",
        "1 error; nothing was written",
    ]
    assert result.stdout == ""


def test_moodle_xml_xxe_never_reads_the_file(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET", encoding="utf-8")
    path = tmp_path / "x.xml"
    path.write_text(
        (FORMATS / "xxe.xml").read_text(encoding="utf-8").replace("/etc/passwd", str(secret)),
        encoding="utf-8",
    )
    with pytest.raises(InvalidBanks) as error:
        import_file(path, "t", "en")
    assert "TOP-SECRET" not in str(error.value)


def test_moodle_xml_wrong_root_and_unknown_question_type(tmp_path: Path) -> None:
    path = tmp_path / "x.xml"
    path.write_text("<?xml version='1.0'?>\n<html><body/></html>\n", encoding="utf-8")
    with pytest.raises(InvalidBanks, match=r"x.xml:2: error: the root element is <html>"):
        import_file(path, "t", "en", "moodle-xml")
    path.write_text(
        '<quiz>\n<question type="ordering"><name><text>o</text></name></question>\n</quiz>',
        encoding="utf-8",
    )
    # nothing to write: the skip is said, and an empty bank, which no build takes, is not
    with pytest.raises(InvalidBanks) as raised:
        import_file(path, "t", "en")
    assert [str(d) for d in raised.value.diagnostics] == [
        f"{path}:1: error: no question in it can become an item (1 skipped)",
        f"{path}:2: warning: skipped an ordering question: only multiple-choice and "
        "true/false questions become items",
    ]


def test_moodle_xml_inline_data_images_are_kept_as_embedded_files_are(
    tmp_path: Path, runner: CliRunner
) -> None:
    """A picture pasted into Moodle's editor is written into the text (`data:` URL), not
    as a `<file>`: it is the question's image. Before, it was dropped with a warning
    that it was "not embedded", printing its kilobytes of base64."""
    import base64
    import io

    from PIL import Image

    picture = io.BytesIO()
    Image.new("RGB", (40, 20), (0, 0, 255)).save(picture, "PNG")
    png = base64.b64encode(picture.getvalue()).decode()
    svg = base64.b64encode(b'<svg xmlns="http://www.w3.org/2000/svg"/>').decode()
    question = (
        '<question type="multichoice"><name><text>{name}</text></name>'
        '<questiontext format="html"><text><![CDATA[<p>Its colour ({name})?</p>'
        '<img src="data:image/{kind};base64,{data}" alt="A rectangle">]]></text></questiontext>'
        '<answer fraction="100"><text>blue</text></answer>'
        '<answer fraction="0"><text>red</text></answer></question>\n'
    )
    path = tmp_path / "pasted.xml"
    path.write_text(
        "<quiz>\n"
        + question.format(name="png", kind="png", data=png)
        + question.format(name="svg", kind="svg+xml", data=svg)
        + "</quiz>\n",
        encoding="utf-8",
    )
    out, media = tmp_path / "bank.yaml", tmp_path / "media"
    result = invoke(
        runner, "import", str(path), "--topic", "t", "--lang", "en", "-o", str(out),
        "--media", str(media),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    (stored,) = (media / "t").iterdir()
    assert f'image: "t/{stored.name}"' in out.read_text(encoding="utf-8")
    assert 'image_alt: "A rectangle"' in out.read_text(encoding="utf-8")
    warnings = [line for line in result.stderr.splitlines() if "warning" in line]
    assert warnings == [
        f"{path}:3: warning: inline image 'data:image/svg+xml;base64,...' is an SVG drawing; "
        "dropped"
    ]


# ---- CSV ------------------------------------------------------------------


def test_csv_with_bom_quotes_multi_answers_and_why() -> None:
    assert (FORMATS / "quiz.csv").read_bytes().startswith(b"\xef\xbb\xbf")
    bank = bank_of("quiz.csv", "yo")
    got = items(bank)
    assert got["all-reduce"][:3] == (
        "Which collective sums, then shares?",
        ("All-reduce", "Broadcast"),
        (1,),
    )
    assert_feedback(
        by_id(bank, "all-reduce"),
        "It is reduce, then broadcast.",
        ("Sums and shares.", "Only copies."),
    )
    assert got["multi"][:3] == (
        'Pick the two "sharding" methods\nover two lines',
        ("ZeRO-3", "FSDP", "DDP", "Pipeline"),
        (1, 3),
    )
    assert got["yoruba"][:3] == ("Ìbéèrè wo ni ó tọ̀nà?", ("Bẹ́ẹ̀ni", "Bẹ́ẹ̀kọ́"), (2,))
    assert got["q4"][:2] == ("日本語の質問は？", ("はい", "いいえ"))
    assert bank.items[0].tags == ("collectives", "nccl")


def test_csv_answers_by_letter_as_quiz_sheets_write_them(tmp_path: Path, runner: CliRunner) -> None:
    """Sheets with "Option A" ... columns name the answer by its letter, in either case;
    a letter that is also its own choice's text is that choice."""
    path = tmp_path / "sheet.csv"
    path.write_text(
        "Question,Option A,Option B,Option C,Option D,Answer\n"
        "Smallest particle?,a) Atom,b) Quark,c) Molecule,d) Cell,b\n"
        'Two primes?,2,4,3,9,"A, C"\n'
        "Best grade?,A,B,C,D,A\n",
        encoding="utf-8",
    )
    columns = "Option A=choice1,Option B=choice2,Option C=choice3,Option D=choice4"
    result = invoke(
        runner, "import", str(path), "--topic", "t", "--lang", "en", "--columns", columns
    )
    assert result.exit_code == 0, result.output
    bank, problems = parse_bank("b.yaml", fill_todos(result.stdout).encode())
    assert bank is not None, problems
    assert [item.answer for item in bank.items] == [(2,), (1, 3), (1,)]


def test_csv_text_under_a_nameless_column_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "q.csv"
    path.write_text("question,choice1,choice2,\nQ,a,b,note\n", encoding="utf-8")
    imported = import_file(path, "t", "en")
    assert [str(d) for d in imported.diagnostics] == [
        f"{path}:2: warning: column 4 has no name in the header; its text 'note' was ignored"
    ]


def test_excel_separator_line_and_semicolons(tmp_path: Path) -> None:
    path = tmp_path / "q.csv"
    path.write_bytes(b"sep=;\r\nquestion;choice1;choice2;answer\r\nQ, with a comma;a;b;2\r\n")
    bank = bank_of(str(path))
    assert [(i.question, i.choices, i.answer) for i in bank.items] == [
        ("Q, with a comma", ("a", "b"), (2,))
    ]
    path.write_bytes(b"question;choice1;choice2;answr\r\nQ;a;b;2\r\n")
    with pytest.raises(InvalidBanks, match=r"q.csv:1: error: unknown column 'answr'; did you"):
        import_file(path, "t", "en")


def test_tsv_without_bom_in_arabic() -> None:
    bank = bank_of("arabic.tsv", "ar")
    assert items(bank)["q1"] == (
        "ما هو FSDP؟",
        ("تجزئة كاملة", "نسخ كامل", "لا شيء"),
        (1,),
        "يجزئ المعاملات.",
    )


def test_csv_row_with_nine_choices_is_skipped(runner: CliRunner) -> None:
    path = FORMATS / "nine_choices.csv"
    result = invoke(runner, "import", str(path), "--topic", "t", "--lang", "en")
    assert result.exit_code == 0
    assert result.stderr == (
        f"reading {path} as csv (chosen by its extension .csv; --from sets it)\n"
        f"{path}:3: warning: this row has 13 cells but the header names 12 columns "
        "(a choice beyond 8, or a comma in an unquoted cell?); question 'nine' skipped\n"
        "1 item imported, 1 skipped\n"
    )
    assert re.findall(r"  - id: (.*)", result.stdout) == ["fine"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("question,choice1,choice2,choice9\n", "1: error: column 'choice9': an item has at most 8"),
        (
            "question,choice1,choise2\n",
            "1: error: unknown column 'choise2'; did you mean 'choice2'?",
        ),
        ('question,choice1,choice2\nQ,"a,b\n', "2: error: not valid CSV: unexpected end of data"),
        # a row's own problem skips the row: with no other row, nothing is left
        ("question,choice1,choice2,answer\nQ,a,b,3\n", "2: warning: answer '3' is out of range"),
        (
            "question,choice1,choice2,answer\nQ,a,b,B?\n",
            "2: warning: answer 'B?' is neither a choice",
        ),
        # a letter that is also another choice's text: which is meant is not guessed
        (
            "question,choice1,choice2,answer\nQ,b,a,A\n",
            "2: warning: answer 'A' could name choices by their letters or by their text",
        ),
        ("question,choice1,choice2,answer\nQ,a,b,C\n", "2: warning: answer 'C' is out of range"),
        ("question,choice1,choice2,choice3\nQ,a,,c\n", "2: warning: choice2 is empty but choice3"),
        ("question,choice1,choice2\n\n\nQ,a\n", "4: warning: this row has 1 choices"),
        # digits to str.isdigit() that int() refuses, and more digits than int() converts
        (
            "question,choice1,choice2,answer\nQ,a,b,\u00b2\n",
            "2: warning: answer '\u00b2' is neither",
        ),
        (
            "question,choice1,choice2,answer\nQ,a,b,\u2460\n",
            "2: warning: answer '\u2460' is neither",
        ),
        (
            "question,choice1,choice2,answer\nQ,a,b,\u0662\n",
            "2: warning: answer '\u0662' is neither",
        ),
        ("question,choice1,choice2,answer\nQ,a,b," + "9" * 5000 + "\n", "2: warning: answer '99"),
    ],
)
def test_bad_csv(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "q.csv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InvalidBanks) as error:
        import_file(path, "t", "en")
    assert any(f"{path}:{message}" in str(d) for d in error.value.diagnostics), str(error.value)


# ---- detection, options, shared rules --------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("multilingual.gift", "gift"),
        ("hindi.aiken.txt", "aiken"),
        ("quiz_ur.xml", "moodle-xml"),
        ("quiz.csv", "csv"),
        ("arabic.tsv", "csv"),
    ],
)
def test_detection(name: str, expected: str, tmp_path: Path) -> None:
    data = (FORMATS / name).read_bytes()
    assert detect(name, data)[0].name == expected
    # without a telling extension the content decides
    assert detect("quiz.txt", data)[0].name == expected


def test_the_extension_wins_unless_the_content_plainly_disagrees() -> None:
    assert detect("x.csv", b"no header here\n")[0].name == "csv"
    xml = (FORMATS / "quiz_ur.xml").read_bytes()
    fmt, why = detect("x.csv", xml)
    assert (fmt.name, why) == ("moodle-xml", "its content, though its extension is .csv")


def test_the_registry_lists_every_format_once() -> None:
    assert list(formats()) == ["page", "gift", "aiken", "moodle-xml", "csv", "apkg"]
    assert [n for n, f in formats().items() if f.write] == ["gift", "moodle-xml", "csv"]


def test_page_options_are_for_pages_only(runner: CliRunner) -> None:
    result = invoke(
        runner,
        "import",
        str(FORMATS / "quiz.csv"),
        "--from",
        "csv",
        "--topic",
        "t",
        "--lang",
        "en",
        "--choices",
        "3",
    )
    assert result.exit_code == 2
    assert "--choices is for quiz pages, not --from csv" in result.output


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "1: error: the file is empty"),
        (b"Q {=a ~b}\n\xff\xfe", "2: error: not UTF-8 text"),
        (b"Q {=a\x00 ~b}", "1: error: binary data"),
    ],
)
def test_undecodable_files(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "q.gift"
    path.write_bytes(content)
    with pytest.raises(InvalidBanks) as error:
        import_file(path, "t", "en", "gift")
    assert f"{path}:{message}" in str(error.value)


def test_duplicate_titles_get_unique_ids(tmp_path: Path) -> None:
    path = tmp_path / "q.gift"
    path.write_text("::Same::A? {=a ~b}\n\n::Same::B? {=a ~b}\n", encoding="utf-8")
    imported = import_file(path, "t", "en")
    assert "  - id: same\n" in imported.bank and "  - id: same-2\n" in imported.bank
    assert [str(d) for d in imported.diagnostics] == [
        f"{path}:3: warning: id 'same' is taken; this item is 'same-2'"
    ]


def test_names_without_latin_letters_and_long_repeated_names_give_usable_ids(
    tmp_path: Path,
) -> None:
    """`Вопрос 6` is `q6` by its number, not `6` nor its place among the questions
    imported (a question skipped before it moved it); a repeated name at the longest an
    id may be gets its suffix inside that length, where the id was one `build` refuses."""
    long = "a" * 120
    path = tmp_path / "q.gift"
    path.write_text(
        "::Вопрос 5::Essay? {}\n\n::Вопрос 6::A? {=a ~b}\n\n::Вопрос::Z? {=a ~b}\n\n"
        f"::{long}::B? {{=a ~b}}\n\n::{long}::C? {{=a ~b}}\n",
        encoding="utf-8",
    )
    imported = import_file(path, "t", "ru")
    # `Вопрос` has no number: its place in the file, the essay before it counted
    assert imported.ids == ("q6", "q3", "a" * 100, "a" * 98 + "-2")
    bank, problems = parse_bank("b.yaml", fill_todos(imported.bank).encode())
    assert bank is not None, problems


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("q.txt", "Essay?\nA) a\nANSWER: A\n\nFirst?\nA) a\nB) b\nANSWER: A\n"),
        ("q.gift", "Essay? {}\n\nFirst? {=a ~b}\n"),
        (
            "q.xml",
            '<quiz><question type="essay"><name><text></text></name></question>'
            '<question type="multichoice"><questiontext><text>First?</text></questiontext>'
            '<answer fraction="100"><text>a</text></answer>'
            '<answer fraction="0"><text>b</text></answer></question></quiz>',
        ),
        ("q.csv", "question,choice1,choice2,answer\nEssay?,a,,1\nFirst?,a,b,1\n"),
    ],
)
def test_an_unnamed_question_keeps_its_id_when_one_before_it_is_skipped(
    tmp_path: Path, name: str, text: str
) -> None:
    """Unnamed questions were `q1`, `q2` ... among the questions imported: the file's
    second question became `q1` while the first was skipped, and `q2` once the first was
    fixed, its GUID and every learner's history with it following another question. The
    id is the place in the file, skipped questions counted."""
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    imported = import_file(path, "t", "en", "aiken" if name == "q.txt" else None)
    assert imported.ids == ("q2",), [str(d) for d in imported.diagnostics]


# ---- every imported bank builds and imports into real Anki ------------------

SAMPLES = [
    ("multilingual.gift", "bn"),
    ("hindi.aiken.txt", "hi"),
    ("quiz_ur.xml", "ur"),
    ("quiz.csv", "yo"),
    ("arabic.tsv", "ar"),
]


def test_every_imported_bank_builds_and_imports_into_anki(
    project: Path, runner: CliRunner, collection: AnkiCollection
) -> None:
    expected = 0
    for number, (name, language) in enumerate(SAMPLES):
        topic = f"sample-{number}"
        out = project / "banks" / topic / f"{language}.yaml"
        out.parent.mkdir(parents=True)
        result = invoke(
            runner,
            "import",
            str(FORMATS / name),
            "--topic",
            topic,
            "--lang",
            language,
            "-o",
            str(out),
        )
        assert result.exit_code == 0, result.output
        out.write_text(fill_todos(out.read_text(encoding="utf-8")), encoding="utf-8")
        expected += int(result.stderr.splitlines()[-1].split()[0])
    result = invoke(runner, "build")
    assert result.exit_code == 0, result.output
    for package in sorted((project / "out").glob("*.apkg")):
        log = collection.import_package(package)
        assert log.conflicting == 0
    notes = collection.notes()
    assert len(notes) == expected == 10 + 4 + 3 + 4 + 1
    urdu = collection.note_by_item("dp-full-copy", "ur")
    assert urdu["Direction"] == "rtl"
    assert urdu["Image"].startswith('<img src="') and "چار GPU" in urdu["Image"]
    media = Path(collection.col.media.dir())
    assert len(list(media.glob("*.png"))) == 1
    tf = collection.note_by_item("true-or-false", "bn")
    assert "সত্য" in tf["Choices"] and tf["Shuffle"] in ("false", "0", "")
    assert collection.note_by_item("html-text", "bn")["Question"] == (
        "Pick the <b>fastest</b> interconnect &amp; <i>why</i>:"
    )


def test_moodle_xml_partial_credit_links_and_missing_files(tmp_path: Path) -> None:
    path = tmp_path / "x.xml"
    path.write_text(
        """<quiz>
<question type="multichoice">
  <name><text>Partial</text></name>
  <questiontext format="html"><text><![CDATA[Q <img src="https://example.org/a.png" alt="a">]]></text></questiontext>
  <answer fraction="100"><text>a</text></answer>
  <answer fraction="50"><text><![CDATA[b <img src="@@PLUGINFILE@@/b.png">]]></text></answer>
  <answer fraction="0"><text>c</text></answer>
</question>
<question type="multichoice">
  <name><text>Missing file</text></name>
  <questiontext format="html"><text><![CDATA[Q2 <img src="@@PLUGINFILE@@/gone.png">]]></text></questiontext>
  <answer fraction="100"><text>a</text></answer>
  <answer fraction="0"><text>b</text></answer>
</question>
</quiz>
""",
        encoding="utf-8",
    )
    done = import_file(path, "t", "en")
    assert [str(d) for d in done.diagnostics] == [
        f"{path}:2: warning: choice(s) 2 (50%) give partial credit in a single-answer "
        "question: they are wrong choices in the bank, and their why says their credit",
        f"{path}:4: warning: image 'https://example.org/a.png' is not embedded in the file; "
        "dropped (ankigen never downloads)",
        f"{path}:6: warning: image 'b.png' in a choice or its feedback was dropped: choices "
        "and their feedback are text",
        f"{path}:11: warning: image 'gone.png' is not embedded in the file (<file name=...>); "
        "dropped",
    ]
    assert 'why: "50% in the source"' in done.bank


def test_format_names_come_from_the_registry(runner: CliRunner) -> None:
    sample = str(FORMATS / "quiz.csv")
    result = invoke(runner, "import", sample, "--from", "docx", "--topic", "t", "--lang", "en")
    assert result.exit_code == 2
    assert (
        "Invalid value for '--from': 'docx' is not one of 'page', 'gift', 'aiken', "
        "'moodle-xml', 'csv', 'apkg', 'po'." in result.output
    )
    result = invoke(runner, "export", sample, "--to", "aiken")
    assert result.exit_code == 2
    assert "'aiken' is not one of 'gift', 'moodle-xml', 'csv'." in result.output


def test_ids_for_many_questions_of_one_name_are_assigned_in_linear_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """100,000 questions named alike: each id is found in a step or two, not by trying
    every suffix taken before (20,000 took 25 s). Counted, not timed."""
    from ankigen.formats import model
    from ankigen.formats.model import Choice, Problems, Question, Source, assign_ids

    looks = 0

    class CountingSet(set[str]):
        def __contains__(self, value: object) -> bool:
            nonlocal looks
            looks += 1
            return super().__contains__(value)

    monkeypatch.setattr(model, "set", CountingSet, raising=False)
    count = 100_000
    question = Question(1, "Q?", (Choice("a", True), Choice("b", False)), name="Question")
    ids = assign_ids(Source("x.gift", (question,) * count), Problems("x.gift"))
    assert looks > 0  # the count sees the lookups
    assert len(set(ids)) == count and ids[:3] == ["question", "question-2", "question-3"]
    assert looks <= 2 * count


def test_utf16_input_is_named(tmp_path: Path) -> None:
    path = tmp_path / "quiz.gift"
    path.write_bytes("::a:: Which? {=yes ~no}\n".encode("utf-16"))
    with pytest.raises(InvalidBanks, match=r"quiz.gift:1: error: UTF-16 text, not UTF-8"):
        import_file(path, "t", "en", "gift")


def test_a_name_of_thousands_of_digits_gives_an_id(tmp_path: Path) -> None:
    """`int()` of a 5,000-digit number raised ValueError (Python's digit limit)."""
    path = tmp_path / "q.gift"
    path.write_text(f"::Вопрос {'7' * 5000}::A? {{=a ~b}}\n\n::Вопрос ٠١٢::B? {{=a ~b}}\n", "utf-8")
    imported = import_file(path, "t", "ru")
    assert imported.ids == ("q" + "7" * 99, "q12")


def test_a_file_name_s_control_characters_are_shown_escaped(
    runner: CliRunner, tmp_path: Path
) -> None:
    """The first line an import says names its file: a name with an escape sequence or
    a bidirectional override reached the terminal as it was."""
    path = tmp_path / "evil\x1b[31mRED\u202e.gift"
    path.write_text("::q1:: Which? {=yes ~no}\n", encoding="utf-8")
    result = invoke(runner, "import", str(path), "--topic", "t", "--lang", "en")
    assert result.exit_code == 0, result.output
    first = result.stderr.splitlines()[0]
    assert first.startswith(f"reading {tmp_path}/evil\\x1b[31mRED\\u202e.gift as gift")
