"""`ankigen import FILE.apkg --from apkg`: a deck of the "Multiple Choice for Anki" add-on's
note type, made and reviewed in the real Anki backend, adopted with its GUIDs, built, and
imported again by the learner who studied it; what Anki's importer then really does."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from anki.collection import ImportAnkiPackageOptions
from anki.import_export_pb2 import ImportAnkiPackageRequest
from click.testing import CliRunner

from ankigen.apkg.notetype import NOTETYPE_NAME, TEMPLATE_NAME
from tests.helpers import AnkiCollection, export, invoke
from tests.support.adopt import ADDON, FIELDS, NOTES, addon_deck, adopt, note_type


def test_the_addons_deck_becomes_a_bank_with_its_guids_in_the_lock(
    project: Path, runner: CliRunner, shared: Path, collection: AnkiCollection
) -> None:
    said = adopt(runner, shared)
    bank = yaml.safe_load((project / "banks" / "physics" / "en.yaml").read_text("utf-8"))
    assert bank["deck"] == "Physics"  # the name learners have
    items = bank["items"]
    assert [item["answer"] for item in items] == [2, [1, 3], [1, 3]]
    assert [item["choices"] for item in items] == [choices for _, _, choices, _, _ in NOTES]
    assert items[2]["explanation"] == "Sound needs a medium."
    # the package's picture (zstd inside a modern package), cleaned and named as every
    # imported image is, under the topic
    assert items[0]["image"].startswith("physics/") and items[0]["image_alt"] == "an arrow"
    assert (project / "media" / items[0]["image"]).read_bytes()[:4] == b"\x89PNG"
    assert "1 Kprim note(s) became items with several answers" in said
    assert "wrote banks/ankigen.lock" in said and "keeps their note type" in said
    assert bank["anki_notetype"]["fields"] == FIELDS  # (test_adopt_kept.py)
    lock = (project / "banks" / "ankigen.lock").read_text("utf-8")
    collection.import_package(shared)
    for guid in (collection.col.get_note(n).guid for n in collection.col.find_notes("")):
        assert guid.replace("\\", "\\\\").replace('"', '\\"') in lock
    # the same deck adopted again would give its notes two identities: refused
    again = invoke(runner, "import", str(shared), "--from", "apkg", "--topic", "physics",
                   "--lang", "de")  # fmt: skip
    assert again.exit_code == 1 and "adopted before" in again.stderr
    assert "Traceback" not in again.output


@pytest.mark.parametrize("merge", [False, True])
def test_what_a_learner_who_studied_the_deck_gets_from_the_adopted_build(
    project: Path, runner: CliRunner, shared: Path, collection: AnkiCollection, merge: bool
) -> None:
    """Adopted onto ankigen's note type: Anki's importer matches notes by GUID, but never
    changes an existing note's type on its own (rslib `maybe_update_existing_note`): by default the adopted notes are
    "conflicting" and left alone; with "Merge note types", each note moves to ankigen's
    note type, its reviewed card stays on the old template, and ankigen's card is new."""
    collection.import_package(shared)
    assert collection.review_all() == 3
    reviews, cards = collection.revlog_count(), sorted(collection.col.find_cards(""))
    assert "Merge note types" in adopt(runner, shared, "--notetype", "ankigen")
    bank = project / "banks" / "physics" / "en.yaml"
    assert invoke(runner, "build").exit_code == 0, bank.read_text("utf-8")
    request = ImportAnkiPackageRequest(
        package_path=str(project / "out" / "physics.en.apkg"),
        options=ImportAnkiPackageOptions(merge_notetypes=merge),
    )
    log = collection.col.import_anki_package(request).log
    assert collection.col.note_count() == 3  # never a duplicate note
    assert collection.revlog_count() == reviews  # and never a review lost
    for card_id in cards:  # each reviewed card is still there, its history with it
        card = collection.col.get_card(card_id)
        assert card.reps == 1 and card.template()["name"] == ADDON
    notes = [collection.col.get_note(n) for n in collection.col.find_notes("")]
    if not merge:
        assert (len(log.conflicting), len(log.updated), len(log.new)) == (3, 0, 0)
        assert {note.note_type()["name"] for note in notes} == {ADDON}  # type: ignore[index]
        assert sorted(collection.col.find_cards("")) == cards
    else:
        assert (len(log.updated), len(log.new)) == (3, 0)
        assert {note.note_type()["name"] for note in notes} == {NOTETYPE_NAME}  # type: ignore[index]
        new = [c for c in collection.col.find_cards("") if c not in cards]
        assert len(new) == 3
        assert {collection.col.get_card(c).template()["name"] for c in new} == {TEMPLATE_NAME}
        assert all(collection.col.get_card(c).reps == 0 for c in new)


