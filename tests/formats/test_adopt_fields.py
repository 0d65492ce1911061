"""An adopted deck's fields that ankigen does not map (issue 50): a kept note type carries
them through the bank (`anki_fields:`) byte for byte, so that Anki's default import leaves
them as they were in the notes of the learner who studies the deck."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from ankigen.apkg.kept import NAME_SUFFIX
from ankigen.bank.model import KeptNotetype
from ankigen.bank.reader import parse_bank
from ankigen.formats.bankyaml import bank_yaml
from ankigen.formats.model import Choice, Question, Source
from tests.helpers import AnkiCollection, export, invoke, item, write_bank
from tests.support.adopt import GENANKI_KEPT, addon_package, adopt, build
from tests.support.images import line_art

QUIZ = "Physics quiz"
FIELDS = ["Ques", "A", "B", "C", "D", "E", "Ans", "Ex", "Source", "Note", "Image"]
MAPPING = "question=Ques,choices=A..E,answer=Ans,explanation=Ex"
NOTES = [
    {
        "Ques": "Which is a vector?",
        "A": "mass",
        "B": "velocity",
        "C": "time",
        "Ans": "B",
        "Ex": "It has a direction.",
        "Source": "Halliday &amp; Resnick, <i>Physics</i>, ch.&nbsp;3",
        "Image": '<img src="pic.png">',
    },
    {
        "Ques": "Which are SI base units?",
        "A": "metre",
        "B": "newton",
        "C": "kelvin",
        "D": "joule",
        "Ans": "A, C",
        "Ex": "N and J are derived.",
        # what YAML would change if it were written carelessly: quotes, a backslash, a
        # line break, a tab, spaces at the end, a colon and a hash
        "Source": 'BIPM, "SI Brochure" \\ 9th ed.<br>\n  p. 130: # ',
        "Note": "ask about the <b>candela</b>\tnext time",
    },
    {
        "Ques": "How many sides has a square?",
        "A": "3",
        "B": "4",
        "C": "5",
        "D": "6",
        "E": "8",
        "Ans": "B",
        "Ex": "Four.",
        "Source": "Euclid, Στοιχεῖα I",
        "Note": '<a href="https://example.org/?a=1&amp;b=2">more</a>',
    },
]


def quiz_deck(collection: AnkiCollection, folder: Path, sort_by: str = "Ques") -> None:
    """A hand-made note type of eleven fields, its notes in the deck Physics, a picture in
    the `Image` field of one of them: made, then studied, in the learner's collection.
    `sort_by`: the field Anki's browser sorts its notes by."""
    models = collection.col.models
    model = models.new(QUIZ)
    for name in FIELDS:
        models.add_field(model, models.new_field(name))
    model["sortf"] = FIELDS.index(sort_by)
    template = models.new_template("Card 1")
    template["qfmt"] = "{{Ques}}<ol><li>{{A}}<li>{{B}}<li>{{C}}<li>{{D}}<li>{{E}}</ol>{{Image}}"
    template["afmt"] = "{{FrontSide}}<hr id=answer>{{Ans}}: {{Ex}}<br>{{Source}} {{Note}}"
    models.add_template(model, template)
    models.add(model)
    model = models.by_name(QUIZ)
    picture = collection.col.media.add_file(str(line_art(folder / "pic.png")))
    assert picture == "pic.png"
    deck_id = collection.col.decks.id("Physics")
    for fields in NOTES:
        note = collection.col.new_note(model)  # type: ignore[arg-type]
        for name, value in fields.items():
            note[name] = value
        collection.col.add_note(note, deck_id)


def notes_by_guid(collection: AnkiCollection) -> dict[str, dict[str, str]]:
    """Every field of every note, by the note's GUID."""
    return {note.guid: dict(note.items()) for note in collection.notes()}


@pytest.fixture
def studied(tmp_path: Path, collection: AnkiCollection) -> Path:
    """The learner's deck, reviewed through the scheduler, exported as a deck is shared."""
    quiz_deck(collection, tmp_path)
    assert collection.review_all() == 3
    return export(collection, tmp_path / "quiz.apkg", with_media=True)


