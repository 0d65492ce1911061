"""A deck that keeps an adopted note type (`anki_notetype:`) in the real Anki desktop:
ankigen's card, drawn from the old fields, asks and grades with real clicks and keys.

Uses the desktop harness of tests/desktop/ (aqt under Xvfb, a test add-on, real X input
through xdotool); see tests/reviewer.py for how it works.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import item, write_bank
from tests.support.adopt import GENANKI_KEPT

harness = pytest.importorskip("tests.desktop.harness", reason="needs the desktop harness")
reviewer = pytest.importorskip("tests.desktop.reviewer")

KEPT_BITS = {**GENANKI_KEPT, "answer_format": "bits"}


@pytest.fixture(scope="module")
def anki(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    root = tmp_path_factory.mktemp("desktop-kept")
    project = root / "project"
    items = [
        item("one", answer=2, choices=3, shuffle=False),
        item("two", answer=[1, 3], choices=3, shuffle=False),
    ]
    write_bank(project / "banks", "kept", "ur", items=items, anki_notetype=KEPT_BITS)
    yield from harness.with_project(root, project, 800, 700)


def front(anki: Any, text: str) -> None:
    anki.review_until(
        "kept quiz (ur)",
        "!!document.querySelector('.ag-card.ag-front[data-ag-ready]')",
        what="the kept card's front in the reviewer",
    )
    question = anki.eval("document.querySelector('.ag-question').textContent")
    assert question == text


def test_the_kept_card_grades_a_real_click_and_key(anki: Any, tmp_path: Path) -> None:
    front(anki, "Question one?")
    assert anki.eval("document.querySelector('.ag-card').getAttribute('dir')") == "ltr"
    reviewer.pick(anki, 2)
    reviewer.show_answer(anki, "space")
    shown = reviewer.back(anki)
    assert shown["verdict"] == "correct"
    assert [c[1] for c in shown["choices"]] == ["false", "true", "false"]
    answer = anki.eval("document.querySelector('.ag-answer-text').textContent")
    assert answer == "one choice 2"
    reviewer.assert_no_console_errors(anki)