def test_other_note_types_are_read_by_the_fields_named(
    project: Path, runner: CliRunner, tmp_path: Path
) -> None:
    author = AnkiCollection(tmp_path / "author")
    try:
        fields = ("Front", "A", "B", "C", "Correct", "Back")
        model = note_type(
            author, "genanki quiz", fields, "{{Front}}{{A}}{{B}}{{C}}", "{{Correct}}{{Back}}"
        )
        note = author.col.new_note(model)
        note["Front"], note["A"], note["B"], note["C"] = "2 + 2?", "3", "<b>4</b>", "5"
        note["Correct"], note["Back"] = "2", "Count&nbsp;them."
        author.col.add_note(note, author.col.decks.id("Maths"))
        package = tmp_path / "maths.apkg"
        export(author, package)
    finally:
        author.close()
    unknown = invoke(runner, "import", str(package), "--from", "apkg", "--topic", "physics",
                     "--lang", "en")  # fmt: skip
    assert unknown.exit_code == 1 and "--fields question=FIELD" in unknown.stderr
    bad = invoke(runner, "import", str(package), "--from", "apkg", "--topic", "physics",
                 "--lang", "en", "--fields", "question=Front")  # fmt: skip
    assert bad.exit_code == 2 and "answer=FIELD is needed" in bad.stderr
    adopt(
        runner, package, "--fields", "question=Front,choices=A..C,answer=Correct,explanation=Back"
    )
    [item] = yaml.safe_load((project / "banks" / "physics" / "en.yaml").read_text("utf-8"))["items"]
    assert (item["question"], item["choices"], item["answer"]) == (
        "2 + 2?",
        ["3", "<b>4</b>", "5"],
        2,
    )
    assert item["explanation"] == "Count\u00a0them."


def test_an_answer_that_is_a_choices_text_and_another_choices_letter_is_not_guessed(
    project: Path, runner: CliRunner, tmp_path: Path
) -> None:
    """An exam deck whose answer field holds the right choice's text: "B" among the
    choices G, X, Y, B is choice 4 by its text and choice 2 by its letter, "4" among 2, 4,
    5, 6 choice 2 by its text and 4 by its number. Read as a letter or a number, such
    answers went wrong with no warning; each is now left for the author to say."""
    author = AnkiCollection(tmp_path / "author")
    try:
        fields = ("Number", "Question", "A", "B", "C", "D", "Full")
        model = note_type(author, "exam", fields, "{{Question}}{{A}}{{B}}{{C}}{{D}}", "{{Full}}")
        rows = [
            ("Which symbol is the field?", ("G", "X", "Y", "B"), "B"),
            ("How many?", ("2", "4", "5", "6"), "4"),
            ("Which colour?", ("red", "blue", "green", "pink"), "blue"),
        ]
        for number, (question, choices, full) in enumerate(rows, start=1):
            note = author.col.new_note(model)
            note["Number"], note["Question"], note["Full"] = f"E{number}", question, full
            for name, choice in zip("ABCD", choices, strict=True):
                note[name] = choice
            author.col.add_note(note, author.col.decks.id("Exam"))
        package = tmp_path / "exam.apkg"
        export(author, package)
    finally:
        author.close()
    said = adopt(runner, package, "--fields", "question=Question,choices=A..D,answer=Full")
    assert "the answer 'B' names choice 2 by its letter and choice 4 by its text" in said
    assert "the answer '4' names choice 4 by its number and choice 2 by its text" in said
    bank = (project / "banks" / "physics" / "en.yaml").read_text("utf-8")
    items = yaml.safe_load(bank.replace("answer: ~", "answer: null"))["items"]
    assert [item["answer"] for item in items] == [None, None, 2]
    assert "answer_format: text" in bank


