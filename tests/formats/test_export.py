"""`ankigen export`: a bank out as GIFT, Moodle XML or CSV, and back in unchanged."""

from __future__ import annotations

import html
import re
import urllib.parse
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from ankigen.bank.model import Bank
from ankigen.bank.reader import load_bank, parse_bank
from ankigen.formats.model import Choice, Question, ReadOptions, Source, choice_whys
from ankigen.formats.registry import get
from ankigen.text.markup import segments
from tests.helpers import REPO, invoke, item, write_bank

SHIPPED = sorted((REPO / "banks").glob("*/*.yaml"))
EXPORTS = ["gift", "moodle-xml", "csv"]


def round_trip(runner: CliRunner, bank_path: Path, fmt: str, tmp_path: Path) -> Bank:
    bank, _ = load_bank(bank_path)
    assert bank is not None
    exported = tmp_path / f"export.{fmt}"
    result = invoke(runner, "export", str(bank_path), "--to", fmt, "-o", str(exported))
    assert result.exit_code == 0, result.output
    result = invoke(
        runner,
        "import",
        str(exported),
        "--from",
        fmt,
        "--topic",
        bank.topic,
        "--lang",
        bank.language,
        "--media",
        str(tmp_path / "media"),
    )
    assert result.exit_code == 0, result.output
    assert result.stderr.endswith(f"{len(bank.items)} items imported, 0 skipped\n")
    back, problems = parse_bank("back.yaml", result.stdout.encode())
    assert back is not None, problems
    return back


