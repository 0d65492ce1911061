"""Richer items in the real Anki desktop, which ships MathJax 3: formulas typeset on both sides.

Uses the desktop harness of tests/desktop/ (aqt under Xvfb, a test add-on, real
X input through xdotool); see tests/test_desktop.py for how it works.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

harness = pytest.importorskip("tests.desktop.harness", reason="needs the desktop harness")

MATH_CHOICES = [r"\(2\frac{n-1}{n}S\)", r"\(nS\)", r"\(\frac{S}{n}\)"]
DECKS: dict[str, tuple[str, dict[str, Any]]] = {
    "math": (
        "en",
        {
            "id": "math",
            "question": r"What does each of \(n\) ranks send in a ring all-reduce of \(S\) bytes?",
            "choices": [
                {"text": MATH_CHOICES[0], "why": r"Two phases of \(\frac{n-1}{n}S\) each."},
                {"text": MATH_CHOICES[1], "why": "The whole tensor to every rank: not a ring."},
                {"text": MATH_CHOICES[2], "why": "One step of the ring."},
            ],
            "answer": 1,
            "explanation": "Reduce-scatter, then all-gather:\n\\[2\\frac{n-1}{n}S\\]\n"
            "```python\ndist.all_reduce(t)\n```",
        },
    ),
    "recall": (
        "ur",
        {
            "id": "recall",
            "recall": True,
            "question": "آٹھ رینک پر \\(n\\) کیا ہے؟\n```python\nprint(dist.get_world_size())\n```",
            "choices": [
                {"text": r"\(8\)", "why": "ہر GPU ایک رینک ہے۔"},
                {"text": r"\(1\)", "why": "یہ صرف ایک رینک ہے۔"},
                {"text": r"\(0\)", "why": "رینک صفر سے گنے جاتے ہیں۔"},
            ],
            "answer": 1,
            "explanation": "دنیا کا سائز۔",
        },
    ),
}


@pytest.fixture(scope="module")
def anki(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    yield from harness.with_decks(tmp_path_factory.mktemp("desktop-rich"), DECKS, 800, 700)


def review(anki: Any, topic: str) -> None:
    language = DECKS[topic][0]
    anki.review_until(
        f"{topic} quiz ({language})",
        f"!!document.querySelector('.ag-card.ag-front[data-item=\"{topic}\"][data-ag-ready]')",
        what=f"the front of {topic!r} in the reviewer",
    )


def typeset(anki: Any, selector: str) -> list[list[Any]]:
    """Each matching choice: its number, its count of typeset formulas, and its text."""
    js = f"""[].map.call(document.querySelectorAll({selector!r}), function (e) {{
        var t = e.querySelector('.ag-text');
        return [+e.dataset.choice, t.querySelectorAll('mjx-container').length, t.textContent]; }})"""
    anki.wait_for(
        f"(function () {{ var c = {js}; return c.length && c.every(function (x) {{ return x[1]; }}); }})()",
        what=f"formulas typeset in {selector}",
    )
    result: list[list[Any]] = anki.eval(js)
    return result


def show_answer(anki: Any) -> None:
    anki.key("space")
    anki.wait_for(
        "!!document.querySelector('.ag-card.ag-back[data-ag-ready]')", what="the back after space"
    )


def test_formulas_in_choices_are_typeset_on_front_and_back(anki: Any) -> None:
    anki.theme(dark=False)
    review(anki, "math")
    front = typeset(anki, ".ag-front button.ag-choice")
    assert sorted(c[0] for c in front) == [1, 2, 3]
    assert all(c[1] == 1 and "\\(" not in c[2] for c in front)
    order = [c[0] for c in front]
    anki.click('.ag-front button.ag-choice[data-choice="2"]')
    show_answer(anki)
    back = typeset(anki, ".ag-back .ag-choices li.ag-choice")
    assert [c[0] for c in back] == order  # the shuffled order, typeset again
    assert all(c[1] == 1 and "\\(" not in c[2] for c in back)
    shown = anki.eval(
        """(function () { return {
            why: document.querySelectorAll('.ag-choices [data-choice="1"] .ag-why mjx-container').length,
            display: document.querySelectorAll('.ag-explanation mjx-container[display="true"]').length,
            hint: (document.querySelector('.ag-grade-hint') || {}).innerText,
            code: getComputedStyle(document.querySelector('.ag-explanation .ag-code')).direction,
            tokens: document.querySelectorAll('.ag-explanation .ag-code span.n').length}; })()"""
    )
    assert shown == {
        "why": 1,
        "display": 1,
        "hint": "The honest grade for this one is Again.",
        "code": "ltr",
        "tokens": 3,  # dist, all_reduce, t
    }
    errors = [m for m in anki.console() if m["level"] == "error"]
    assert errors == []


def test_recall_first_in_urdu_reveals_typeset_choices(anki: Any) -> None:
    anki.theme(dark=True)
    review(anki, "recall")
    front = anki.eval(
        """(function () { var r = document.querySelector('.ag-card');
            return [r.dataset.recall, document.querySelector('.ag-reveal').innerText,
                    document.querySelector('.ag-choices').hidden,
                    getComputedStyle(document.querySelector('.ag-question .ag-code')).direction]; })()"""
    )
    assert front == ["true", "اختیارات دکھائیں", True, "ltr"]
    anki.move_to(".ag-reveal")
    # the card's own look, not Anki's hovered button gradient and margins
    look = anki.eval(
        """(function () { var s = getComputedStyle(document.querySelector('.ag-reveal'));
            return [s.marginTop, s.backgroundImage, s.borderTopStyle, s.boxShadow]; })()"""
    )
    assert look == ["0px", "none", "dashed", "none"]
    anki.click(".ag-reveal")
    shown = typeset(anki, ".ag-front button.ag-choice")
    assert all(c[1] == 1 for c in shown)
    anki.click('.ag-front button.ag-choice[data-choice="1"]')
    show_answer(anki)
    back = typeset(anki, ".ag-back .ag-choices li.ag-choice")
    assert [c[0] for c in back] == [c[0] for c in shown]
    result = anki.eval(
        """(function () { return [document.querySelector('.ag-verdict').dataset.verdict,
            !!document.querySelector('.ag-grade-hint'),
            document.querySelector('.ag-choices [data-choice="2"] .ag-why').innerText]; })()"""
    )
    assert result == ["correct", False, "یہ صرف ایک رینک ہے۔"]
    errors = [m for m in anki.console() if m["level"] == "error"]
    assert errors == []
