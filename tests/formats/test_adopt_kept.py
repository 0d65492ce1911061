"""An adopted deck that keeps its own note type (`anki_notetype:`, the default of
`import --from apkg`): the learner who studied the add-on's deck imports the adopted build
with Anki's default options, and gets every note updated, cards and reviews kept, and
ankigen's card on the old note type; the card works in headless Chromium."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from ankigen.apkg.kept import NAME_SUFFIX
from tests.helpers import AnkiCollection, export, invoke, item, write_bank
from tests.support.adopt import ADDON, GENANKI_KEPT, NOTES, adopt, build, note_type
from tests.support.browser import Client, serve_cards


def test_the_learner_gets_every_note_updated_on_the_old_note_type_history_kept(
    project: Path, runner: CliRunner, shared: Path, collection: AnkiCollection
) -> None:
    collection.import_package(shared)
    assert collection.review_all() == 3
    reviews, cards = collection.revlog_count(), sorted(collection.col.find_cards(""))
    notetype_id = collection.col.models.by_name(ADDON)["id"]  # type: ignore[index]
    said = adopt(runner, shared)
    assert "keeps their note type" in said and "Merge note types" not in said
    bank = yaml.safe_load((project / "banks" / "physics" / "en.yaml").read_text("utf-8"))
    kept = bank["anki_notetype"]
    assert (kept["id"], kept["name"], kept["template"]) == (notetype_id, ADDON, ADDON)
    assert (kept["answer"], kept["answer_format"], kept["explanation"]) == (
        "Answers",
        "bits",
        "Extra 1",
    )
    log = collection.import_package(build(runner, project))
    assert (log.updated, log.conflicting, log.new) == (3, 0, 0)
    assert collection.col.note_count() == 3
    assert sorted(collection.col.find_cards("")) == cards  # no card added, none moved
    assert collection.revlog_count() == reviews
    assert all(collection.col.get_card(c).reps == 1 for c in cards)
    model = collection.col.models.get(notetype_id)
    assert model is not None and model["name"] == ADDON + NAME_SUFFIX
    assert 'class="ag-card ag-front"' in model["tmpls"][0]["qfmt"]
    notes = {
        re.sub("<[^>]+>", "", note["Question"]): note
        for note in (collection.col.get_note(n) for n in collection.col.find_notes(""))
    }
    vector = notes["Which is a vector?"]
    assert (vector["Q_2"], vector["Answers"], vector["QType (0=kprim,1=mc,2=sc)"]) == (
        "velocity",
        "0 1 0",
        "2",
    )
    # an edit to the bank reaches the same note, once more as an update
    path = project / "banks" / "physics" / "en.yaml"
    path.write_text(path.read_text("utf-8").replace("Which is a vector?", "Which one is a vector?"))
    log = collection.import_package(build(runner, project))
    assert (log.updated, log.new) == (1, 0)
    assert collection.col.get_note(vector.id)["Question"].startswith("Which one is a vector?")


def test_a_new_learner_gets_the_kept_note_type_with_ankigens_card(
    project: Path, runner: CliRunner, shared: Path, collection: AnkiCollection
) -> None:
    adopt(runner, shared)
    log = collection.import_package(build(runner, project))
    assert log.new == 3
    [card_id] = collection.col.find_cards('"Question:Which is a vector?*"')
    card = collection.col.get_card(card_id)
    assert card.note_type()["name"] == ADDON + NAME_SUFFIX
    assert 'data-choice="2">velocity</li>' in card.question()
    assert "It has a direction." in card.answer()


def test_an_item_the_kept_note_type_cannot_hold_is_an_error_at_its_line(
    project: Path, runner: CliRunner, shared: Path
) -> None:
    adopt(runner, shared)
    path = project / "banks" / "physics" / "en.yaml"
    text = path.read_text("utf-8")
    more = "".join(f'      - "{extra}"\n' for extra in "abc")
    path.write_text(text.replace('      - "time"\n', '      - "time"\n' + more, 1))
    result = invoke(runner, "lint")
    assert result.exit_code == 1
    line = text.splitlines().index("    choices:") + 1
    assert f"en.yaml:{line}: error: item 'q1' has 6 choices" in result.output
    assert "has 5 choice fields" in result.output
    assert "Traceback" not in result.output


@pytest.fixture
def learner_sides(
    project: Path, runner: CliRunner, shared: Path, collection: AnkiCollection
) -> dict[str, tuple[str, str]]:
    """The sides of the learner's reviewed cards as Anki renders them after the adopted
    build's import, by the note's first choice."""
    collection.import_package(shared)
    collection.review_all()
    adopt(runner, shared)
    collection.import_package(build(runner, project))
    web = project.parent / "web"  # the pages' pictures, as the client has them
    shutil.copytree(collection.col.media.dir(), web)
    sides = {}
    for card_id in collection.col.find_cards(""):
        card = collection.col.get_card(card_id)
        sides[card.note()["Q_1"].replace(" ", "-")] = (card.question(), card.answer())
    return sides


@pytest.fixture
def tab(
    project: Path, learner_sides: dict[str, tuple[str, str]], chromium: Any
) -> Iterator[Client]:
    with serve_cards(project.parent / "web", learner_sides, ["desktop.html"]) as base:
        client = Client(chromium, base, learner_sides)
        yield client
        client.close()


def test_the_kept_card_asks_and_grades_as_ankigens_own(tab: Client) -> None:
    single, multi = NOTES[0][2][0], NOTES[1][2][0]
    tab.desktop()
    tab.show_question(single)
    assert sorted(tab.front_order()) == [1, 2, 3]
    assert tab.page.get_attribute(".ag-front .ag-choices", "role") == "radiogroup"
    tab.pick(2)
    tab.show_answer(single)
    back: list[dict[str, Any]] = tab.back_choices()
    assert {c["choice"]: c["correct"] for c in back} == {"1": "false", "2": "true", "3": "false"}
    assert tab.verdict() == "correct:✓ Correct"
    assert tab.page.inner_text(".ag-back .ag-answer-text") == "velocity"
    tab.show_question(multi)
    tab.pick(1, 3)
    tab.show_answer(multi)
    assert tab.verdict() == "correct:✓ Correct"
    assert tab.page.get_attribute(".ag-back", "dir") == "ltr"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"answer": "Nope"}, "answer: 'Nope' is not one of its fields"),
        ({"explanation": "A"}, "explanation: 'A' already holds another part"),
        ({"answer_format": "roman"}, "answer_format is one of"),
        ({"fields": ["Front", "A", "B", "C", "Correct", "Back", "A"]}, "'A' is listed twice"),
        ({"fields": ["Front", "A:1", "B", "C", "Correct", "Back"]}, 'holds : { } or "'),
        ({"id": "0x10"}, "id is a positive whole number"),
        ({"id": 1_732_416_907}, "id is ankigen's own note type's"),
        ({"template": None}, "template is empty"),
        ({"adopted": 5}, "adopted is 5, before 2001"),
        ({"fields": [f"F{n}" for n in range(101)]}, "101 fields; a note type has at most 100"),
    ],
)
def test_a_wrong_kept_note_type_is_an_error_at_its_line(
    project: Path, runner: CliRunner, change: dict[str, Any], message: str
) -> None:
    write_bank(project / "banks", "maths", anki_notetype={**GENANKI_KEPT, **change})
    result = invoke(runner, "lint")
    assert result.exit_code == 1 and message in result.output, result.output
    assert re.search(r"maths/en\.yaml:\d+: error: anki_notetype", result.output)
    assert "Traceback" not in result.output


def test_two_banks_keeping_one_note_type_must_describe_it_alike(
    project: Path, runner: CliRunner
) -> None:
    items = [item("one", choices=3)]
    write_bank(project / "banks", "maths", "en", items, anki_notetype=GENANKI_KEPT)
    write_bank(
        project / "banks",
        "maths",
        "de",
        items,
        anki_notetype={**GENANKI_KEPT, "adopted": 1_700_000_001},
    )
    assert invoke(runner, "lint").exit_code == 0  # the same note type, adopted twice
    # a bank from before sort fields were kept names none: it sorts by the question
    write_bank(
        project / "banks",
        "maths",
        "fr",
        items,
        anki_notetype={**GENANKI_KEPT, "sort_field": GENANKI_KEPT["question"]},
    )
    assert invoke(runner, "lint").exit_code == 0
    write_bank(
        project / "banks",
        "maths",
        "fr",
        items,
        anki_notetype={**GENANKI_KEPT, "sort_field": "Back"},
    )
    assert "is kept by" in invoke(runner, "lint").output  # one collection, one sort field
    (project / "banks" / "maths" / "fr.yaml").unlink()
    write_bank(
        project / "banks",
        "algebra",
        "en",
        items,
        anki_notetype={**GENANKI_KEPT, "template": "Card 2"},
    )
    result = invoke(runner, "lint")
    assert result.exit_code == 1 and "is kept by" in result.output, result.output


def test_a_kept_note_type_of_numbers_and_a_why_carries_both(
    project: Path, runner: CliRunner, collection: AnkiCollection
) -> None:
    """A genanki-made note type (choice numbers in `Correct`): its fields as the old
    template reads them, and the card grading by them."""
    items = [item("two", answer=2, choices=3), item("three", answer=[1, 3], choices=3)]
    items[0]["choices"][0] = {"text": "wrong", "why": "Because."}
    write_bank(project / "banks", "maths", items=items, anki_notetype=GENANKI_KEPT)
    log = collection.import_package(build_named(runner, project, "maths.en.apkg"))
    assert log.new == 2
    notes = {
        note["Front"]: note
        for note in (collection.col.get_note(n) for n in collection.col.find_notes(""))
    }
    two, three = notes["Question two?"], notes["Question three?"]
    assert (two["A"], two["Correct"], two["Back"]) == (
        'wrong<div class="ag-why">Because.</div>',
        "2",
        "Explanation: two.",
    )
    assert three["Correct"] == "1 3"
    model = collection.col.models.get(1607392319)
    assert model is not None and [f["name"] for f in model["flds"]] == GENANKI_KEPT["fields"]


def build_named(runner: CliRunner, project: Path, name: str) -> Path:
    result = invoke(runner, "build")
    assert result.exit_code == 0, result.output
    return project / "out" / name


@pytest.mark.parametrize("answer_format", ["numbers", "letters", "text"])
def test_the_card_grades_by_numbers_and_by_text(
    project: Path, runner: CliRunner, collection: AnkiCollection, answer_format: str, chromium: Any
) -> None:
    items = [item("two", answer=2, choices=3)]
    items[0]["choices"][0] = {"text": "wrong", "why": "Because."}
    items[0]["choices"][1] = {"text": "two choice 2", "why": "Right, as it is."}  # the answer
    kept = {**GENANKI_KEPT, "answer_format": answer_format}
    write_bank(project / "banks", "maths", items=items, anki_notetype=kept)
    collection.import_package(build_named(runner, project, "maths.en.apkg"))
    [card_id] = collection.col.find_cards("")
    card = collection.col.get_card(card_id)
    expected = {"numbers": "2", "letters": "B", "text": "two choice 2"}[answer_format]
    assert card.note()["Correct"] == expected
    sides = {"two": (card.question(), card.answer())}
    with serve_cards(project.parent / "web", sides, ["desktop.html"]) as base:
        tab = Client(chromium, base, sides)
        tab.load_front("two")
        tab.pick(2)
        tab.load_back("two")
        back = tab.back_choices()
        assert {c["choice"]: c["correct"] for c in back} == {
            "1": "false",
            "2": "true",
            "3": "false",
        }
        assert tab.page.inner_text(".ag-back .ag-answer-text") == "two choice 2"
        assert "Because." in tab.page.inner_text(".ag-back .ag-choices")
        tab.close()


def test_a_fix_made_in_anki_to_a_kept_note_is_pulled_into_the_bank(
    project: Path, runner: CliRunner, shared: Path, collection: AnkiCollection
) -> None:
    """`pull` reads a kept note type's fields as ankigen's own (`pull.fields.ankigen_fields`):
    the fix goes into the bank, and the next build brings it to learners as an edit."""
    adopt(runner, shared)
    collection.import_package(build(runner, project))
    [vector] = collection.col.find_notes('"Question:Which is a vector?*"')
    note = collection.col.get_note(vector)
    note["Question"] = note["Question"].replace("Which is a vector?", "Which one is a vector?")
    note["Q_1"] = "mass (kg)"
    note["Extra 1"] = "It has a direction&nbsp;and a size."
    collection.col.update_note(note)
    exported = export(collection, project.parent / "fixed.apkg", with_media=True)
    result = invoke(runner, "pull", str(exported))
    assert result.exit_code == 0, result.output
    bank = yaml.safe_load((project / "banks" / "physics" / "en.yaml").read_text("utf-8"))
    item = bank["items"][0]
    assert item["question"] == "Which one is a vector?"
    assert item["choices"][0] == "mass (kg)" and item["answer"] == 2
    assert item["explanation"] == "It has a direction and a size."
    assert item["image_alt"] == "an arrow"  # the picture stayed where it was
    log = collection.import_package(build(runner, project))
    assert (log.updated, log.new, log.conflicting) == (1, 0, 0)


def test_a_learner_who_keeps_the_addons_template_still_gets_right_cards(
    project: Path,
    runner: CliRunner,
    shared: Path,
    collection: AnkiCollection,
    chromium: Any,
) -> None:
    """Anki replaces a note type's template only by a newer one: a learner whose copy
    changed since keeps the add-on's card. The notes, updated all the same, keep the
    add-on's format, so its card still asks and grades them right."""
    from anki.collection import ImportAnkiPackageOptions
    from anki.import_export_pb2 import (
        IMPORT_ANKI_PACKAGE_UPDATE_CONDITION_NEVER,
        ImportAnkiPackageRequest,
    )

    collection.import_package(shared)
    adopt(runner, shared)
    never = ImportAnkiPackageOptions(update_notetypes=IMPORT_ANKI_PACKAGE_UPDATE_CONDITION_NEVER)
    request = ImportAnkiPackageRequest(package_path=str(build(runner, project)), options=never)
    log = collection.col.import_anki_package(request).log
    assert (len(log.updated), len(log.conflicting)) == (3, 0)
    collection.col.models._clear_cache()
    model = collection.col.models.by_name(ADDON)
    assert model is not None and "ag-card" not in model["tmpls"][0]["qfmt"]
    web = project.parent / "web"
    shutil.copytree(collection.col.media.dir(), web)
    sides = {}
    for card_id in collection.col.find_cards(""):
        card = collection.col.get_card(card_id)
        sides[card.note()["Q_1"].replace(" ", "-")] = (card.question(), card.answer())
    with serve_cards(web, sides, ["desktop.html"]) as base:
        tab = Client(chromium, base, sides)
        tab.desktop()
        tab.show_question("mass")
        labels = tab.page.eval_on_selector_all("#qtable label", "els => els.map(e => e.innerText)")
        assert sorted(labels) == ["mass", "time", "velocity"]  # the add-on shuffles them
        tab.page.click("#qtable label >> text=velocity")
        tab.show_answer("mass")
        assert tab.page.inner_text("#canswerresult") == "Correct."
        tab.close()


