"""Every shipped back in the real Anki desktop at 800x560: the result first.

The learner picks a wrong choice with a click and shows the answer with Space; the
verdict, the pick, the correct choice and the start of the explanation must be in
the window, and every block that holds right-to-left letters runs right to left.
Screenshots of each deck's first back go to tests/artifacts/ for a person to look at.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.helpers import REPO
from tests.support.browser import ARTIFACTS
from tests.support.layout import MEASURE, PARTS

harness = pytest.importorskip("tests.desktop.harness", reason="needs the desktop harness")

# blocks that hold a right-to-left letter but do not run right to left
WRONG_WAY = """[].filter.call(document.querySelectorAll('.ag-back [data-ag-dir]'), function (e) {
    return /[\\u0590-\\u08ff]/.test(e.textContent) && getComputedStyle(e).direction !== 'rtl'; }).length"""


@pytest.fixture(scope="module")
def anki(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    root = tmp_path_factory.mktemp("desktop-shipped")
    shutil.copytree(REPO / "banks", root / "project" / "banks")
    yield from harness.with_project(root, root / "project", 800, 560)


def back_after_a_wrong_pick(anki: Any, deck: str) -> list[str]:
    """On the front shown: pick a wrong choice with a click, show the answer with Space;
    the parts of the back (and "direction") that are not where they must be."""
    if anki.eval("!!document.querySelector('.ag-front .ag-reveal:not([hidden])')"):
        anki.click(".ag-front .ag-reveal")
    wrong = anki.eval(
        """[].filter.call(document.querySelectorAll('.ag-front button.ag-choice'), function (b) {
            return !document.querySelector('.ag-static li[data-choice="' + b.dataset.choice +
                '"][data-correct="true"]'); })[0].dataset.choice"""
    )
    button = f'.ag-front button.ag-choice[data-choice="{wrong}"]'
    anki.click(button)
    anki.wait_for(
        f"document.querySelector('{button}').getAttribute('aria-checked') === 'true'",
        what="the wrong pick",
    )
    anki.key("space")
    anki.wait_for(
        "!!document.querySelector('.ag-card.ag-back[data-ag-ready] .ag-verdict:not([hidden])')",
        what=f"the back of {deck}",
    )
    # typesetting and Anki's scroll to #answer move things: measured once still
    seen = anki.settle("(" + MEASURE + ")()", what=f"the layout of {deck}'s back")
    off = [p for p in PARTS if seen[p] is None or seen[p] > seen["screen"]]
    off += ["direction"] if anki.eval(WRONG_WAY) else []
    where = [f"{p}={seen[p]:.0f}" for p in ("question", *PARTS, "screen") if seen[p] is not None]
    return off + where if off else []


FRONT = "(document.querySelector('.ag-card.ag-front[data-ag-ready]') || {dataset: {}}).dataset.item"


def next_card(anki: Any, deck: str) -> str:
    """Grade the card shown Easy (it leaves today's queue); the next card's item."""
    card = anki.call("state")["card"]
    anki.key("4")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        state = anki.call("state")
        if state["card"] != card and state["side"] == "question":
            item: str = anki.wait_for(FRONT, what=f"the next card of {deck}")
            return item
        time.sleep(0.05)  # polled, with a deadline
    raise AssertionError(f"{deck}: no next card within 30 s")


def test_every_shipped_back_leads_with_the_result(anki: Any) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    late: dict[str, list[str]] = {}
    seen = 0
    decks = anki.call("decks")
    assert len(decks) == 10
    for deck in decks:
        anki.theme(dark=deck.endswith("(ur)"))  # night mode on the right-to-left decks
        item = anki.review_until(deck, FRONT, what=deck)
        done: set[str] = set()
        # every card of the deck, each once; the last one is not graded, so the reviewer
        # goes from card to card (Anki's page after the end of a deck is another page)
        for left in reversed(range(anki.call("card_count", deck=deck))):
            assert item not in done, f"{deck}: {item} came twice"
            done.add(item)
            off = back_after_a_wrong_pick(anki, deck)
            if len(done) == 1:
                name = deck.replace("::", "-").replace(" ", "_")
                anki.screenshot(ARTIFACTS / f"desktop-back-{name}.png")
            if off:
                late[f"{deck}: {item}"] = off
            if left:
                item = next_card(anki, deck)
        seen += len(done)
    anki.theme(dark=False)
    assert late == {}
    assert seen == 80  # every shipped card