def test_a_package_of_several_decks_is_adopted_a_deck_at_a_time(
    project: Path, runner: CliRunner, tmp_path: Path
) -> None:
    author = AnkiCollection(tmp_path / "author")
    try:
        addon_deck(author, tmp_path / "one.apkg", "Physics")
        addon = author.col.models.by_name(ADDON)
        note = author.col.new_note(addon)
        note["Question"], note["Q_1"], note["Q_2"], note["Answers"] = "Q?", "a", "b", "1 0"
        author.col.add_note(note, author.col.decks.id("Chemistry"))
        package = export(author, tmp_path / "both.colpkg.apkg")
    finally:
        author.close()
    both = invoke(runner, "import", str(package), "--from", "apkg", "--topic", "physics",
                  "--lang", "en")  # fmt: skip
    assert both.exit_code == 1 and "--deck NAME" in both.stderr and "'Chemistry'" in both.stderr
    adopt(runner, package, "--deck", "Chemistry")
    bank = yaml.safe_load((project / "banks" / "physics" / "en.yaml").read_text("utf-8"))
    assert [item["question"] for item in bank["items"]] == ["Q?"]


def test_a_nested_deck_with_another_makers_guids_builds_and_updates_its_learners(
    project: Path, runner: CliRunner, tmp_path: Path, collection: AnkiCollection
) -> None:
    """Notes made by another tool keep their GUIDs (here 32 hex digits), which the lock
    refused as no GUID once the import had written them; and a deck in a parent deck is
    named whole in the lock, where its last part alone made the first build warn of a
    rename and advise setting a name that would move new cards elsewhere."""
    author = AnkiCollection(tmp_path / "author")
    try:
        addon_deck(author, tmp_path / "first.apkg", "Exams::Physics")
        for number, note in enumerate(author.notes()):
            note.guid = f"{number:032x}"
            author.col.update_note(note)
        package = export(author, tmp_path / "physics.apkg")
    finally:
        author.close()
    assert collection.import_package(package).new == len(NOTES)
    adopt(runner, package)
    built = invoke(runner, "build")
    assert built.exit_code == 0, built.output
    assert "renamed" not in built.output
    log = collection.import_package(project / "out" / "physics.en.apkg")
    assert (log.updated, log.new, log.duplicate, log.conflicting) == (len(NOTES), 0, 0, 0)
    assert sorted(note.guid for note in collection.notes()) == [
        f"{n:032x}" for n in range(len(NOTES))
    ]
    cards = [collection.col.get_card(card) for card in collection.col.find_cards("")]
    assert {collection.col.decks.name(card.did) for card in cards} == {"Exams::Physics"}


@pytest.mark.parametrize("content", [b"", b"PK\x03\x04 broken", b"not a zip at all"])
def test_a_file_that_is_no_package_is_refused_plainly(
    project: Path, runner: CliRunner, tmp_path: Path, content: bytes
) -> None:
    package = tmp_path / "deck.apkg"
    package.write_bytes(content)
    result = invoke(runner, "import", str(package), "--topic", "physics", "--lang", "en")
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output and "deck.apkg" in result.stderr
    assert not (project / "banks" / "ankigen.lock").exists()


