"""What a learner does in the real Anki desktop's reviewer, and what it shows: for the
tests of tests/card/ that drive the desktop (tests/desktop/harness.py starts it)."""

from __future__ import annotations

import json
from typing import Any

from tests.desktop.harness import AnkiDesktop

# the window's size, the page's height and scroll, where the card's last element is
SETTLED = """[innerWidth, innerHeight, scrollY, document.documentElement.scrollHeight,
    document.fonts ? document.fonts.status : '',
    [].map.call(document.querySelectorAll('.ag-card .ag-choice'), function (e) {
        return Math.round(e.getBoundingClientRect().bottom); })]"""


def show_answer(anki: AnkiDesktop, key: str) -> None:
    anki.key(key)
    anki.wait_for(
        "!!document.querySelector('.ag-card.ag-back[data-ag-ready]')", what=f"the back after {key}"
    )
    # Anki scrolls #answer into view once images have loaded
    anki.settle(SETTLED, what="the back's layout and scroll")


def pick(anki: AnkiDesktop, choice: int) -> None:
    """Click a choice and wait until the card has taken the pick, before any key."""
    button = f'.ag-front button.ag-choice[data-choice="{choice}"]'
    anki.click(button)
    anki.wait_for(
        f"document.querySelector({json.dumps(button)}).getAttribute('aria-checked') === 'true'",
        timeout=10,
        what=f"choice {choice} picked",
    )


def back(anki: AnkiDesktop) -> dict[str, Any]:
    result: dict[str, Any] = anki.eval(
        """(function () {
            var v = document.querySelector('.ag-verdict');
            return {verdict: v && !v.hidden ? v.dataset.verdict : null,
                    text: v ? v.innerText.trim() : null,
                    choices: [].map.call(document.querySelectorAll('.ag-back .ag-choices .ag-choice'),
                        function (e) { return [+e.dataset.choice, e.dataset.correct, e.dataset.picked,
                                               e.querySelector('.ag-mark').textContent]; })};
        })()"""
    )
    return result


def assert_no_console_errors(anki: AnkiDesktop) -> None:
    errors = [m for m in anki.console() if m["level"] == "error"]
    assert errors == []


def open_front(anki: AnkiDesktop, topic: str, language: str) -> list[int]:
    """Open the deck `TOPIC quiz (LANGUAGE)`'s only card in the reviewer, settled; the
    order its front shows the choices in."""
    order: list[int] = anki.review_until(
        f"{topic} quiz ({language})",
        f"""(function () {{ var r = document.querySelector('.ag-card.ag-front[data-item="{topic}"]');
            return r && [].map.call(r.querySelectorAll('button.ag-choice'),
                function (b) {{ return +b.dataset.choice; }}); }})()""",
        what=f"the front of {topic!r} in the reviewer",
    )
    anki.settle(SETTLED, what="the front's layout")
    return order
