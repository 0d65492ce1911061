"""`ankigen preview`: the real templates, rendered as Anki renders them, clickable."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ankigen.apkg.render import card_sides
from tests.conftest import invoke
from tests.helpers import AnkiCollection, item, write_bank


def test_preview_writes_a_page_per_deck_and_an_index(project: Path, runner: CliRunner) -> None:
    write_bank(project / "banks", "demo", "en")
    write_bank(project / "banks", "demo", "ur")
    result = invoke(runner, "preview")
    assert result.exit_code == 0
    assert result.stdout == (
        "wrote out/preview/demo.en.html\n"
        "wrote out/preview/demo.ur.html\n"
        "wrote out/preview/index.html\n"
    )
    index = (project / "out" / "preview" / "index.html").read_text(encoding="utf-8")
    assert 'href="demo.ur.html"' in index
    assert '<table class="pv-matrix">' in index and index.count('data-state="complete"') == 1
    assert index.count('data-state="partial"') == 1  # the "Urdu" bank is in English


def test_preview_refuses_broken_banks(project: Path, runner: CliRunner) -> None:
    write_bank(project / "banks", items=[{"id": "x"}])
    result = invoke(runner, "preview")
    assert result.exit_code == 1
    assert "banks/demo/en.yaml:" in result.output
    assert not (project / "out").exists()


def test_rendering_matches_ankis_own_renderer(
    project: Path, runner: CliRunner, collection: AnkiCollection
) -> None:
    write_bank(
        project / "banks",
        items=[item("a"), item("b", answer=[1, 2], shuffle=False, question="x <i>y</i> & z?")],
    )
    assert invoke(runner, "build").exit_code == 0
    collection.import_package(project / "out" / "demo.en.apkg")
    cards = [collection.col.get_card(c) for c in collection.col.find_cards("")]
    assert len(cards) == 2
    for card in cards:
        assert card_sides(tuple(card.note().fields)) == (card.question(), card.answer())


def test_preview_page_is_interactive_in_a_browser(project: Path, runner: CliRunner) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    from tests.test_card import CHROMIUM, CHROMIUM_ARGS

    write_bank(project / "banks", items=[item("a", answer=3), item("b", answer=[1, 2])])
    assert invoke(runner, "preview").exit_code == 0
    page_path = project / "out" / "preview" / "demo.en.html"
    errors: list[Any] = []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.on("pageerror", lambda error: errors.append(error))
            page.goto(page_path.as_uri())
            first = page.locator(".pv-card").nth(0)
            first.locator('button.ag-choice[data-choice="3"]').click()
            first.locator(".pv-flip").click()
            assert first.locator(".ag-verdict").inner_text() == "✓ Correct"
            assert first.locator(".pv-flip").inner_text() == "Show question"
            assert page.locator(".pv-card").nth(1).locator("button.ag-choice").count() == 4
        finally:
            browser.close()
    assert errors == []