def test_the_learners_notes_keep_every_field_the_mapping_does_not_name(
    project: Path, runner: CliRunner, studied: Path, collection: AnkiCollection
) -> None:
    before = notes_by_guid(collection)
    assert before and all(fields["Source"] for fields in before.values())
    cards, reviews = sorted(collection.col.find_cards("")), collection.revlog_count()
    assert reviews == 3
    adopt(runner, studied, "--fields", MAPPING)
    log = collection.import_package(build(runner, project))
    assert (log.updated, log.new, log.conflicting, log.duplicate) == (3, 0, 0, 0)
    # every field of every note as it was: the mapped ones written by ankigen as the deck
    # had them (plain text), the others carried byte for byte
    after = notes_by_guid(collection)
    assert after.keys() == before.keys()
    changed = [
        (guid, name, was, after[guid][name])
        for guid, fields in before.items()
        for name, was in fields.items()
        if after[guid][name] != was
    ]
    assert changed == []
    assert collection.col.note_count() == 3
    assert sorted(collection.col.find_cards("")) == cards
    assert collection.revlog_count() == reviews
    assert all(collection.col.get_card(card).reps == 1 for card in cards)
    model = collection.note_type(QUIZ + NAME_SUFFIX)  # ankigen's card, on the old note type
    assert 'class="ag-card ag-front"' in model["tmpls"][0]["qfmt"]
    assert [field["name"] for field in model["flds"]] == FIELDS
    assert (Path(collection.col.media.dir()) / "pic.png").is_file()
    # a carried field edited in the bank reaches the same note, as an update
    path = project / "banks" / "physics" / "en.yaml"
    text = path.read_text("utf-8")
    path.write_text(text.replace("Euclid, Στοιχεῖα I", "Euclid, Elements I"), encoding="utf-8")
    log = collection.import_package(build(runner, project))
    assert (log.updated, log.new) == (1, 0)
    [square] = [n for n in collection.notes() if n["Ques"] == "How many sides has a square?"]
    assert square["Source"] == "Euclid, Elements I"
    assert square["Note"] == NOTES[2]["Note"]


def test_a_deck_sorted_by_another_field_keeps_it_and_its_learners_take_updates(
    project: Path, runner: CliRunner, tmp_path: Path, collection: AnkiCollection
) -> None:
    """A note type whose browser sorts by another field than the question (a published
    exam deck sorts by its questions' numbers): the build keeps that sort field. Anki
    re-stamps every note of a note type whose sort field changes, so with the question's
    the learner's notes became newer than the package's, and no change ever reached them:
    each counted as a duplicate."""
    quiz_deck(collection, tmp_path, sort_by="Source")
    assert collection.review_all() == 3
    studied = export(collection, tmp_path / "quiz.apkg", with_media=True)
    adopt(runner, studied, "--fields", MAPPING)
    bank = project / "banks" / "physics" / "en.yaml"
    assert '  sort_field: "Source"' in bank.read_text("utf-8")
    bank.write_text(
        bank.read_text("utf-8").replace("It has a direction.", "It has a direction too."),
        encoding="utf-8",
    )
    log = collection.import_package(build(runner, project))
    assert (log.updated, log.new, log.duplicate, log.conflicting) == (3, 0, 0, 0)
    [vector] = [n for n in collection.notes() if n["Ques"] == "Which is a vector?"]
    assert vector["Ex"] == "It has a direction too."
    assert collection.note_type(QUIZ + NAME_SUFFIX)["sortf"] == FIELDS.index("Source")
    assert collection.revlog_count() == 3


def test_the_import_says_which_fields_it_maps_and_which_it_carries(
    project: Path, runner: CliRunner, studied: Path
) -> None:
    said = adopt(runner, studied, "--fields", MAPPING)
    assert (
        "quiz.apkg: fields: Ques -> question, A..E -> choices, Ans -> answer, Ex -> "
        "explanation; carried as they are: Source, Note, Image\n"
    ) in said
    # the picture of a carried field is not in the packages: said, at its first note
    assert "quiz.apkg:1: warning: fields carried as they are show media ('pic.png')" in said
    bank = yaml.safe_load((project / "banks" / "physics" / "en.yaml").read_text("utf-8"))
    carried = [item.get("anki_fields") for item in bank["items"]]
    assert carried == [
        {name: NOTES[0][name] for name in ("Source", "Image")},
        {name: NOTES[1][name] for name in ("Source", "Note")},  # an empty one needs no key
        {name: NOTES[2][name] for name in ("Source", "Note")},
    ]


