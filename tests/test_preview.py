"""`ankigen preview`: the real templates, rendered as Anki renders them, clickable."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ankigen.apkg.render import card_sides
from tests.helpers import AnkiCollection, invoke, item, write_bank


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


def test_preview_page_is_interactive_in_a_browser(
    project: Path, runner: CliRunner, chromium: Any
) -> None:

    write_bank(project / "banks", items=[item("a", answer=3), item("b", answer=[1, 2])])
    assert invoke(runner, "preview").exit_code == 0
    page_path = project / "out" / "preview" / "demo.en.html"
    errors: list[Any] = []
    page = chromium.new_page()
    try:
        page.on("pageerror", lambda error: errors.append(error))
        page.goto(page_path.as_uri())
        first = page.locator(".pv-card").nth(0)
        first.locator('button.ag-choice[data-choice="3"]').click()
        first.locator(".pv-flip").click()
        assert first.locator(".ag-verdict").inner_text() == "✓ Correct"
        assert first.locator(".pv-flip").inner_text() == "Show question"
        assert page.locator(".pv-card").nth(1).locator("button.ag-choice").count() == 4
    finally:
        page.close()
    assert errors == []


def test_each_side_on_the_page_is_the_packages_side_exactly(project: Path) -> None:
    """The page holds the note type's CSS and its long blocks once; a side, with them put
    back as the controller puts them, is byte for byte what Anki renders."""
    from ankigen.apkg import notetype
    from ankigen.preview.pages import make_preview, shared

    write_bank(
        project / "banks",
        items=[item("a"), item("b", answer=[1, 2], question=r"x <i>y</i> \(a<b\) & z?")],
    )
    make_preview(project / "banks", project / "out")
    page = (project / "out" / "demo.en.html").read_text(encoding="utf-8")
    common = shared()
    templates = notetype.templates()
    assert common.style == f"<style>{templates.css}</style>" and common.style in page
    assert common.blocks[0] not in page  # the card's script is in the JSON, once
    assert common.json() in page
    assert json.loads(common.json()) == list(common.blocks)
    assert all(block in templates.back for block in common.blocks)
    from ankigen.apkg.note import note_content
    from ankigen.bank.reader import load_bank

    bank, problems = load_bank(project / "banks" / "demo" / "en.yaml")
    assert bank is not None and not problems
    for one in bank.items:
        fields = note_content(bank, one).fields
        front, back = common.sides(fields)
        assert (common.whole(front), common.whole(back)) == card_sides(fields)
        assert len(front) + len(back) < 8_000  # the blocks are not in each card


AQT = importlib.util.find_spec("_aqt")
AQT_JS = Path(AQT.submodule_search_locations[0]) / "data" / "web" / "js" if AQT else None


@pytest.mark.skipif(AQT_JS is None, reason="Anki desktop (aqt) is not installed")
def test_mathjax_is_the_one_anki_ships_with_ankis_configuration(chromium: Any) -> None:
    from ankigen.preview.pages import MATHJAX, site_asset

    assert AQT_JS is not None
    shipped = AQT_JS / "vendor" / "mathjax"
    ours = sorted(
        p.relative_to(MATHJAX) for p in MATHJAX.rglob("*") if p.suffix in (".js", ".woff")
    )
    assert Path("tex-chtml-full.js") in ours and len(ours) == 24
    for relative in ours:
        assert (MATHJAX / relative).read_bytes() == (shipped / relative).read_bytes()
    assert "Apache License" in (MATHJAX / "LICENSE").read_text(encoding="utf-8")
    context = chromium.new_context()
    page = context.new_page()
    try:
        configs = []
        for script in (
            (AQT_JS / "mathjax.js").read_text(encoding="utf-8"),
            site_asset("mathjax-config.js"),
        ):
            page.set_content("<!doctype html><title>x</title>")
            page.add_script_tag(content=script)
            configs.append(page.evaluate("() => JSON.parse(JSON.stringify(window.MathJax))"))
    finally:
        context.close()
    anki, preview = configs
    assert anki["loader"]["paths"] == {"mathjax": "/_anki/js/vendor/mathjax"}
    assert preview["loader"]["paths"] == {"mathjax": "_mathjax"}
    del anki["loader"]["paths"], preview["loader"]["paths"]
    assert preview == anki


def test_the_preview_typesets_formulas_offline_and_fits_a_thumb(
    project: Path, chromium: Any
) -> None:
    """Written to disk and opened from there with every network request refused: the
    formulas are typeset by the MathJax beside the page; the cards far down are shown
    when they come near; on a phone the preview's buttons are at least 44 px tall."""
    from ankigen.preview.pages import make_preview

    items = [item("math", question=r"What is \(\frac{n-1}{n}S\)?")]
    items += [item(f"plain-{n}") for n in range(40)]
    write_bank(project / "banks", items=items)
    make_preview(project / "banks", project / "out")
    errors: list[Any] = []
    context = chromium.new_context(
        viewport={"width": 360, "height": 740}, is_mobile=True, has_touch=True
    )
    page = context.new_page()
    try:
        page.route("http*://**", lambda route: route.abort())
        page.on("pageerror", lambda error: errors.append(error))
        page.goto((project / "out" / "demo.en.html").as_uri())
        page.wait_for_selector('.pv-card[data-item="math"] .ag-question mjx-container')
        glyphs = page.eval_on_selector_all(
            '.pv-card[data-item="math"] .ag-question mjx-c', "els => els.length"
        )
        assert glyphs >= 5  # n, -, 1, n, S at least
        assert "\\(" not in page.inner_text('.pv-card[data-item="math"] .ag-question')
        last = '.pv-card[data-item="plain-39"]'
        assert page.eval_on_selector(f"{last} .pv-qa", "e => e.children.length") == 0
        for selector in (".pv-night", '.pv-card[data-item="math"] .pv-flip'):
            box = page.locator(selector).bounding_box()
            assert box is not None and box["height"] >= 44 and box["width"] >= 44, selector
        page.locator(last).scroll_into_view_if_needed()
        page.wait_for_selector(f"{last} .ag-front[data-ag-ready]")
    finally:
        context.close()
    assert errors == []