def test_basic_notes_with_the_choices_written_in_the_front_are_read(
    project: Path, runner: CliRunner, tmp_path: Path
) -> None:
    """Anki's own Basic note type, the choices as the front's last lines and the answer on
    the back by label or text; a note without choices is named and skipped."""
    author = AnkiCollection(tmp_path / "author")
    notes = [
        ("Which collective sums gradients?<br>A) Broadcast<br>B) All-reduce<br>C) Scatter", "B"),
        ("Pick the even numbers<div>a. 2</div><div>b. 3</div><div>c. 4</div>", "Answer: a, c"),
        ("1. What is 2 + 2?<br>1) 3<br>2) 4", "4"),
        ("What is a shard?", "A piece of the parameters."),
        # a law deck's labels and answers (a real deck's): `a.)`, and two labels joined
        ("Wo gilt es?<br>a.) Weltweit<br>b.) Europaweit<br>c.) Nur hier", "a.), c.) (§9 PatG)"),
        ("Was gilt?<br>a.) X<br>b.) Y<br>c.) Z<br>d.) W", "c.)&nbsp;und d.)"),
        ("Welche?<br>a.) P<br>b.) Q<br>c.) R<br>d.) S", "a.), c.) (meist, mit Ausnahmen), d.)"),
        ("Wer?<br>A) X<br>B) Y<br>C) Z", "B (§ 69a UrhG) “Ein Satz, A, C.”"),
        ("Wie?<br>A) X<br>B) Y<br>C) Z", "A,C siehe hier."),
    ]
    try:
        basic = author.col.models.by_name("Basic")
        for front, back in notes:
            note = author.col.new_note(basic)  # type: ignore[arg-type]
            note["Front"], note["Back"] = front, back
            author.col.add_note(note, author.col.decks.id("Quiz"))
        package = tmp_path / "basic.apkg"
        export(author, package)
    finally:
        author.close()
    fields = ("--fields", "question=Front,answer=Back")
    kept = invoke(runner, "import", str(package), "--from", "apkg", "--topic", "physics",
                  "--lang", "en", *fields)  # fmt: skip
    assert kept.exit_code == 1 and "--notetype ankigen" in kept.stderr
    said = adopt(runner, package, *fields, "--notetype", "ankigen")
    assert "basic.apkg:4: warning: no choices found at the end of the question" in said
    items = yaml.safe_load((project / "banks" / "physics" / "en.yaml").read_text("utf-8"))["items"]
    assert [(i["question"], i["choices"], i["answer"]) for i in items] == [
        ("Which collective sums gradients?", ["Broadcast", "All-reduce", "Scatter"], 2),
        ("Pick the even numbers", ["2", "3", "4"], [1, 3]),
        ("1. What is 2 + 2?", ["3", "4"], 2),
        ("Wo gilt es?", ["Weltweit", "Europaweit", "Nur hier"], [1, 3]),
        ("Was gilt?", ["X", "Y", "Z", "W"], [3, 4]),
        ("Welche?", ["P", "Q", "R", "S"], [1, 3, 4]),
        # words after the labels may say anything of them: left for the author to say
        ("Wer?", ["X", "Y", "Z"], None),
        ("Wie?", ["X", "Y", "Z"], None),
    ]


def mcq_deck(tmp_path: Path, notes: list[tuple[str, ...]]) -> Path:
    """A deck of a hand-made note type (Question, A..D, Ans, Ex): each note's question,
    answer field, explanation, and maybe its choices (else made up from the question)."""
    author = AnkiCollection(tmp_path / "author")
    try:
        fields = ("Question", "A", "B", "C", "D", "Ans", "Ex")
        model = note_type(author, "MCQ", fields, "{{Question}}", "{{FrontSide}}<hr>{{Ans}}{{Ex}}")
        for question, answer, explanation, *choices in notes:
            note = author.col.new_note(model)
            note["Question"], note["Ans"], note["Ex"] = question, answer, explanation
            for number, letter in enumerate("ABCD"):
                note[letter] = choices[number] if choices else f"{question} {letter}"
            author.col.add_note(note, author.col.decks.id("Quiz"))
        return export(author, tmp_path / "numbers.apkg")
    finally:
        author.close()


MCQ_FIELDS = ("--fields", "question=Question,choices=A..D,answer=Ans,explanation=Ex")