def test_a_translation_of_a_kept_bank_is_a_new_deck_on_ankigens_note_type(
    project: Path, runner: CliRunner
) -> None:
    write_bank(
        project / "banks", "maths", items=[item("one", choices=3)], anki_notetype=GENANKI_KEPT
    )
    result = invoke(runner, "translate", "maths", "--to", "de")
    assert result.exit_code == 0, result.output
    translation = yaml.safe_load((project / "banks" / "maths" / "de.yaml").read_text("utf-8"))
    assert "anki_notetype" not in translation


def test_the_kept_note_types_time_follows_its_adoption_and_never_the_future(
    project: Path, runner: CliRunner, tmp_path: Path
) -> None:
    """Anki replaces a collection's note type only by a newer one: a kept one is newer than
    its adoption, even in a build pinned to an older time; an adoption time in the future
    (a bank edited by hand) is taken as now."""
    import json
    import sqlite3
    import time
    import zipfile

    def notetype_time(adopted: int) -> int:
        kept = {**GENANKI_KEPT, "adopted": adopted}
        write_bank(project / "banks", "maths", items=[item("one", choices=3)], anki_notetype=kept)
        package = build_named(runner, project, "maths.en.apkg")
        database = tmp_path / f"{adopted}.anki2"
        database.write_bytes(zipfile.ZipFile(package).read("collection.anki2"))
        with sqlite3.connect(database) as connection:
            (models,) = connection.execute("SELECT models FROM col").fetchone()
        return int(json.loads(models)[str(GENANKI_KEPT["id"])]["mod"])

    pinned = 1_700_000_000  # SOURCE_DATE_EPOCH, as the project fixture pins it
    assert notetype_time(pinned + 5_000) == pinned + 5_001
    before, future, after = int(time.time()), notetype_time(4_000_000_000), int(time.time())
    assert before + 1 <= future <= after + 1


