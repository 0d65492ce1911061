"""The project file, BANKS/ankigen.toml: deck-name template, reference, tags, media."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from PIL import Image

from tests.helpers import AnkiCollection, invoke, item, write_bank

PROJECT = """\
deck = "Training::{topic_title}::{title} ({language})"
reference = "de"
tags = ["team"]
media = "../pictures"

[topics]
demo = "Demo topic"
"""


def test_template_tags_reference_and_media_apply_to_every_bank(
    project: Path, runner: CliRunner, collection: AnkiCollection
) -> None:
    banks = project / "banks"
    (banks / "ankigen.toml").write_text(PROJECT, encoding="utf-8")
    (project / "pictures").mkdir()
    Image.new("RGB", (8, 8), "red").save(project / "pictures" / "p.png")
    write_bank(banks, language="de", items=[item("a", 1), item("b", 2)], title="Demo-Quiz")
    write_bank(banks, language="en", items=[item("a", 2, image="p.png", image_alt="red")])
    write_bank(banks, "other", "en", deck="Mine::Other", tags=["own"])
    result = invoke(runner, "build")
    assert result.exit_code == 0, result.output
    # the reference is German: English is the one out of step
    lint = invoke(runner, "lint").output
    assert (
        "banks/demo/en.yaml:4: warning: item 'b' is missing in 'en' (it is in banks/demo/de.yaml)"
        in lint
    )
    assert "answer 2 differs from 1 in 'de'" in lint
    for package in sorted((project / "out").glob("*.apkg")):
        collection.import_package(package)
    assert collection.deck_names() == {
        "Training",
        "Training::Demo topic",
        "Training::Demo topic::Demo-Quiz (de)",
        "Training::Demo topic::demo quiz (en)",
        "Mine",
        "Mine::Other",
    }
    assert collection.note_by_item("a", "de").tags == ["team"]
    assert sorted(collection.note_by_item("one").tags) == ["own", "team"]
    assert 'alt="red"' in collection.note_by_item("a", "en")["Image"]


def test_changing_the_template_of_released_decks_warns(project: Path, runner: CliRunner) -> None:
    banks = project / "banks"
    write_bank(banks)
    invoke(runner, "build")
    (banks / "ankigen.toml").write_text('deck = "Team::{title}"\n', encoding="utf-8")
    result = invoke(runner, "build")
    assert result.exit_code == 0
    assert (
        "warning: the deck is renamed from 'demo quiz (en)' to 'Team::demo quiz': people who "
        "imported it keep their cards in 'demo quiz (en)'" in result.stderr
    )
    # a project change is a change: no stale "up to date"
    assert "wrote out/demo.en.apkg" in result.stdout


def test_a_new_reference_checks_cached_banks_again(project: Path, runner: CliRunner) -> None:
    """The bank cache holds each bank's warnings; those about untranslated text depend on
    the reference language, so a build after it changes says what `lint` says."""
    banks = project / "banks"
    german = "Die Parameter werden auf alle Prozesse verteilt, damit der Speicher reicht."
    write_bank(banks, language="fr", items=[item("one", question=german, explanation=german)])
    first = invoke(runner, "build")
    assert first.exit_code == 0 and "warning" not in first.stderr
    (banks / "ankigen.toml").write_text('reference = "de"\n', encoding="utf-8")
    warning = (
        "banks/demo/fr.yaml:5: warning: item 'one': untranslated? question, explanation in German"
    )
    assert warning in invoke(runner, "lint").output
    # a build names no warning, it counts them
    assert "1 warning in the banks; 'ankigen lint' lists them" in invoke(runner, "build").stderr
    (banks / "ankigen.toml").unlink()
    assert "warning" not in invoke(runner, "build").stderr


def test_every_problem_at_its_line(project: Path, runner: CliRunner) -> None:
    banks = project / "banks"
    write_bank(banks)
    (banks / "ankigen.toml").write_text(
        'deck = "{title} {lang}"\nrefrence = "en"\ntags = ["a b"]\n\n[topics]\nNot_A_Slug = "x"\n',
        encoding="utf-8",
    )
    result = invoke(runner, "lint")
    assert result.exit_code == 1
    assert result.output == (
        "banks/ankigen.toml:1: error: deck template: unknown placeholder {lang}; use {title}, "
        "{topic}, {language}, {topic_title}\n"
        "banks/ankigen.toml:2: error: unknown key 'refrence'; did you mean 'reference'?\n"
        "banks/ankigen.toml:3: error: tags must be a list of tags without white space\n"
        "banks/ankigen.toml:6: error: topics: 'Not_A_Slug' is not a topic slug\n"
        "4 errors, 0 warnings in 1 bank\n"
    )
    build = invoke(runner, "build")
    assert build.exit_code == 1 and "banks/ankigen.toml:2: error: unknown key" in build.output
    (banks / "ankigen.toml").write_text('deck = "A::::{title}"\ntags = [\n', encoding="utf-8")
    syntax = invoke(runner, "build")
    assert syntax.exit_code == 1
    assert syntax.output.startswith("banks/ankigen.toml:2: error: TOML syntax: Invalid value")


def test_parent_decks_describe_their_languages_and_versions(
    project: Path, runner: CliRunner, collection: AnkiCollection, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    banks = project / "banks"
    (banks / "ankigen.toml").write_text(
        'deck = "Training::{topic_title}::{language}"\n[topics]\ndemo = "Demo"\n', encoding="utf-8"
    )
    write_bank(banks, language="en")
    write_bank(banks, language="de", title="Demo-Quiz", items=[item("one"), item("two", 2)])

    def build() -> dict[str, str]:
        result = invoke(runner, "build", "--json")
        assert result.exit_code == 0, result.output
        return {d["language"]: d["version"] for d in json.loads(result.stdout)["decks"]}

    first = build()
    collection.import_package(project / "out" / "demo.en.apkg")
    parent = collection.col.decks.by_name("Training::Demo")
    assert parent is not None
    for expected in ("<b>Demo</b>", "English", "Deutsch", "Demo-Quiz", first["de"], first["en"]):
        assert expected in parent["desc"]
    # a new German version: the English package, its deck unchanged, still carries it
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700200000")
    write_bank(banks, language="de", title="Demo-Quiz", items=[item("one", question="Neu?")])
    second = build()
    assert second["en"] == first["en"] and second["de"] != first["de"]
    log = collection.import_package(project / "out" / "demo.en.apkg")
    assert (log.new, log.updated) == (0, 0)
    parent = collection.col.decks.by_name("Training::Demo")
    assert parent is not None and second["de"] in parent["desc"]
    assert first["de"] not in parent["desc"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            "deck = " + "9" * 5000 + "\n",
            "banks/ankigen.toml:1: error: TOML: a number too long to read",
        ),
        ("x = " + "[" * 1000 + "]" * 1000 + "\n", "banks/ankigen.toml:1: error: TOML: arrays or"),
        ('reference = "en"\nmedia = "a\\u0000b"\n', "banks/ankigen.toml:2: error: media must be a"),
    ],
)
def test_hostile_project_files(
    project: Path, runner: CliRunner, content: str, message: str
) -> None:
    write_bank(project / "banks")
    (project / "banks" / "ankigen.toml").write_text(content, encoding="utf-8")
    for command in ("lint", "build", "status"):
        result = invoke(runner, command)
        assert result.exit_code == 1
        assert message in result.output, (command, result.output)


@pytest.mark.parametrize(
    ("deck", "message"),
    [
        ('"{title:x}"', "deck template: {title:x} has a conversion or format spec"),
        (
            '"{title:>300000000}"',
            "deck template: {title:>300000000} has a conversion or format spec",
        ),
        ('"{title!r}"', "deck template: {title!r} has a conversion or format spec"),
        ('"{language!s:.1}"', "deck template: {language!s:.1} has a conversion or format spec"),
        ('"{title} }"', "deck template: a lone '}'"),
        ('"A\\u0000{title}"', "deck template: a control character or noncharacter"),
        (
            '"' + "x" * 256 + '::{title}"',
            "deck template: a part between '::' is longer than 255 characters",
        ),
    ],
)
def test_the_deck_template_is_a_template_not_str_format(
    project: Path, runner: CliRunner, deck: str, message: str
) -> None:
    write_bank(project / "banks")
    (project / "banks" / "ankigen.toml").write_text(f"deck = {deck}\n", encoding="utf-8")
    result = invoke(runner, "build")
    assert result.exit_code == 1
    assert f"banks/ankigen.toml:1: error: {message}" in result.output
    assert "internal error" not in result.output


def test_braces_in_a_deck_template_are_written_doubled(project: Path, runner: CliRunner) -> None:
    write_bank(project / "banks")
    (project / "banks" / "ankigen.toml").write_text(
        'deck = "{{Quiz}}::{topic} ({language})"\n', encoding="utf-8"
    )
    assert invoke(runner, "build").exit_code == 0
    assert "{Quiz}::demo (en)" in (project / "banks" / "ankigen.lock").read_text(encoding="utf-8")


@pytest.mark.parametrize("media", ["/", "../..", "../../etc", "pictures-link"])
def test_the_projects_media_stays_in_the_project(
    project: Path, runner: CliRunner, media: str
) -> None:
    write_bank(project / "banks")
    (project / "pictures-link").symlink_to("/")
    (project / "banks" / "ankigen.toml").write_text(
        f'media = "{("../" + media) if media == "pictures-link" else media}"\n', encoding="utf-8"
    )
    for command in ("lint", "build"):
        result = invoke(runner, command)
        assert result.exit_code == 1
        assert "banks/ankigen.toml:1: error: media " in result.output
        assert "is outside the project folder" in result.output


def test_media_inside_the_project_is_taken(project: Path, runner: CliRunner) -> None:
    write_bank(project / "banks")
    (project / "pictures").mkdir()
    (project / "banks" / "ankigen.toml").write_text('media = "../pictures"\n', encoding="utf-8")
    assert invoke(runner, "lint").exit_code == 0


def test_media_from_the_command_line_may_point_anywhere_and_is_said(
    project: Path, runner: CliRunner, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    write_bank(project / "banks")
    result = invoke(runner, "build", "--media", str(elsewhere))
    assert result.exit_code == 0, result.output
    assert f"reading images from {elsewhere}, outside the project (--media)" in result.stderr
    inside = invoke(runner, "build", "--media", "media")
    assert "outside the project" not in inside.stderr


def test_a_template_that_gives_two_banks_one_deck_is_an_error(
    project: Path, runner: CliRunner
) -> None:
    """The deck names compared are the ones that ship, the project's template applied."""
    write_bank(project / "banks", "demo", "en")
    write_bank(project / "banks", "demo", "de")
    (project / "banks" / "ankigen.toml").write_text('deck = "Quiz::{topic}"\n', encoding="utf-8")
    for command in ("lint", "build"):
        result = invoke(runner, command)
        assert result.exit_code == 1, command
        assert "the deck name 'Quiz::demo' is also the deck of" in result.output
    assert not (project / "out").exists()
    (project / "banks" / "ankigen.toml").write_text(
        'deck = "Quiz::{topic} ({language})"\n', encoding="utf-8"
    )
    assert invoke(runner, "build").exit_code == 0


def test_a_deck_name_made_too_long_by_a_title_is_an_error(project: Path, runner: CliRunner) -> None:
    write_bank(project / "banks", "demo", "en", title="T" * 300)
    (project / "banks" / "ankigen.toml").write_text('deck = "Quiz::{title}"\n', encoding="utf-8")
    result = invoke(runner, "lint")
    assert result.exit_code == 1
    assert "has a part between '::' longer than 255 characters" in result.output
