"""Decks of other makers to adopt (`import --from apkg`): the "Multiple Choice for Anki"
add-on's note type, made in the real Anki backend, and a genanki deck's note type as a
bank keeps it (`anki_notetype:`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from tests.helpers import DATA, AnkiCollection, export, invoke
from tests.support.images import line_art

# the add-on's note type as its source makes it (src/multiple_choice/template.py:
# `aio_model_name`, `aio_card`, `aio_fields`), with its own templates and styling
ADDON_CARD = DATA / "anki-mc"
ADDON = "AllInOne (kprim, mc, sc)"
QTYPE = "QType (0=kprim,1=mc,2=sc)"
FIELDS = ["Question", "Title", QTYPE, "Q_1", "Q_2", "Q_3", "Q_4", "Q_5", "Answers", "Sources"]
FIELDS.append("Extra 1")
NOTES = [
    # question, QType, choices, Answers, Extra 1
    ("Which is a vector?", "2", ["mass", "velocity", "time"], "0 1 0", "It has a direction."),
    ("Which are SI base units?", "1", ["metre", "newton", "kelvin", "joule"], "1 0 1 0", "N, J"),
    ("Judge each one", "0", ["light is a wave", "sound in vacuum", "g ~ 9.8", "ice sinks"],
     "1 0 1 0", "Sound needs a medium."),
]  # fmt: skip


def note_type(
    collection: AnkiCollection, name: str, fields: Sequence[str], front: str, back: str
) -> Any:
    """A hand-made note type of one card, `Card 1`, added to the collection, as a deck's
    author makes one in Anki's note type editor."""
    models = collection.col.models
    model = models.new(name)
    for field in fields:
        models.add_field(model, models.new_field(field))
    template = models.new_template("Card 1")
    template["qfmt"], template["afmt"] = front, back
    models.add_template(model, template)
    models.add(model)
    return models.by_name(name)


def addon_deck(collection: AnkiCollection, path: Path, deck: str = "Physics") -> Path:
    """Notes of the add-on's note type in `deck`, exported as a shared deck is."""
    models = collection.col.models
    model = models.new(ADDON)
    for name in FIELDS:
        models.add_field(model, models.new_field(name))
    template = models.new_template(ADDON)
    template["qfmt"] = (ADDON_CARD / "front.html").read_text("utf-8")
    template["afmt"] = (ADDON_CARD / "back.html").read_text("utf-8")
    models.add_template(model, template)
    model["css"] = (ADDON_CARD / "css.css").read_text("utf-8")
    models.add(model)
    model = models.by_name(ADDON)
    deck_id = collection.col.decks.id(deck)
    image = collection.col.media.add_file(str(line_art(path.with_name("vector.png"))))
    for question, kind, choices, answers, extra in NOTES:
        note = collection.col.new_note(model)
        note["Question"], note[QTYPE], note["Answers"] = question, kind, answers
        if kind == "2":  # the question's picture, in the package's media
            note["Question"] += f'<img src="{image}" alt="an arrow">'

        note["Extra 1"] = extra
        for number, choice in enumerate(choices, start=1):
            note[f"Q_{number}"] = choice
        collection.col.add_note(note, deck_id)
    return export(collection, path, with_media=True)


def addon_package(tmp_path: Path) -> Path:
    """The add-on's deck as its author shares it (the `shared` fixture)."""
    author = AnkiCollection(tmp_path / "author")
    try:
        return addon_deck(author, tmp_path / "physics.apkg")
    finally:
        author.close()


def adopt(runner: CliRunner, package: Path, *more: str) -> str:
    result = invoke(runner, "import", str(package), "--from", "apkg", "--topic", "physics",
                    "--lang", "en", *more)  # fmt: skip
    assert result.exit_code == 0, result.output
    return result.stderr


GENANKI_KEPT = {
    "id": 1607392319,
    "name": "genanki quiz",
    "fields": ["Front", "A", "B", "C", "Correct", "Back"],
    "template": "Card 1",
    "question": "Front",
    "choices": ["A", "B", "C"],
    "answer": "Correct",
    "answer_format": "numbers",
    "explanation": "Back",
    "adopted": 1700000000,
}


def build(runner: CliRunner, project: Path) -> Path:
    result = invoke(runner, "build")
    assert result.exit_code == 0, result.output
    return project / "out" / "physics.en.apkg"
