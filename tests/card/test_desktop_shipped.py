"""Every shipped deck's first back in the real Anki desktop at 800x560: the result first.

The learner picks a wrong choice with a click and shows the answer with Space; the
verdict, the pick, the correct choice and the start of the explanation must be in
the window, and every block that holds right-to-left letters runs right to left.
Screenshots of each back go to tests/artifacts/ for a person to look at.
"""

from __future__ import annotations

import shutil
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


def test_every_shipped_decks_first_back_leads_with_the_result(anki: Any) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    late: dict[str, list[str]] = {}
    decks = anki.call("decks")
    assert len(decks) == 10
    for deck in decks:
        anki.theme(dark=deck.endswith("(ur)"))  # night mode on the right-to-left decks
        anki.review_until(
            deck, "!!document.querySelector('.ag-card.ag-front[data-ag-ready]')", what=deck
        )
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
        anki.screenshot(ARTIFACTS / f"desktop-back-{deck.replace('::', '-').replace(' ', '_')}.png")
        off = [p for p in PARTS if seen[p] is None or seen[p] > seen["screen"]]
        off += ["direction"] if anki.eval(WRONG_WAY) else []
        if off:
            late[deck] = off
    anki.theme(dark=False)
    assert late == {}