def test_on_ankigens_note_type_the_import_says_which_fields_it_does_not_read(
    project: Path, runner: CliRunner, studied: Path
) -> None:
    said = adopt(runner, studied, "--fields", MAPPING, "--notetype", "ankigen")
    assert (
        "explanation; not read (ankigen's note type has no field for them): Source, Note, Image"
    ) in said
    text = (project / "banks" / "physics" / "en.yaml").read_text("utf-8")
    assert "anki_fields" not in text and "Halliday" not in text


def test_the_addons_fields_are_all_read_two_of_them_into_the_texts(
    project: Path, runner: CliRunner, tmp_path: Path
) -> None:
    """The Multiple Choice add-on's note type: every field has a part, none is carried;
    its title and sources go into the question and explanation, their fields left empty."""

    said = adopt(runner, addon_package(tmp_path))
    assert (
        "fields: Question -> question, Q_1..Q_5 -> choices, Answers -> answer, Extra 1 -> "
        "explanation, Title -> title (in bold above the question), Sources -> sources (after "
        "the explanation), QType (0=kprim,1=mc,2=sc) -> kind; read into the items' texts, "
        "then left empty: Sources, Title\n"
    ) in said
    assert "anki_fields" not in (project / "banks" / "physics" / "en.yaml").read_text("utf-8")


KEPT = {**GENANKI_KEPT, "fields": [*GENANKI_KEPT["fields"], "Source", "Extra 1"]}


def line_of(path: Path, text: str) -> int:
    lines = path.read_text("utf-8").splitlines()
    [number] = [n for n, line in enumerate(lines, start=1) if text in line]
    return number


def test_carried_fields_are_checked_against_the_kept_note_type_at_their_lines(
    project: Path, runner: CliRunner
) -> None:
    carried = {"Source": "ok", "Nope": "a field it lacks", "Front": "the question's field"}
    items = [item("one", choices=3, anki_fields=carried), item("two", choices=3)]
    items[1]["anki_fields"] = {"Extra 1": ["not", "text"], "Source": "a\x1fb"}
    path = write_bank(project / "banks", "maths", items=items, anki_notetype=KEPT)
    result = invoke(runner, "lint")
    assert result.exit_code == 1
    out = result.output
    assert (
        f"maths/en.yaml:{line_of(path, 'Nope:')}: error: item 'one': anki_fields: 'Nope' cannot "
        "be carried: the kept note type 'genanki quiz' has no such field (its fields: Front, "
        "A, B, C, Correct, Back, Source, Extra 1)"
    ) in out
    assert (
        f"maths/en.yaml:{line_of(path, 'Front:')}: error: item 'one': anki_fields: 'Front' "
        "cannot be carried: the build writes the item's texts there"
    ) in out
    assert f"maths/en.yaml:{line_of(path, '- not')}: error: item 'two': anki_fields: " in out
    assert "Extra 1 must be text" in out
    assert "Source holds U+001F, which no Anki field holds" in out
    assert "'Source' cannot" not in out and "Traceback" not in out


def test_a_bank_that_keeps_no_note_type_carries_no_fields(project: Path, runner: CliRunner) -> None:
    items = [item("one", anki_fields={"Source": "a book"}), item("two", 2)]
    path = write_bank(project / "banks", "maths", items=items)
    result = invoke(runner, "lint")
    assert result.exit_code == 1
    assert (
        f"maths/en.yaml:{line_of(path, 'anki_fields:')}: error: item 'one': anki_fields are the "
        "fields of an adopted deck's note type, carried as they are: only a bank with "
        "anki_notetype: has them"
    ) in result.output


@settings(max_examples=150, deadline=None)
@given(st.text(st.characters(exclude_characters="\x00\x1f", exclude_categories=("Cs",))))
def test_a_carried_value_comes_back_from_the_bank_byte_for_byte(value: str) -> None:
    """Any text a field holds, written into a bank by the import and read back."""
    odd = "Extra 1, (old) #2 'x'"  # a name YAML would not read as written unquoted
    kept = KeptNotetype(
        1607392319, "quiz", ("Q", "A", "B", "Ans", odd, "null"), "Card 1", "Q", ("A", "B"),
        "Ans", "numbers", adopted=1_700_000_000,
    )  # fmt: skip
    question = Question(1, "Q?", (Choice("a", True), Choice("b", False)), explanation="E.")
    carried = ((odd, value), ("null", value[::-1]))
    questions = (replace(question, anki_fields=carried),)
    source = Source("x.apkg", questions, title="Quiz", anki_notetype=kept)
    bank, problems = parse_bank("x.yaml", bank_yaml(source, ["q"], "t", "en").encode("utf-8"))
    assert bank is not None, problems
    assert bank.items[0].anki_fields == carried


