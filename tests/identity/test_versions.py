"""Ordered versions: in the deck description, build's output and JSON, and on every card."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from ankigen.identity.versions import deck_version, sort_key, version_string
from tests.helpers import (
    AnkiCollection,
    invoke,
    item,
    read_build_cache,
    write_bank,
    write_build_cache,
)

VERSION = r"\d{4}\.\d\d\.\d\d\+[0-9a-f]{8}"
DAY = 86400


def build_json(runner: CliRunner, monkeypatch: pytest.MonkeyPatch, epoch: int) -> dict[str, str]:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(epoch))
    result = invoke(runner, "build", "--json")
    assert result.exit_code == 0, result.output
    return {d["language"]: d["version"] for d in json.loads(result.stdout)["decks"]}


def test_versions_sort_in_time_and_only_move_with_content(
    project: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    banks = project / "banks"
    write_bank(banks, items=[item("a"), item("b")])
    write_bank(banks, language="de", items=[item("a"), item("b")], title="Demo")
    first = build_json(runner, monkeypatch, 1_700_000_000)
    assert all(re.fullmatch(VERSION, v) for v in first.values())
    assert first["en"].startswith("2023.11.14+")
    # nothing changed, days later: the same version
    assert build_json(runner, monkeypatch, 1_700_000_000 + 3 * DAY) == first
    write_bank(banks, items=[item("a", question="Edited?"), item("b")])
    second = build_json(runner, monkeypatch, 1_700_000_000 + 40 * DAY)
    assert second["en"].startswith("2023.12.24+")
    assert sort_key(second["en"]) > sort_key(first["en"]) and second["en"] > first["en"]
    assert second["de"] == first["de"]  # another deck's version is its own


def test_build_prints_the_version_and_the_description_shows_it(
    project: Path, runner: CliRunner, collection: AnkiCollection
) -> None:
    write_bank(project / "banks", language="yo")
    result = invoke(runner, "build")
    match = re.fullmatch(
        rf"wrote out/demo\.yo\.apkg: 2 notes \(2 new, 0 changed, 0 unchanged, 0 removed\), "
        rf"version ({VERSION})\n",
        result.stdout,
    )
    assert match, result.stdout
    assert invoke(runner, "build").stdout == (
        f"up to date out/demo.yo.apkg: 2 notes, version {match[1]}\n"
    )
    collection.import_package(project / "out" / "demo.yo.apkg")
    deck = collection.col.decks.by_name("demo quiz (yo)")
    assert deck is not None
    assert f"Ẹ̀dà: <code>{match[1]}</code>" in deck["desc"]


def test_one_edit_updates_one_note_not_the_whole_deck(
    project: Path, runner: CliRunner, collection: AnkiCollection, monkeypatch: pytest.MonkeyPatch
) -> None:
    banks = project / "banks"
    write_bank(banks, items=[item("a"), item("b"), item("c")])
    first = build_json(runner, monkeypatch, 1_700_000_000)
    assert collection.import_package(project / "out" / "demo.en.apkg").new == 3
    card_versions = {n["ItemId"]: n["Choices"] for n in collection.notes()}
    write_bank(banks, items=[item("a"), item("b", explanation="Better: b."), item("c")])
    second = build_json(runner, monkeypatch, 1_700_000_000 + 2 * DAY)
    log = collection.import_package(project / "out" / "demo.en.apkg")
    assert (log.new, log.updated) == (0, 1)
    after = {n["ItemId"]: n["Choices"] for n in collection.notes()}
    assert after["a"] == card_versions["a"] and after["c"] == card_versions["c"]
    # the edited card carries its own version: the day it changed, and its content
    found = re.search(rf'data-version="({VERSION})"', after["b"])
    assert found and found[1].startswith("2023.11.16+")
    assert second["en"].startswith("2023.11.16+") and second["en"] != first["en"]


def test_version_string_and_deck_version() -> None:
    assert version_string(0, "84a7bb7e0000") == "1970.01.01+84a7bb7e"
    one = deck_version([("g1", "h1", 10), ("g2", "h2", 5 * DAY)])
    assert one.startswith("1970.01.06+")
    assert deck_version([("g2", "h2", 5 * DAY), ("g1", "h1", 10)]) == one
    assert deck_version([("g1", "h1", 10), ("g2", "h3", 5 * DAY)]) != one
    assert sort_key("garbage") < sort_key(one)


@pytest.mark.parametrize("record", ["kept", "missing", "forged"])
def test_an_unchanged_deck_keeps_its_version_through_other_decks_edits(
    project: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch, record: str
) -> None:
    """The version of a deck left as it was comes with its package's record in the
    build cache; without a well-formed one it is made again from the lock: the same."""
    banks = project / "banks"
    write_bank(banks, language="en", items=[item("a"), item("b", 2)])
    write_bank(banks, language="de", items=[item("a", question="Frage?"), item("b", 2)])
    first = build_json(runner, monkeypatch, 1_790_000_000)
    cache = project / "out" / ".ankigen-cache.json"
    data = read_build_cache(cache)
    assert data["packages"]["demo.de.apkg"]["deck_version"] == first["de"]
    if record != "kept":
        forged = {"missing": None, "forged": "<b>9999.99.99+</b>"}[record]
        data["packages"]["demo.de.apkg"]["deck_version"] = forged
        write_build_cache(cache, data)
    import ankigen.builder.deckplan

    made: list[str] = []
    real = ankigen.builder.deckplan.lock_version
    monkeypatch.setattr(
        ankigen.builder.deckplan,
        "lock_version",
        lambda topic, language, lock: made.append(language) or real(topic, language, lock),
    )
    write_bank(banks, language="en", items=[item("a", question="Edited?"), item("b", 2)])
    second = build_json(runner, monkeypatch, 1_790_000_000 + DAY)
    assert second["de"] == first["de"] and second["en"] != first["en"]
    assert ("de" in made) == (record != "kept")