def test_a_genanki_made_deck_keeps_its_note_type_and_its_learners_history(
    project: Path, runner: CliRunner, tmp_path: Path, collection: AnkiCollection
) -> None:
    """A deck written by a genanki script (a legacy package: its fields have no ids, so
    Anki matches them by name), the answer as a letter: adopted with its note type, its
    learner's notes are updated, reviews kept."""
    import genanki

    model = genanki.Model(
        1607392319,
        "Simple MC",
        fields=[{"name": n} for n in ("Question", "A", "B", "C", "Answer", "Explanation")],
        templates=[{"name": "Card 1", "qfmt": "{{Question}}<br>{{A}} {{B}} {{C}}",
                    "afmt": "{{FrontSide}}<hr id=answer>{{Answer}} {{Explanation}}"}],
    )  # fmt: skip
    deck = genanki.Deck(2059400110, "Maths")
    for question, answer in (("2 + 2?", "B"), ("Which is even?", "b")):
        fields = [question, "3", "4", "5", answer, "Count."]
        deck.add_note(genanki.Note(model=model, fields=fields, guid=genanki.guid_for(question)))
    package = tmp_path / "maths.apkg"
    genanki.Package(deck).write_to_file(str(package))
    collection.import_package(package)
    assert collection.review_all() == 2
    cards, reviews = sorted(collection.col.find_cards("")), collection.revlog_count()
    fields = "question=Question,choices=A..C,answer=Answer,explanation=Explanation"
    adopt(runner, package, "--fields", fields)
    bank = yaml.safe_load((project / "banks" / "physics" / "en.yaml").read_text("utf-8"))
    assert bank["anki_notetype"]["answer_format"] == "letters"
    assert [item["answer"] for item in bank["items"]] == [2, 2]
    log = collection.import_package(build(runner, project))
    assert (log.updated, log.new, log.conflicting) == (2, 0, 0)
    assert sorted(collection.col.find_cards("")) == cards
    assert collection.revlog_count() == reviews
    note = collection.col.get_note(collection.col.find_notes("")[0])
    assert note.note_type()["name"] == "Simple MC" + NAME_SUFFIX  # type: ignore[index]
    assert note["Answer"] == "B"