def test_an_answer_of_one_among_numbered_answers_is_choice_one(
    project: Path, runner: CliRunner, tmp_path: Path
) -> None:
    """A deck whose answer field holds the right choice's number (its template reads
    `Number({{Ans}})`): a lone `1` was taken for one bit among four choices, so a quarter
    of such a deck's notes were left as TODO, and a deck of one note refused."""
    notes = [("First?", "1", "x"), ("Third?", "3", "x"), ("Also first?", "1", "x")]
    said = adopt(runner, mcq_deck(tmp_path, notes), *MCQ_FIELDS)
    assert "does not say which" not in said
    items = yaml.safe_load((project / "banks" / "physics" / "en.yaml").read_text("utf-8"))["items"]
    assert [i["answer"] for i in items] == [1, 3, 1]


def test_answers_the_next_build_writes_otherwise_are_said_once(
    project: Path, runner: CliRunner, tmp_path: Path
) -> None:
    """The build writes every answer field in the deck's one format: a note that said more
    (`Answer: C (see § 5)`) lost it on learners' notes, unsaid. Words after labels that
    may say anything of them (`A and B are wrong, C is right`) are not read."""
    notes = [
        ("One?", "A", "x"),
        ("Two?", "Answer: C (see § 5 para 2)", "x"),
        ("Three?", "<b>B</b>", "x"),
        ("Four?", "A and B are wrong, C is right", "x"),
        ("Five?", "<s>A</s> C", "x"),
        ("Six?", "B", "x", "B", "C", "B", "D"),  # by text, choice 1 or 3
        ("Seven?", "A (wrong), C", "x"),
    ]
    said = adopt(runner, mcq_deck(tmp_path, notes), *MCQ_FIELDS[:1], MCQ_FIELDS[1])
    lines = [line.rpartition("/")[2] for line in said.splitlines()]
    assert (
        "numbers.apkg:2: warning: 1 note(s) (2) write their answer otherwise than the deck's "
        "letters do: the next build writes it so on learners' notes ('Answer: C (see § 5 "
        "para 2)' becomes 'C')"
    ) in lines
    assert (
        "numbers.apkg:4: warning: the answer 'A and B are wrong, C is right' does not say "
        "which of the 4 choices are correct"
    ) in lines
    assert (
        "numbers.apkg:5: warning: the answer 'A C' strikes some of its text out (<s>, <del>): "
        "which choices it names is left for you to say"
    ) in lines
    assert (
        "numbers.apkg:6: warning: the answer 'B' names choice 2 by its letter and choice 1 or "
        "3 by its text; left for you to say"
    ) in lines
    items = yaml.safe_load((project / "banks" / "physics" / "en.yaml").read_text("utf-8"))["items"]
    assert [i["answer"] for i in items] == [1, 3, 2, None, None, None, None]


@pytest.mark.parametrize(
    ("value", "texts", "labels", "read"),
    [
        ("A) Paris", ["Paris", "London"], [], (1,)),  # the label, then its own text
        ("A) Paris, C) Berlin", ["Paris", "London", "Berlin"], [], None),
        ("A: Paris? No. C.", ["Paris", "London", "Berlin"], [], None),
        ("A, C (all wrong)", ["x", "y", "z"], [], None),
        ("(wrong) A", ["x", "y", "z"], [], None),
        ("a.), c.) (generally, but with exceptions), d.)", ["p", "q", "r", "s"], list("abcd"),
         (1, 3, 4)),
        ("Answer: C (see § 5 para 2)", ["x", "y", "z"], [], (3,)),
        # the labels, then the same choices said again, each with its own text (a real deck)
        ("b.), d.) (§1) b.) Vorschläge d.) Erfindungen", ["Design", "Vorschläge", "Code",
         "Erfindungen"], list("abcd"), (2, 4)),
        ("b.), d.) b.) Vorschläge d.) Design", ["Design", "Vorschläge", "Code",
         "Erfindungen"], list("abcd"), None),
        ("b.) d.) c.) Code", ["Design", "Vorschläge", "Code", "Erfindungen"], list("abcd"),
         None),
        ("d. melanogaster", ["A. thaliana", "C. elegans", "D. melanogaster"], [], (3,)),
    ],
)  # fmt: skip
def test_an_answers_words_are_read_only_where_they_cannot_take_a_label_back(
    value: str, texts: list[str], labels: list[str], read: tuple[int, ...] | None
) -> None:
    """A red team's answers: prose, remarks and choice texts after labels may say
    anything of them; a wrong set of correct choices is worse than a TODO."""
    from ankigen.formats.noteanswers import answer_read

    found = answer_read(value, texts, list(range(1, len(texts) + 1)), labels)
    assert (found[1] if found else None) == read


