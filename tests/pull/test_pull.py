"""`ankigen pull`: notes edited in the real Anki backend, exported, pulled into the banks,
built and imported again; conflicts, strangers, and what cannot be carried."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from ankigen.apkg.note import note_content
from ankigen.apkg.notetype import FIELDS
from ankigen.bank.model import Bank, Item
from ankigen.bank.reader import parse_bank
from ankigen.pull.fields import Read, read_note, text_of
from ankigen.text.markup import rich_html
from tests.helpers import AnkiCollection, edit, export, invoke
from tests.support.pull import BANK


@pytest.fixture
def built(imported: AnkiCollection) -> AnkiCollection:
    """The bank built and imported, every card reviewed once."""
    assert imported.review_all() == 2
    return imported


def later_build(runner: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    """A build after the edits in Anki, as it is in life (the tests' clock is 2023)."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(int(time.time()) + 60))
    assert invoke(runner, "build").exit_code == 0


def test_fixes_made_in_anki_come_back_and_learners_see_an_edit(
    project: Path, runner: CliRunner, built: AnkiCollection, monkeypatch: pytest.MonkeyPatch
) -> None:
    one = built.note_by_item("one")
    choices = (
        one["Choices"]
        .replace("broadcast", "broad<b>cast</b>")
        .replace("It sums and gives", "It sums, then gives")
    )
    edit(
        built,
        "one",
        Question='<div>Which collective <span style="color: red">sums</span> across'
        "&nbsp;ranks?</div><div>(pick one)</div>",
        Choices=choices,
    )
    reviews, cards = built.revlog_count(), sorted(built.col.find_cards(""))
    package = export(built, project / "edited.apkg")
    bank = project / "banks" / "demo" / "en.yaml"

    dry = invoke(runner, "pull", str(package), "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert "-    question: 'Which collective sums across ranks?'" in dry.stdout
    assert "would pull 3 texts into banks/demo/en.yaml (one)" in dry.stdout
    assert bank.read_text(encoding="utf-8") == BANK  # a dry run writes nothing

    done = invoke(runner, "pull", str(package))
    assert done.exit_code == 0, done.output
    assert "pulled 3 texts into banks/demo/en.yaml (one)" in done.stdout
    # the three texts changed in place: the comments, the other quoting and layout stay,
    # and the question, now of two lines, is a block of two lines
    assert bank.read_text(encoding="utf-8") == BANK.replace(
        "question: 'Which collective sums across ranks?'   # keep this comment",
        "question: |   # keep this comment\n"
        "      Which collective sums across ranks?\n"
        "      (pick one)",
    ).replace(
        "why: It sums and gives the result to every rank.",
        'why: "It sums, then gives the result to every rank."',
    ).replace("      - broadcast", '      - "broad<b>cast</b>"')

    again = invoke(runner, "pull", str(package))  # pulled: the bank says what Anki says
    assert "nothing to pull: 2 notes in step" in again.stdout

    later_build(runner, monkeypatch)
    log = built.import_package(project / "out" / "demo.en.apkg")
    assert log.counts() == {"new": 0, "updated": 1, "duplicate": 1, "conflicting": 0}
    assert sorted(built.col.find_cards("")) == cards and built.revlog_count() == reviews
    one = built.note_by_item("one")
    assert one["Question"] == "Which collective sums across ranks?<br>(pick one)"
    assert "broad<b>cast</b>" in one["Choices"] and "It sums, then gives" in one["Choices"]


def test_a_conflict_overwrites_nothing_until_a_side_is_taken(
    project: Path, runner: CliRunner, built: AnkiCollection
) -> None:
    edit(built, "one", Explanation="Fixed in Anki.")
    edit(built, "two", Question="What is n on 8 ranks?")
    package = export(built, project / "edited.apkg")
    bank = project / "banks" / "demo" / "en.yaml"
    changed = BANK.replace("on eight ranks", "on 8 ranks").replace(
        'explanation: "The world size."', 'explanation: "Fixed in the bank."'
    )
    bank.write_text(changed, encoding="utf-8")

    result = invoke(runner, "pull", str(package))
    assert result.exit_code == 1
    assert bank.read_text(encoding="utf-8") == changed  # nothing was written, not even "one"
    # the build's package in OUT says what was issued: the explanation of "two" changed in
    # the bank only, its question on both sides
    assert result.stderr.count("error:") == 1, result.stderr
    assert (
        "banks/demo/en.yaml:20: error: item 'two': question changed in Anki and in the bank "
        "since the last build" in result.stderr
    )
    assert "in Anki:     'What is n on 8 ranks?'" in result.stderr
    assert "in the bank: 'What is \\\\(n\\\\) on 8 ranks?'" in result.stderr
    assert "1 conflict in 1 item: nothing was written" in result.stderr

    kept = invoke(runner, "pull", str(package), "--take", "bank:two")
    assert kept.exit_code == 0, kept.output
    text = bank.read_text(encoding="utf-8")
    assert "Fixed in Anki." in text and "Fixed in the bank." in text and "(n" in text
    assert "kept the bank's text for 1 text (--take bank)" in kept.stderr

    bank.write_text(changed, encoding="utf-8")
    taken = invoke(runner, "pull", str(package), "--take", "anki")
    assert taken.exit_code == 0, taken.output
    text = bank.read_text(encoding="utf-8")
    assert 'question: "What is n on 8 ranks?"' in text and "Fixed in the bank." in text

    # without the build's package nobody can tell who changed what: every text that
    # differs in an item changed on both sides is a conflict
    bank.write_text(changed, encoding="utf-8")
    (project / "out" / "demo.en.apkg").unlink()
    blind = invoke(runner, "pull", str(package))
    assert blind.exit_code == 1 and blind.stderr.count("error:") == 2, blind.stderr
    assert blind.stderr.count("(or in one of them: what that build issued is gone)") == 2

    wrong = invoke(runner, "pull", str(package), "--take", "mine")
    assert wrong.exit_code == 2, wrong.stderr  # how the option is written: a usage error
    assert "Invalid value for '--take': 'mine': say anki or bank" in wrong.stderr
    nothing = invoke(runner, "pull", str(package), "--take", "anki:one")
    assert nothing.exit_code == 1 and "--take names one: no conflict there" in nothing.stderr


def test_what_anki_holds_from_another_build_is_not_an_edit(
    project: Path, runner: CliRunner, built: AnkiCollection
) -> None:
    package = export(built, project / "old.apkg")
    bank = project / "banks" / "demo" / "en.yaml"
    bank.write_text(BANK.replace("The world size.", "The number of ranks."), encoding="utf-8")
    assert invoke(runner, "build").exit_code == 0  # built, not yet imported into Anki
    result = invoke(runner, "pull", str(package))
    assert result.exit_code == 0, result.output
    assert "1 note in Anki hold another build's text" in result.stderr
    assert "The number of ranks." in bank.read_text(encoding="utf-8")


def test_what_a_bank_cannot_carry_is_reported_and_strangers_are_listed(
    project: Path, runner: CliRunner, built: AnkiCollection
) -> None:
    two = built.note_by_item("two")
    edit(
        built,
        "two",
        Choices=two["Choices"]
        .replace(' data-correct="true"', "")
        .replace('<li data-choice="2">', '<li data-choice="2" data-correct="true">'),
        Explanation='The world size. <a href="https://pytorch.org">docs</a><img src="x.png">',
    )
    stranger = built.col.new_note(built.col.models.by_name(two.note_type()["name"]))
    for name, value in two.items():
        stranger[name] = value
    built.col.add_note(stranger, built.col.decks.id("Elsewhere"))
    package = export(built, project / "edited.apkg")
    result = invoke(runner, "pull", str(package))
    assert result.exit_code == 0, result.output
    assert "item 'two': the answer: Anki marks choice(s) 2 correct, the bank 1" in result.stderr
    assert "'https://pytorch.org', linked in this text, is lost" in result.stderr
    assert "an image ('x.png') in this text is lost" in result.stderr
    assert "1 note of ankigen's note type that these banks' lock never issued" in result.stderr
    assert f"{stranger.guid}  Elsewhere  'two'" in result.stderr
    text = (project / "banks" / "demo" / "en.yaml").read_text(encoding="utf-8")
    assert "answer: 1" in text.split("id: two")[1]  # the answer stays the bank's
    assert 'explanation: "The world size. docs"' in text


def test_a_collection_package_and_bad_files(
    project: Path, runner: CliRunner, built: AnkiCollection
) -> None:
    edit(built, "two", Explanation="From a colpkg.")
    built.col.export_collection_package(str(project / "all.colpkg"), False, False)
    done = invoke(runner, "pull", "all.colpkg")
    assert done.exit_code == 0, done.output
    assert "From a colpkg." in (project / "banks" / "demo" / "en.yaml").read_text("utf-8")
    (project / "bad.apkg").write_bytes(b"PK\x03\x04 not really")
    (project / "empty.apkg").write_bytes(b"")
    for name, message in (
        ("bad.apkg", "bad.apkg: not a package Anki exported"),
        ("empty.apkg", "empty.apkg: not a package Anki exported"),
        ("missing.apkg", "missing.apkg: no such file"),
    ):
        result = invoke(runner, "pull", name)
        assert result.exit_code == 1 and message in result.stderr, result.output
        assert "Traceback" not in result.output
    (project / "banks" / "ankigen.lock").unlink()
    result = invoke(runner, "pull", "all.colpkg")
    assert result.exit_code == 1 and "no lock file" in result.stderr


def test_a_package_of_other_decks_says_so(
    project: Path, runner: CliRunner, built: AnkiCollection, tmp_path: Path
) -> None:
    """A package a learner exported of their own deck (Anki's Basic note type), pulled by
    mistake: "nothing to pull: 0 notes in step" left them to guess which file was wrong."""
    other = AnkiCollection(tmp_path / "other")
    note = other.col.new_note(other.col.models.by_name("Basic"))
    note["Front"], note["Back"] = "Capital of France?", "Paris"
    other.col.add_note(note, other.col.decks.id("Geography"))
    export(other, project / "geography.apkg")
    other.close()
    result = invoke(runner, "pull", "geography.apkg")
    assert result.exit_code == 0, result.output
    assert (
        "nothing to pull: none of its 1 note is of ankigen's note type (a package of other "
        "decks?)" in result.output
    )
    assert "in step" not in result.output


# ---- any text a bank can hold


_PIECES = st.sampled_from(
    [
        "word",
        "ранг",
        "رینک",
        " ",
        "  ",
        "\n",
        "<b>bold</b>",
        "<i>x</i>",
        "<code>t</code>",
        "<sub>2</sub>",
        "&lt;b&gt;",
        "&amp;",
        "&lt;",
        "<",
        ">",
        "&",
        "a < b",
        "AT&T",
        "'",
        '"',
        "[sound:x.mp3]",
        "\\(x<y\\)",
        "\\[2\\frac{n-1}{n}S\\]",
        "&nbsp;",
        "\u00a0",
        "é",
        "\n```python\nprint(1 < 2)  # &amp;\n```\n",
        "\n```\nplain <b> code\n```\n",
        # code that shows a fence, in a longer one
        "\n````markdown\n```python\nx = 1\n```\n````\n",
    ]
)
_TEXTS = st.lists(_PIECES, min_size=1, max_size=8).map("".join)


def _bank_with(question: str, why: str, explanation: str) -> tuple[Bank, Item] | None:
    """A bank holding these texts as the reader gives them back, if it loads."""
    data = {
        "topic": "demo",
        "language": "en",
        "title": "demo",
        "items": [
            {
                "id": "x",
                "question": question,
                "choices": [{"text": question, "why": why}, "other"],
                "answer": 1,
                "explanation": explanation,
            }
        ],
    }
    bank, _ = parse_bank("demo/en.yaml", yaml.safe_dump(data, allow_unicode=True).encode())
    return (bank, bank.items[0]) if bank is not None else None


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_TEXTS, _TEXTS, _TEXTS)
def test_any_bank_text_survives_the_note_and_pull_unchanged(
    question: str, why: str, explanation: str
) -> None:
    """bank -> note -> pull -> bank: the texts of a note nobody edited come back as the
    bank holds them, byte for byte, with nothing reported lost."""
    loaded = _bank_with(question, why, explanation)
    assume(loaded is not None)
    assert loaded is not None
    bank, item = loaded
    fields = dict(zip(FIELDS, note_content(bank, item).fields, strict=True))
    assert read_note(bank, item, fields, {}) == Read({}, ())


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_TEXTS, _TEXTS)
# a line of spaces between blank lines after a code block: read back without them once
@example("\n```python\nprint(1 < 2)  # &amp;\n```\n\n \nword", "word")
def test_an_edited_text_is_read_back_into_the_text_that_makes_that_field(
    edited: str, before: str
) -> None:
    """A field edited in Anki to what some bank text makes is read into a text that makes
    exactly that field again, whatever the bank held before (its code blocks' languages
    aside, which the card's HTML does not name and the bank's blocks give back; and its
    no-break spaces, which the field writes as the editor writes a kept space; and white
    space next to a code block, which no browser shows)."""
    loaded = _bank_with(edited, edited, edited)
    assume(loaded is not None)
    assert loaded is not None
    text = loaded[1].question
    field = rich_html(text)
    if "```" in text:
        before = text + "\nmore"
    if "\u00a0" in text:
        before += "\u00a0"
    pulled, lost = text_of(field, before)
    assert lost == []
    assert _shown(rich_html(pulled)) == _shown(field)


