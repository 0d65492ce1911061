"""Bad input: author text never becomes code, unsafe YAML is refused, limits hold."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ankigen.bank import reader as bank_reader
from tests.helpers import AnkiCollection, invoke, item, write_bank

ATTACKS = [
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(2)">',
    "<iframe src='javascript:alert(3)'></iframe>",
    "<svg onload=alert(4)><circle/></svg>",
    "<style>body{display:none}</style>",
    '<a href="javascript:alert(5)">link</a>',
    '<b onclick="alert(6)">bold</b>',
    "{{Question}} {{FrontSide}}",
]
ALLOWED_MARKUP = {"ol": {"data-version"}, "li": {"data-choice", "data-correct"}, "br": set()}


def markup(fragment: str) -> dict[str, set[str]]:
    """The tags and attribute names an HTML fragment really contains."""
    from html.parser import HTMLParser

    found: dict[str, set[str]] = {}

    class Collect(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            found.setdefault(tag, set()).update(name for name, _ in attrs)

    Collect().feed(fragment)
    return found


def attack_bank(banks: Path) -> None:
    text = " | ".join(ATTACKS)
    write_bank(
        banks,
        # a deck name's part is at most 255 characters: the title carries the first five
        title="Title " + " | ".join(ATTACKS[:5]),
        description=f"Description {text}",
        items=[
            item(
                "x",
                question=f"Q {text}",
                choices=2,
                explanation=f"E {text}",
                tags=["safe"],
            )
            | {"choices": [f"C1 {text}", f"C2 {text}"]}
        ],
    )


def test_no_field_title_or_description_carries_markup(
    project: Path, runner: CliRunner, collection: AnkiCollection
) -> None:
    attack_bank(project / "banks")
    assert invoke(runner, "build").exit_code == 0
    collection.import_package(project / "out" / "demo.en.apkg")
    note = collection.note_by_item("x")
    for name in ("Question", "Choices", "Answer", "Explanation"):
        tags = markup(note[name])
        assert all(attrs <= ALLOWED_MARKUP[tag] for tag, attrs in tags.items()), (name, tags)
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in note[name]
    # a tag with attributes is not formatting: it stays visible as text
    assert '&lt;b onclick="alert(6)"&gt;bold' in note["Question"]
    [name] = collection.deck_names()
    assert name.startswith("Title <script>alert(1)</script> | <img src=x onerror=")  # plain text
    deck = collection.col.decks.by_name(name)
    assert deck is not None
    assert set(markup(deck["desc"])) <= {"div", "p", "b", "code"}
    assert "&lt;iframe" in deck["desc"]
    card = collection.col.get_card(collection.col.find_cards("")[0])
    # the templates' field references are not re-expanded from author text
    assert "{{Question}} {{FrontSide}}" in card.question()


def test_attacks_render_as_text_in_a_browser(
    project: Path, runner: CliRunner, collection: AnkiCollection, chromium: Any
) -> None:
    attack_bank(project / "banks")
    assert invoke(runner, "build").exit_code == 0
    collection.import_package(project / "out" / "demo.en.apkg")
    card = collection.col.get_card(collection.col.find_cards("")[0])
    page_file = project / "card.html"
    page_file.write_text(
        f'<!doctype html><html><head><meta charset="utf-8"></head><body class="card">{card.answer()}</body></html>',
        encoding="utf-8",
    )
    dialogs: list[str] = []
    page = chromium.new_page()
    try:
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        page.goto(page_file.as_uri())
        # handlers on failed images and inline scripts have run by the load event,
        # which goto waits for; two frames let anything queued at load run too
        page.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        text = page.inner_text(".ag-question")
        injected = page.evaluate(
            "document.querySelectorAll('.ag-card iframe, .ag-card svg, .ag-card img, .ag-card a, .ag-card style').length"
        )
    finally:
        page.close()
    assert dialogs == []
    assert injected == 0
    assert "<script>alert(1)</script>" in text and "onerror=" in text


@pytest.mark.parametrize(
    ("yaml_text", "message"),
    [
        (
            'topic: !!python/object/apply:os.system ["touch hacked"]\n',
            "YAML tag 'tag:yaml.org,2002:python/object/apply:os.system' is not allowed",
        ),
        ("topic: !custom x\n", "YAML tag '!custom' is not allowed"),
        ("a: &anchor x\nb: *anchor\n", "YAML anchors are not allowed"),
        ("topic: x\nlist: [*nothing]\n", "YAML"),
    ],
)
def test_unsafe_yaml_is_refused(
    project: Path, runner: CliRunner, yaml_text: str, message: str
) -> None:
    (project / "banks" / "evil.yaml").write_text(yaml_text, encoding="utf-8")
    result = invoke(runner, "build")
    assert result.exit_code == 1
    assert result.output.startswith("banks/evil.yaml:")
    assert message in result.output
    assert not (project / "hacked").exists()


def test_alias_bomb_is_refused_quickly(project: Path, runner: CliRunner) -> None:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"a{n}: &a{n} [" + ",".join([f"*a{n - 1}"] * 9) + "]" for n in range(1, 10)]
    (project / "banks" / "bomb.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    started = time.monotonic()
    result = invoke(runner, "build")
    assert result.exit_code == 1
    assert "banks/bomb.yaml:1: error: YAML anchors are not allowed" in result.output
    assert time.monotonic() - started < 5


def test_oversized_file_is_refused(
    project: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ankigen.bank import yamltree

    monkeypatch.setattr(yamltree, "MAX_FILE_BYTES", 100)
    write_bank(project / "banks")
    result = invoke(runner, "build")
    assert result.exit_code == 1
    assert "banks are limited to 100 bytes" in result.output


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("topic", "../../etc", "is not a slug"),
        ("topic", "a/b", "is not a slug"),
        ("language", "en/../../x", "is not a BCP 47 tag"),
        ("language", "en-" + "-".join(["abcdefgh"] * 6), "is not a BCP 47 tag"),
    ],
)
def test_topic_and_language_cannot_escape_the_output_folder(
    project: Path, runner: CliRunner, field: str, value: str, message: str
) -> None:
    path = write_bank(project / "banks")
    text = path.read_text(encoding="utf-8")
    key = {"topic": "topic: demo", "language": "language: en"}[field]
    path.write_text(text.replace(key, f"{field}: '{value}'"), encoding="utf-8")
    result = invoke(runner, "build")
    assert result.exit_code == 1
    assert message in result.output
    assert sorted(p.name for p in project.rglob("*") if p.is_file()) == ["en.yaml"]


def test_size_limits(project: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bank_reader, "MAX_ITEMS", 2)
    write_bank(project / "banks", items=[item("a"), item("b"), item("c")])
    assert "items: 3 items; a bank holds at most 2" in invoke(runner, "build").output
    monkeypatch.setattr(bank_reader, "MAX_ITEMS", 20_000)
    write_bank(project / "banks", items=[item("a", question="x" * 10_001)])
    assert "question is 10001 characters long; the limit is 10000" in invoke(runner, "build").output
    write_bank(project / "banks", items=[item("a", choices=2) | {"choices": ["y" * 2001, "z"]}])
    assert "choice 1 is 2001 characters long; the limit is 2000" in invoke(runner, "build").output
    write_bank(project / "banks", items=[item("a", choices=9)])
    assert "has 9 choices; an item needs 2 to 8" in invoke(runner, "build").output


def test_unwritable_output_is_a_clear_error_not_a_traceback(project: Path) -> None:
    write_bank(project / "banks")
    (project / "file").write_text("a file where a folder should be")
    done = subprocess.run(
        [sys.executable, "-m", "ankigen", "build", "-o", "file/out"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr.startswith("error: file/out: cannot use as output folder")
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("content", ["{not json", "[" * 100_000 + "]" * 100_000])
def test_damaged_lock_file_is_a_clear_error(project: Path, runner: CliRunner, content: str) -> None:
    write_bank(project / "banks")
    (project / "banks" / "ankigen.lock").write_text(content)
    result = invoke(runner, "build")
    assert result.exit_code == 1
    assert result.output.startswith("error: banks/ankigen.lock: the lock file is damaged")


def test_a_lock_of_another_version_is_refused(project: Path, runner: CliRunner) -> None:
    write_bank(project / "banks")
    for version in ("true", "1.0", '"2"', "99"):
        (project / "banks" / "ankigen.lock").write_text(f'{{"version": {version}, "decks": {{}}}}')
        result = invoke(runner, "build")
        assert result.exit_code == 1
        assert result.output.startswith("error: banks/ankigen.lock: lock file version "), version


def test_a_nul_in_an_image_path_is_an_error_at_its_line(project: Path, runner: CliRunner) -> None:
    write_bank(project / "banks", items=[item("a", image="a\0b.png", image_alt="x")])
    for command in ("lint", "build"):
        result = invoke(runner, command)
        assert result.exit_code == 1
        assert "banks/demo/en.yaml:" in result.output
        assert "error: item 'a': image contains U+0000, a control character" in result.output


def test_a_bug_is_reported_without_a_traceback(project: Path) -> None:
    write_bank(project / "banks")
    # make the package writer fail in a way no user input can: a bug
    (project / "sitecustomize.py").write_text(
        "import ankigen.apkg.package\n"
        "def broken(*args, **kwargs):\n"
        "    raise ZeroDivisionError('boom')\n"
        "ankigen.apkg.package.apkg_bytes = broken\n"
        "import ankigen.builder.jobs\n"
        "ankigen.builder.jobs.apkg_bytes = broken\n"
    )
    os = __import__("os")
    paths = [str(project), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    done = subprocess.run(
        [sys.executable, "-m", "ankigen", "build"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr == (
        "error: internal error (ZeroDivisionError: boom); this is a bug in ankigen, "
        "please report it (ANKIGEN_DEBUG=1 shows the traceback)\n"
    )


@pytest.mark.parametrize(
    "formula",
    [
        r"\(\href{javascript:alert(1)}{x}\)",
        r"\(\style{position:fixed;inset:0}{\text{Correct! Grade it Easy}}\)",
        r"\(\cssId{answer}{x}\)",
        r"\[\class{ag-verdict}{x}\]",
        r"\(\unicode{x41}\)",
        r"\(\require{action}\)",
        r"\(\data{x=1}{x}\)",
        r"\(\bbox[border:1px solid; position:fixed]{x}\)",
        "\\(\\\n  HREF{javascript:x}{y}\\)",
    ],
)
def test_mathjax_macros_that_make_links_styles_or_elements_are_errors(
    project: Path, runner: CliRunner, formula: str
) -> None:
    path = write_bank(project / "banks", items=[item("a", question=f"Which? {formula}")])
    result = invoke(runner, "lint")
    assert result.exit_code == 1
    line = next(
        n
        for n, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "question:" in text
    )
    assert f"banks/demo/en.yaml:{line}: error: item 'a': question: math: \\" in result.output
    assert "is not allowed" in result.output
    assert invoke(runner, "build").exit_code == 1
    assert not (project / "out" / "demo.en.apkg").exists()


def test_formulas_without_such_macros_stay_allowed(project: Path, runner: CliRunner) -> None:
    safe = r"\(\displaystyle\frac{1}{2} \bbox[yellow]{x} \textstyle\mathrm{d}x\) <code>\href</code>"
    write_bank(project / "banks", items=[item("a", question=f"Which? {safe}")])
    assert invoke(runner, "lint").exit_code == 0


@pytest.mark.parametrize(
    ("char", "shown"), [("\x01", "U+0001"), ("\ufffe", "U+FFFE"), ("\x7f", "U+007F")]
)
def test_characters_no_format_carries_are_errors(
    project: Path, runner: CliRunner, char: str, shown: str
) -> None:
    write_bank(project / "banks", items=[item("a", explanation=f"Because{char}.")])
    result = invoke(runner, "lint")
    assert result.exit_code == 1
    assert f"explanation contains {shown}, a control character or noncharacter" in result.output
    bank = project / "banks" / "demo" / "en.yaml"
    exported = invoke(runner, "export", str(bank), "--to", "moodle-xml")
    assert exported.exit_code == 1 and "<quiz>" not in exported.stdout


def test_a_moodle_xml_export_of_a_hostile_title_is_well_formed(
    project: Path, runner: CliRunner
) -> None:
    from defusedxml import ElementTree

    bank = write_bank(project / "banks", title="A -- B --> <!-- C\nD")
    result = invoke(runner, "export", str(bank), "--to", "moodle-xml")
    assert result.exit_code == 0
    assert ElementTree.fromstring(result.stdout.encode()).tag == "quiz"
    gift = invoke(runner, "export", str(bank), "--to", "gift").stdout
    assert gift.splitlines()[0].startswith("// ") and gift.splitlines()[1] == ""


@pytest.mark.parametrize(
    "question",
    ["\u2800\u2800", "\u3164", "\u115f", "\u034f", "\U000e0020", "\u200e\u200f", "<b>\u3164</b>"],
)
def test_a_question_that_draws_nothing_is_an_error(
    project: Path, runner: CliRunner, question: str
) -> None:
    write_bank(project / "banks", items=[item("a", question=question)])
    result = invoke(runner, "lint")
    assert result.exit_code == 1
    assert "question is visually empty" in result.output


@pytest.mark.parametrize("twin", ["yes\ufe0f", "yes<b></b>", "yes\u200b"])
def test_choices_that_look_the_same_are_an_error(
    project: Path, runner: CliRunner, twin: str
) -> None:
    first = item("a")
    first["choices"] = ["yes", twin, "no"]
    write_bank(project / "banks", items=[first])
    result = invoke(runner, "lint")
    assert result.exit_code == 1
    assert "choice 2 looks the same as choice 1" in result.output


@pytest.mark.parametrize(
    ("one", "other"),
    [("Qu\u00e9", "Que\u0301"), ("A::B", "A:: B"), ("Quiz", "Qu\tiz"), ("Quiz", "QUIZ")],
)
def test_deck_names_anki_would_merge_are_an_error(
    project: Path, runner: CliRunner, one: str, other: str
) -> None:
    write_bank(project / "banks", "one", deck=one)
    write_bank(project / "banks", "two", deck=other)
    result = invoke(runner, "lint")
    assert result.exit_code == 1
    assert "Anki would merge both into one deck" in result.output