def test_a_translation_of_a_kept_bank_carries_no_fields_and_says_so(
    project: Path, runner: CliRunner
) -> None:
    items = [item("one", choices=3, anki_fields={"Source": "a book"}), item("two", choices=3)]
    write_bank(project / "banks", "maths", items=items, anki_notetype=KEPT)
    result = invoke(runner, "translate", "maths", "--to", "de")
    assert result.exit_code == 0, result.output
    assert "a translation is a new deck, on ankigen's own note type, so it has neither " in (
        result.output
    )
    text = (project / "banks" / "maths" / "de.yaml").read_text("utf-8")
    assert "anki_fields" not in text and "a book" not in text
    assert invoke(runner, "lint").exit_code == 0


def test_pull_says_a_carried_field_edited_in_anki_is_not_pulled(
    project: Path, runner: CliRunner, studied: Path, collection: AnkiCollection
) -> None:
    adopt(runner, studied, "--fields", MAPPING)
    collection.import_package(build(runner, project))
    path = project / "banks" / "physics" / "en.yaml"
    # notes as the build issued them, carried fields and all: nothing to pull, nothing said
    result = invoke(runner, "pull", str(export(collection, project.parent / "same.apkg")))
    assert result.exit_code == 0, result.output
    assert "warning" not in result.output and "pulled" not in result.output
    [vector] = [n for n in collection.notes() if n["Ques"] == "Which is a vector?"]
    vector["Source"] = "Feynman, Lectures I"
    vector["Ex"] = "It has a size and a direction."
    collection.col.update_note(vector)
    before = path.read_text("utf-8")
    result = invoke(runner, "pull", str(export(collection, project.parent / "fixed.apkg")))
    assert result.exit_code == 0, result.output
    line = before.splitlines().index('      Source: "Halliday &amp; Resnick, <i>Physics</i>, '
                                     'ch.&nbsp;3"') + 1  # fmt: skip
    assert (
        f"en.yaml:{line}: warning: item 'q1': field 'Source' was changed in Anki; a field "
        "carried as it is (anki_fields) is not pulled"
    ) in result.output
    bank = yaml.safe_load(path.read_text("utf-8"))
    assert bank["items"][0]["explanation"] == "It has a size and a direction."  # pulled
    assert bank["items"][0]["anki_fields"]["Source"] == NOTES[0]["Source"]  # not pulled


def test_a_bank_cache_entry_keeps_the_carried_fields(tmp_path: Path) -> None:
    import hashlib

    from ankigen.bank.files import Source as BankFile
    from ankigen.checks.cache_entry import dump, load

    carried = {"Source": " a <i>book</i>\n"}
    items = [item("one", choices=3, anki_fields=carried), item("two", 2, choices=3)]
    path = write_bank(tmp_path / "banks", "maths", items=items, anki_notetype=KEPT)
    data = path.read_bytes()
    bank, problems = parse_bank(str(path), data)
    assert bank is not None, problems
    file = BankFile(path, data, hashlib.sha256(data).hexdigest())
    again, _ = load(file, dump(file, (bank, problems), ("en",)), ("en",))  # type: ignore[arg-type]
    assert again is not None
    assert [i.anki_fields for i in again.items] == [(("Source", " a <i>book</i>\n"),), ()]
    assert again == bank


def test_an_export_says_the_carried_fields_are_not_exported(
    project: Path, runner: CliRunner
) -> None:
    items = [item("one", choices=3, anki_fields={"Source": "a book"}), item("two", choices=3)]
    write_bank(project / "banks", "maths", items=items, anki_notetype=KEPT)
    result = invoke(runner, "export", "banks/maths/en.yaml", "--to", "csv", "-o", "maths.csv")
    assert result.exit_code == 0, result.output
    assert (
        "item 'one': its anki_fields (its Anki note's own fields: only Anki has them) not exported"
    ) in result.output
    assert "'two'" not in result.output