def test_formatting_learners_lose_at_the_next_build_is_said_once(
    project: Path, runner: CliRunner, tmp_path: Path
) -> None:
    """The first build rewrites every read field as ankigen draws the bank's text: a
    real deck's explanations lost their tables, lists, headings and the bold of a styled
    span on learners' cards, the styles without a word."""
    notes = [
        ("Plain?", "2", "Because <b>bold</b> stays.<div>A line.</div>"),
        ("Styled?", "1", 'Hb <span style="font-weight:600">&lt; 5 g/dL</span>'),
        ("Table?", "3", "<h2>Doses</h2><table><tr><td>a</td><td>b</td></tr></table>"),
    ]
    said = adopt(runner, mcq_deck(tmp_path, notes), *MCQ_FIELDS)
    assert (
        "numbers.apkg:2: warning: 2 note(s) (2, 3) hold formatting a bank's text does not "
        "keep (<h2>, <table>, styles): from the next build, learners see those fields as "
        "ankigen draws the bank's text, without it"
    ) in [line.rpartition("/")[2] for line in said.splitlines()]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("question=Q,choices=A..D,answer=R", ("A", "B", "C", "D")),
        ("question=Q,choices=Q_1..Q_3,answer=R", ("Q_1", "Q_2", "Q_3")),
        # an exam deck's fields: the range with its prefix, as its fields are named
        ("question=Q,choices=ChoiceA..ChoiceC,answer=R", ("ChoiceA", "ChoiceB", "ChoiceC")),
        ("question=Q,choices=OptionA..C,answer=R", ("OptionA", "OptionB", "OptionC")),
        ("question=Q,choices=X+Y,answer=R", ("X", "Y")),
    ],
)
def test_fields_name_choices_by_ranges_and_lists(spec: str, expected: tuple[str, ...]) -> None:
    from ankigen.formats.ankifields import parse_fields

    assert parse_fields(spec)["choices"] == expected


def test_an_answer_that_is_a_choices_whole_text_is_kept_as_text() -> None:
    """A real deck's answer field held choice A's whole text, `a. Tấn công lại...`: read
    as the letter A (the same choice), the next build wrote `A` into learners' notes."""
    from ankigen.formats.noteanswers import answer_read

    texts = ["a. Tấn công lại Prednisone", "b. Ngừng thuốc", "c. Chờ"]
    assert answer_read("a. Tấn công lại Prednisone", texts, [1, 2, 3], []) == ("text", (1,))
    assert answer_read("A", texts, [1, 2, 3], []) == ("letters", (1,))


@pytest.mark.parametrize("spec", ["choices=E..A", "choices=Q_5..Q_1"])
def test_a_range_that_runs_backwards_is_said_to(spec: str) -> None:
    """`choices=E..A` named no field, and the import then said the choices were written
    in the question field."""
    from ankigen.formats.ankifields import parse_fields
    from ankigen.formats.model import FormatError

    with pytest.raises(FormatError, match="runs backwards"):
        parse_fields(f"question=Q,{spec},answer=R")


def test_a_role_of_one_field_given_several_is_refused_not_cut_short() -> None:
    """`question=Ques+Source` used `Ques` alone, silently."""
    from ankigen.formats.ankifields import parse_fields
    from ankigen.formats.model import FormatError

    with pytest.raises(FormatError, match="question is one field"):
        parse_fields("question=Ques+Source,choices=A..B,answer=R")
    assert parse_fields("question=Q,choices=A..B,answer=R,explanation=E1+E2")["explanation"] == (
        "E1",
        "E2",
    )