@pytest.mark.parametrize("fmt", EXPORTS)
@pytest.mark.parametrize("bank_path", SHIPPED, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_shipped_bank_survives_export_and_import(
    runner: CliRunner, bank_path: Path, fmt: str, tmp_path: Path
) -> None:
    bank, _ = load_bank(bank_path)
    assert bank is not None
    back = round_trip(runner, bank_path, fmt, tmp_path)

    def key(b: Bank) -> list[tuple[object, ...]]:
        return [
            (i.id, i.question, i.choices, i.answer, i.explanation, choice_whys(i)) for i in b.items
        ]

    assert key(back) == key(bank)
    if fmt != "gift":  # GIFT has no shuffle setting and one category per question
        assert [(i.shuffle, i.tags) for i in back.items] == [
            (i.shuffle, i.tags) for i in bank.items
        ]


def rich_source() -> Source:
    """Everything a bank item can carry, including a `why` per choice (issue 14)."""
    return Source(
        path="rich.yaml",
        topic="rich",
        language="ur",
        title="Rich",
        questions=(
            Question(
                line=1,
                name="with-why",
                question='Tricky: { } ~ = # : \\ "quotes" & <b>bold</b> <script>\nline two',
                choices=(
                    Choice("All-reduce", True, "Sums, then shares: a = b # c"),
                    Choice("Broadcast ~ copy", False, "Copies one rank's tensor."),
                    Choice("اردو متن", False, ""),
                ),
                explanation="Because: it sums.\nSecond line.",
                tags=("collectives", "nccl::ops"),
                shuffle=False,
            ),
            Question(
                line=2,
                name="multi-7",
                question="Seven of eight?",
                choices=tuple(Choice(f"c{n}", n != 8) for n in range(1, 9)),
                explanation="x",
            ),
            Question(
                line=3,
                name="multi-2-of-8",
                question="Two of eight?",
                choices=tuple(Choice(f"c{n}", n in (1, 5), f"why {n}") for n in range(1, 9)),
                explanation="y",
            ),
        ),
    )


@pytest.mark.parametrize("fmt", EXPORTS)
def test_per_choice_why_and_awkward_text_survive_the_round_trip(fmt: str, tmp_path: Path) -> None:
    source = rich_source()
    writer = get(fmt).write
    assert writer is not None
    data = writer(source, tmp_path)
    back = get(fmt).read(f"x.{fmt}", data, ReadOptions("rich", "ur"))
    assert back.diagnostics == ()
    for before, after in zip(source.questions, back.questions, strict=True):
        assert after.name == before.name
        assert after.question == before.question
        assert after.choices == before.choices
        assert after.explanation == before.explanation


def test_export_to_standard_output_and_bad_bank(runner: CliRunner, project: Path) -> None:
    path = write_bank(project / "banks")
    result = invoke(runner, "export", str(path), "--to", "gift")
    assert result.exit_code == 0
    assert result.stdout.startswith("// demo quiz (en), exported by ankigen from demo.en\n")
    assert "::one::Question one?{\n\t=one choice 1\n\t~one choice 2" in result.stdout
    path.write_text("topic: demo\n", encoding="utf-8")
    result = invoke(runner, "export", str(path), "--to", "csv")
    assert result.exit_code == 1
    assert "missing key 'language'" in result.output


def test_csv_export_is_rfc4180_with_a_bom(runner: CliRunner, project: Path) -> None:
    path = write_bank(
        project / "banks",
        items=[
            {
                "id": "q",
                "question": 'Says "hi",\nthen leaves',
                "choices": ["a", "b", "c"],
                "answer": [1, 3],
                "explanation": "e",
                "tags": ["t1", "t2"],
            }
        ],
    )
    result = invoke(runner, "export", str(path), "--to", "csv")
    data = result.stdout_bytes
    assert data.startswith(b"\xef\xbb\xbf")
    assert data.decode("utf-8-sig") == (
        "id,question,choice1,choice2,choice3,answer,explanation,tags,shuffle\r\n"
        'q,"Says ""hi"",\nthen leaves",a,b,c,"1,3",e,t1 t2,true\r\n'
    )


# ---- Moodle XML as Moodle's importer reads it --------------------------------
# The rules below are those of Moodle's qformat_xml importer and the multichoice
# question type (question/format/xml/format.php, question/type/multichoice):
# <quiz> around <question type=...>; a question needs <name><text>; text fields
# carry a known format; <single> and <shuffleanswers> are read as true/false;
# a grade must be one Moodle offers; a single-answer question needs one answer
# at 100%, a multiple-answer one positive grades adding up to 100%; files
# referenced as @@PLUGINFILE@@/name are <file name=... encoding="base64">.

MOODLE_GRADES = [
    1.0, 0.9, 0.8333333, 0.8, 0.75, 0.7, 0.6666667, 0.6, 0.5, 0.4, 0.3333333, 0.3,
    0.25, 0.2, 0.1666667, 0.1428571, 0.125, 0.1111111, 0.1, 0.05, 0.0,
]  # fmt: skip
FORMATS = {"html", "moodle_auto_format", "plain_text", "markdown", "wiki_like"}


def check_moodle_xml(data: bytes) -> int:
    root = ET.fromstring(data)
    assert root.tag == "quiz"
    questions = root.findall("question")
    for question in questions:
        assert question.get("type") == "multichoice"
        assert (question.findtext("name/text") or "").strip()
        for field in ("questiontext", "generalfeedback"):
            node = question.find(field)
            assert node is not None and node.get("format") in FORMATS
            assert node.find("text") is not None
        assert (question.findtext("questiontext/text") or "").strip()
        assert question.findtext("single") in ("true", "false")
        assert question.findtext("shuffleanswers") in ("true", "false")
        assert question.findtext("answernumbering") in ("abc", "ABCD", "123", "iii", "IIII", "none")
        answers = question.findall("answer")
        assert len(answers) >= 2
        grades = []
        for answer in answers:
            grade = float(answer.get("fraction", "x")) / 100
            assert any(abs(abs(grade) - g) < 1e-7 for g in MOODLE_GRADES), grade
            assert (answer.findtext("text") or "").strip()
            assert answer.get("format") in FORMATS
            grades.append(grade)
        if question.findtext("single") == "true":
            assert max(grades) == 1.0
        else:
            assert round(sum(g for g in grades if g > 0), 2) == 1.0
        files = {f.get("name") for f in question.iter("file")}
        for text in question.iter("text"):
            for name in re.findall(r"@@PLUGINFILE@@/([^\"'?]+)", text.text or ""):
                assert urllib.parse.unquote(name) in files
        for file in question.iter("file"):
            assert file.get("encoding") == "base64" and file.get("path") == "/"
    return len(questions)


@pytest.mark.parametrize("bank_path", SHIPPED, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_moodle_xml_export_follows_moodles_import_rules(runner: CliRunner, bank_path: Path) -> None:
    result = invoke(runner, "export", str(bank_path), "--to", "moodle-xml")
    assert result.exit_code == 0
    assert check_moodle_xml(result.stdout_bytes) == 8


def test_moodle_xml_export_of_multi_answers_and_images(tmp_path: Path) -> None:
    from PIL import Image

    media = tmp_path / "media"
    media.mkdir()
    Image.new("RGB", (8, 8), "red").save(media / "red square.png")
    source = rich_source()
    first = source.questions[0]
    source = replace(
        source,
        questions=(
            replace(first, image="red square.png", image_alt="a red square"),
            *source.questions[1:],
        ),
    )
    writer = get("moodle-xml").write
    assert writer is not None
    data = writer(source, media)
    assert check_moodle_xml(data) == 3
    assert b'<answer fraction="14.28571" format="html">' in data
    assert b'<answer fraction="50" format="html">' in data
    assert b'<answer fraction="-16.66667" format="html">' in data
    back = get("moodle-xml").read("x.xml", data, ReadOptions("rich", "ur", media_prefix="rich"))
    assert back.diagnostics == ()
    assert back.questions[0].image.startswith("rich/") and len(back.media) == 1
    assert back.questions[0].image_alt == "a red square"


def test_gift_export_says_what_it_cannot_carry(runner: CliRunner, project: Path) -> None:
    from PIL import Image

    (project / "media").mkdir()
    Image.new("RGB", (4, 4), "red").save(project / "media" / "red.png")
    path = write_bank(
        project / "banks",
        items=[
            item("plain"),
            item("rich", shuffle=False, tags=["a", "b::c"], image="red.png", image_alt="red"),
        ],
    )
    result = invoke(runner, "export", str(path), "--to", "gift")
    assert result.exit_code == 0
    line = next(
        n
        for n, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if text == "- id: rich"
    )
    assert result.stderr.splitlines() == [
        f"{path}:{line}: warning: item 'rich': {what} not exported"
        for what in (
            "its images (GIFT files carry none)",
            "shuffle: false (GIFT has no such setting)",
            "its tags after the first (GIFT has one category per question)",
        )
    ]
    assert "$CATEGORY: $course$/top/a\n" in result.stdout
    assert "// its images are not here: GIFT files carry none\n::rich::" in result.stdout
    for fmt in ("moodle-xml", "csv"):
        result = invoke(runner, "export", str(path), "--to", fmt)
        assert result.exit_code == 0 and result.stderr == ""


@pytest.mark.parametrize("fmt", EXPORTS)
def test_recall_survives_the_round_trip_or_is_warned_of(
    runner: CliRunner, fmt: str, tmp_path: Path
) -> None:
    bank_path = write_bank(tmp_path / "banks", items=[item("a", recall=True), item("b")])
    if fmt == "gift":
        result = invoke(runner, "export", str(bank_path), "--to", fmt)
        assert "item 'a': recall: true (GIFT has no such setting) not exported" in result.stderr
        return
    back = round_trip(runner, bank_path, fmt, tmp_path)
    assert [i.recall for i in back.items] == [True, False]


def test_csv_cells_a_spreadsheet_would_run_are_neutralized_and_read_back(
    runner: CliRunner, tmp_path: Path
) -> None:
    formulas = ["=1+1", "+SUM(A1)", "-2", "@cmd", "'=quoted", "''-two", "'plain"]
    first = item("a", choices=len(formulas), question='=HYPERLINK("http://x")')
    first["choices"] = formulas
    bank_path = write_bank(tmp_path / "banks", items=[first, item("b")])
    result = invoke(runner, "export", str(bank_path), "--to", "csv")
    import csv as csv_module
    import io

    rows = list(csv_module.reader(io.StringIO(result.stdout.removeprefix("\ufeff"))))
    cells = rows[1]
    assert cells[1] == '\'=HYPERLINK("http://x")'
    assert cells[2:9] == ["'=1+1", "'+SUM(A1)", "'-2", "'@cmd", "''=quoted", "'''-two", "'plain"]
    # no cell a spreadsheet would run is left
    assert not [c for row in rows for c in row if c.startswith(("=", "+", "-", "@"))]
    back = round_trip(runner, bank_path, "csv", tmp_path)
    assert back.items[0].question == first["question"]
    assert back.items[0].choices == tuple(formulas)


def test_moodle_xml_embeds_images_cleaned_as_packages_do(runner: CliRunner, tmp_path: Path) -> None:
    """Camera, artist and GPS EXIF of the original never leave with an export."""
    import base64

    from PIL import Image

    media = tmp_path / "media"
    media.mkdir()
    picture = Image.new("RGB", (40, 30), (200, 30, 30))
    exif = Image.Exif()
    exif[0x010F] = "SecretCam Inc."  # Make
    exif[0x013B] = "Jane Author"  # Artist
    exif[0x010E] = "Taken at 48.85N 2.35E"  # ImageDescription, standing in for GPS
    picture.save(media / "photo.jpg", exif=exif)
    assert b"SecretCam" in (media / "photo.jpg").read_bytes()  # the control: it is there
    bank = write_bank(
        tmp_path / "banks", items=[item("a", image="photo.jpg", image_alt="A red square")]
    )
    result = invoke(runner, "export", str(bank), "--to", "moodle-xml", "--media", str(media))
    assert result.exit_code == 0, result.output
    root = ET.fromstring(result.stdout.encode())
    [embedded] = root.iter("file")
    data = base64.b64decode(embedded.text or "")
    assert b"SecretCam" not in data and b"Jane Author" not in data
    with Image.open(__import__("io").BytesIO(data)) as shown:
        assert shown.size == (40, 30) and not shown.getexif()


def test_a_slash_within_a_category_level_is_moodles_doubled_slash(tmp_path: Path) -> None:
    """Moodle writes a `/` within a category's name as `//` (`assemble_category_path`)
    and reads it back so (`split_category_path`); a `/` in a tag is no level at all.
    Before, `File Input//Output` became two levels, and an export wrote them as two
    categories."""
    gift = get("gift")
    path_text = "$CATEGORY: $course$/top/Mod 3/17 - File Input//Output\n\n::q::Which? {=a ~b}\n"
    source = gift.read("c.gift", path_text.encode(), ReadOptions("t", "en"))
    assert source.questions[0].tags == ("Mod_3::17_-_File_Input/Output",)
    assert gift.write is not None
    written = gift.write(source, tmp_path).decode()
    assert "$CATEGORY: $course$/top/Mod_3/17_-_File_Input//Output\n" in written
    again = gift.read("c.gift", written.encode(), ReadOptions("t", "en"))
    assert again.questions[0].tags == source.questions[0].tags
    xml = (
        "<quiz><question type='category'><category><text>$course$/top/A//B/C</text>"
        "</category></question><question type='multichoice'><name><text>q</text></name>"
        "<questiontext><text>Which?</text></questiontext><tags><tag><text>TCP/IP</text></tag>"
        "</tags><answer fraction='100'><text>a</text></answer>"
        "<answer fraction='0'><text>b</text></answer></question></quiz>"
    )
    read = get("moodle-xml").read("c.xml", xml.encode(), ReadOptions("t", "en"))
    assert read.questions[0].tags == ("A/B::C", "TCP/IP")


def _exported(fmt: str, question: str, tmp_path: Path) -> bytes:
    """One question with this text, written in `fmt`."""
    choices = (Choice("7", True), Choice("6", False))
    only = Question(1, question, choices, name="q", explanation="x")
    source = Source(path="c.yaml", topic="c", language="en", title="Code", questions=(only,))
    writer = get(fmt).write
    assert writer is not None
    return writer(source, tmp_path)


@pytest.mark.parametrize("fmt", ["gift", "moodle-xml"])
def test_a_code_block_is_exported_as_pre_and_read_back(fmt: str, tmp_path: Path) -> None:
    """A fenced block went to Moodle as its backticks, the code's indentation lost on
    the page; now `<pre><code>`, which the import reads back as the same fence."""
    code = "What does it print?\n```java\nint a = 6;\n  if (a < 7) { a++; }\n```\nPick one."
    data = _exported(fmt, code, tmp_path)
    assert b"```" not in data
    shown = html.unescape(data.decode()).replace("\\", "")  # as Moodle's reader has it
    assert '<pre><code class="language-java">int a = 6;<br>  if (a ' in shown
    back = get(fmt).read(f"c.{fmt}", data, ReadOptions("c", "en"))
    assert back.questions[0].question == code


@pytest.mark.parametrize("fmt", ["gift", "moodle-xml"])
def test_code_that_shows_a_fence_stays_one_code_block(fmt: str, tmp_path: Path) -> None:
    """A quiz about Markdown: `<pre>` holding a line of three backticks. Fenced with three,
    that line ended the block, and the bank had a fence left open, which the build
    refuses; the block's fence is now longer than any run of backticks in it."""
    code = "How does a block start?\n````markdown\n```python\nprint(1)\n```\n````"
    data = _exported(fmt, code, tmp_path)
    back = get(fmt).read(f"c.{fmt}", data, ReadOptions("c", "en"))
    assert back.questions[0].question == code
    assert back.diagnostics == ()
    blocks = [s for s in segments(code) if s.language is not None]
    assert [(b.language, b.text, b.closed) for b in blocks] == [
        ("markdown", "```python\nprint(1)\n```", True)
    ]


def test_an_image_comes_back_from_moodle_byte_for_byte(runner: CliRunner, tmp_path: Path) -> None:
    """Export to Moodle XML, import, again and again: each import and export encoded the
    photo again (JPEG, a little worse each time, a new name each time); an image already
    clean is now carried as it is, and one with metadata is still cleaned once."""
    import io
    import random

    from PIL import Image

    media = tmp_path / "media"
    media.mkdir()
    noise = random.Random(7)
    photo = Image.new("RGB", (120, 90))
    photo.putdata([tuple(noise.randrange(256) for _ in "rgb") for _ in range(120 * 90)])
    exif = Image.Exif()
    exif[0x010F] = "SecretCam Inc."
    photo.save(media / "photo.jpg", quality=92, exif=exif)
    bank = write_bank(tmp_path / "banks", items=[item("a", image="photo.jpg", image_alt="Noise")])
    carried: list[bytes] = []
    for round_trip in range(3):
        xml = tmp_path / f"round{round_trip}.xml"
        exported = invoke(
            runner, "export", str(bank), "--to", "moodle-xml", "--media", str(media), "-o", str(xml)
        )
        assert exported.exit_code == 0, exported.output
        bank = tmp_path / f"round{round_trip}.yaml"
        imported = invoke(
            runner, "import", str(xml), "--topic", "demo", "--lang", "en", "-o", str(bank),
            "--media", str(media),
        )  # fmt: skip
        assert imported.exit_code == 0, imported.output
        loaded, _ = load_bank(bank)
        assert loaded is not None
        carried.append((media / loaded.items[0].image).read_bytes())
    assert b"SecretCam" not in carried[0]  # cleaned once, on the way out
    assert carried[0] == carried[1] == carried[2]
    with Image.open(io.BytesIO(carried[0])) as shown:
        assert shown.size == (120, 90) and not shown.getexif()


def test_data_pillow_does_not_show_is_cleaned_away(tmp_path: Path) -> None:
    """A JPEG with another tool's APP segment or bytes after its end, a PNG with a private
    chunk: Pillow's `info` shows none of them, and they were carried as they were."""
    import io
    import zlib

    from PIL import Image

    from ankigen.images.process import kept_or_processed
    from ankigen.images.settings import Settings

    photo = io.BytesIO()
    Image.new("RGB", (40, 30), (200, 30, 30)).save(photo, "JPEG", quality=90)
    jpeg = photo.getvalue()
    segment = b"\xff\xe4" + (2 + 6).to_bytes(2, "big") + b"SECRET"
    hidden = [jpeg[:2] + segment + jpeg[2:], jpeg + b"SECRET"]
    drawing = io.BytesIO()
    Image.new("RGB", (40, 30), (200, 30, 30)).save(drawing, "PNG")
    png = drawing.getvalue()
    crc = zlib.crc32(b"prVtSECRET").to_bytes(4, "big")
    hidden.append(png[:-12] + (6).to_bytes(4, "big") + b"prVtSECRET" + crc + png[-12:])
    for data in hidden:
        assert b"SECRET" in data  # the control
        assert b"SECRET" not in kept_or_processed(data, "x", Settings()).data
    assert kept_or_processed(jpeg, "x", Settings()).data == jpeg  # clean: kept