def _shown(field: str) -> str:
    space = r"(?:\s|&nbsp;)+"
    return re.sub(rf'{space}(?=<div class="ag-code">)|(?<=</pre></div>){space}', "", field)


def test_hostile_packages_are_refused_with_a_message(project: Path, runner: CliRunner) -> None:
    """A collection that is not a database, one without the tables, one that unpacks past
    what AnkiWeb syncs: each a clear error and status 1."""
    import zipfile

    import zstandard

    def package(name: str, collection: bytes) -> str:
        with zipfile.ZipFile(project / name, "w") as archive:
            archive.writestr("collection.anki21b", collection)
        return name

    cases = {
        package("text.apkg", b"hello"): "is not an SQLite database",
        package("torn.apkg", b"SQLite format 3\x00" + b"\x00" * 200): "cannot be read",
        package(
            "bomb.apkg",
            zstandard.ZstdCompressor().compress(b"SQLite format 3\x00" + b"\x00" * (301 << 20)),
        ): "larger than the 300 MiB Anki syncs",
    }
    for name, message in cases.items():
        result = invoke(runner, "pull", name)
        assert result.exit_code == 1 and message in result.stderr, (name, result.output)
        assert "Traceback" not in result.output


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_TEXTS, _TEXTS, _TEXTS)
def test_any_bank_text_survives_a_kept_note_and_pull_unchanged(
    question: str, why: str, explanation: str
) -> None:
    """The same round trip through a kept note type's fields (`anki_notetype:`, read back
    by `pull.fields.ankigen_fields`), its answer as the choice's text."""
    from dataclasses import replace

    from ankigen.bank.model import KeptNotetype
    from ankigen.pull.fields import ankigen_fields

    loaded = _bank_with(question, why, explanation)
    assume(loaded is not None)
    assert loaded is not None
    bank, item = loaded
    kept = KeptNotetype(1, "MC", ("Q", "A", "B", "Right", "Why"), "Card", "Q", ("A", "B"),
                        "Right", "text", "Why")  # fmt: skip
    bank = replace(bank, anki_notetype=kept)
    values = dict(zip(kept.fields, note_content(bank, item).fields, strict=True))
    assert read_note(bank, item, ankigen_fields(kept, values), {}) == Read({}, ())