def test_a_kept_note_type_without_an_explanation_field_asks_no_explanation(
    project: Path, runner: CliRunner, tmp_path: Path, collection: AnkiCollection
) -> None:
    """An exam deck's note type has no field for an explanation: its cards have nowhere
    to show one, so its bank asks none (the import wrote a TODO per note, and the build
    refused 400 notes until each had an explanation it then threw away). A bank that
    keeps a note type with such a field, or none, still asks one of every item, and an
    item read where none was asked is not reused where one is."""
    author = AnkiCollection(tmp_path / "author")
    try:
        fields = ("Question", "A", "B", "C", "Answer")
        model = note_type(author, "exam", fields, "{{Question}}{{A}}{{B}}{{C}}", "{{Answer}}")
        for number, answer in enumerate(("A", "C"), start=1):
            note = author.col.new_note(model)
            note["Question"], note["Answer"] = f"Question {number}?", answer
            note["A"], note["B"], note["C"] = f"a{number}", f"b{number}", f"c{number}"
            author.col.add_note(note, author.col.decks.id("Exam"))
        package = export(author, tmp_path / "exam.apkg")
    finally:
        author.close()
    assert collection.import_package(package).new == 2
    adopt(runner, package, "--fields", "question=Question,choices=A..C,answer=Answer")
    bank = project / "banks" / "physics" / "en.yaml"
    text = bank.read_text("utf-8")
    assert "TODO" not in text and "  explanation:" not in text
    log = collection.import_package(build(runner, project))
    assert (log.updated, log.new, log.duplicate) == (2, 0, 0)
    # the same items where the note type has a field for one: asked again, though the
    # items themselves did not change (the bank cache's items are not taken as read)
    with_field = text.replace('"Answer"]', '"Answer", "Extra"]', 1).replace(
        "  answer_format:", '  explanation: "Extra"\n  answer_format:'
    )
    bank.write_text(with_field, "utf-8")
    refused = invoke(runner, "build")
    assert refused.exit_code == 1
    assert refused.output.endswith("2 errors; nothing was written\n"), refused.output
    assert refused.output.count("missing key 'explanation'") == 2
