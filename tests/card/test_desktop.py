"""The card in the real Anki desktop: aqt from PyPI under Xvfb, real X input through xdotool.

Anki's reviewer page has its own stylesheet (every button gets margins, a hover
gradient and `outline: none !important`) and scrolls `#answer` into view when
the answer is shown; plain Chromium shows neither. The test add-on in
tests/desktop/ imports the packages, opens the reviewer and reads the DOM back.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.desktop.harness import AnkiDesktop, AnkiDesktopError, require, with_decks
from tests.desktop.reviewer import (
    assert_no_console_errors,
    back,
    open_front,
    pick,
    show_answer,
)
from tests.helpers import item
from tests.support.cardkeys import CHECKED_CHOICES

LONG_EXPLANATION = " ".join(
    f"Sentence {n} of a long explanation, so that the back is taller than the window."
    for n in range(1, 13)
)
DECKS = {
    "single": ("en", item("single", answer=2, explanation=LONG_EXPLANATION)),
    "multi": ("en", item("multi", answer=[1, 3], choices=5)),
    "urdu": ("ur", item("urdu", answer=1, question="کون سا درست ہے؟")),
    "mixed": (
        "ur",
        item("mixed", answer=1, question="What memory limit remains in plain data parallelism?"),
    ),
}
# what the card's own stylesheet gives a choice button, hovered or not
LOOK = ["borderTopWidth", "borderTopStyle", "borderLeftWidth", "borderRadius", "backgroundImage",
        "backgroundColor", "borderTopColor", "boxShadow", "marginTop", "marginLeft",
        "paddingTop", "color", "fontWeight"]  # fmt: skip


@pytest.fixture(scope="module")
def anki(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AnkiDesktop]:
    yield from with_decks(tmp_path_factory.mktemp("desktop"), DECKS, 800, 560)


def review(anki: AnkiDesktop, topic: str) -> list[int]:
    """Open a deck's only card in the reviewer; the order of its choices."""
    order = open_front(anki, topic, DECKS[topic][0])
    return order


def in_view(anki: AnkiDesktop, selector: str) -> dict[str, Any]:
    result: dict[str, Any] = anki.eval(
        f"""(function () {{ var r = document.querySelector({json.dumps(selector)}).getBoundingClientRect();
            return {{top: r.top, bottom: r.bottom, height: innerHeight, scrolled: scrollY,
                    visible: r.top >= 0 && r.bottom <= innerHeight}}; }})()"""
    )
    return result


def looks(anki: AnkiDesktop, selector: str) -> dict[str, Any]:
    """The computed look of an element, and what the card's own variables say it should be."""
    result: dict[str, Any] = anki.eval(
        f"""(function () {{
            var e = document.querySelector({json.dumps(selector)});
            var card = e.closest('.ag-card');
            function resolve(name) {{
                var probe = document.createElement('span');
                probe.style.color = 'var(' + name + ')';
                card.appendChild(probe);
                var value = getComputedStyle(probe).color;
                probe.remove();
                return value;
            }}
            var s = getComputedStyle(e);
            var look = {{}};
            {json.dumps(LOOK)}.forEach(function (k) {{ look[k] = s[k]; }});
            var marker = e.querySelector('.ag-marker');
            return {{look: look, hovered: e.matches(':hover'), focus: e.matches(':focus-visible'),
                    outline: [s.outlineStyle, s.outlineWidth, s.outlineColor],
                    marker: marker && getComputedStyle(marker).borderTopColor,
                    surface: resolve('--ag-surface'), border: resolve('--ag-border'),
                    picked: resolve('--ag-picked'), hover: resolve('--ag-hover'),
                    box: (function () {{ var r = e.getBoundingClientRect();
                        return [r.x, r.y, r.width, r.height]; }})(),
                    text: getComputedStyle(card).color,
                    night: document.body.classList.contains('nightMode')}};
        }})()"""
    )
    return result


def assert_own_look(
    seen: dict[str, Any], reference: dict[str, Any], border: str, picked: bool = False
) -> None:
    """The card's own look: a hovered choice takes the hover surface, a picked one a
    border in the picked colour drawn twice as thick inside (a shadow), so picking and
    hovering change no box."""
    look = seen["look"]
    shadow = f"{seen['picked']} 0px 0px 0px 2px inset" if picked else "none"
    assert look == reference["look"] | {
        "borderTopColor": border,
        "boxShadow": shadow,
        "backgroundColor": seen["hover"] if seen["hovered"] else seen["surface"],
    }
    assert (look["borderTopWidth"], look["borderTopStyle"]) == ("2px", "solid")
    assert (look["marginTop"], look["marginLeft"]) == ("0px", "0px")
    assert look["backgroundImage"] == "none"
    assert look["color"] == seen["text"]
    assert seen["box"][2:] == reference["box"][2:]  # its size (the page may scroll to it)


def test_single_answer_wrong_pick_with_space_keeps_the_question_in_view(anki: AnkiDesktop) -> None:
    anki.theme(dark=False)
    order = review(anki, "single")
    assert sorted(order) == [1, 2, 3, 4]
    # Anki's `button { margin: 1em .5em }` would push the fourth choice below the fold
    last = in_view(anki, f'.ag-front button.ag-choice[data-choice="{order[-1]}"]')
    assert last["visible"], last
    pick(anki, 1)
    pick(anki, 3)  # a radio group: the second pick replaces the first
    show_answer(anki, "space")
    shown = back(anki)
    assert shown["verdict"] == "incorrect"
    assert [c[0] for c in shown["choices"]] == order
    marks = {c[0]: c[1:] for c in shown["choices"]}
    assert marks[3] == ["false", "true", "✗"] and marks[2] == ["true", "false", "!"]
    assert marks[1] == ["false", "false", ""]
    question = in_view(anki, ".ag-back .ag-question")
    assert question["visible"], question
    assert in_view(anki, ".ag-back .ag-choice[data-picked='true']")["visible"]
    page = anki.eval("[document.documentElement.scrollHeight, innerHeight]")
    assert page[0] > page[1], "the back should be taller than the window for this test to count"
    assert_no_console_errors(anki)


def test_single_answer_right_pick_with_enter(anki: AnkiDesktop) -> None:
    review(anki, "single")
    pick(anki, 2)
    where = "(function () { var q = document.querySelector('.ag-question').getBoundingClientRect(); return [q.left, q.top + scrollY, q.width]; })()"
    before = anki.eval(where)
    show_answer(anki, "Return")
    assert anki.eval(where) == before  # the flip moves nothing
    shown = back(anki)
    assert shown["verdict"] == "correct"
    assert {c[0]: c[2] for c in shown["choices"]} == {1: "false", 2: "true", 3: "false", 4: "false"}
    assert in_view(anki, ".ag-back .ag-question")["visible"]
    assert_no_console_errors(anki)


@pytest.mark.parametrize("dark", [False, True], ids=["light", "night"])
def test_hovered_choices_keep_the_cards_look(anki: AnkiDesktop, dark: bool) -> None:
    anki.theme(dark=dark)
    try:
        order = review(anki, "single")
        first, second = (f'.ag-front button.ag-choice[data-choice="{n}"]' for n in order[:2])
        anki.move_to(".ag-front .ag-question")
        reference = looks(anki, first)
        assert reference["night"] is dark and not reference["hovered"]
        anki.move_to(first)
        hovered = looks(anki, first)
        assert hovered["hovered"] and hovered["hover"] != hovered["surface"]
        assert_own_look(hovered, reference, hovered["border"])
        assert hovered["marker"] == hovered["border"] != hovered["surface"]
        anki.xdotool("click", "1")
        anki.wait_for(
            f"document.querySelector({json.dumps(first)}).getAttribute('aria-checked') === 'true'",
            what="the click's pick",
        )
        anki.move_to(second)  # the picked choice, no longer hovered, and a hovered one
        picked = looks(anki, first)
        assert_own_look(picked, reference, picked["picked"], picked=True)
        assert_own_look(looks(anki, second), reference, reference["border"])
        anki.move_to(first)  # picked and hovered
        assert_own_look(looks(anki, first), reference, picked["picked"], picked=True)
    finally:
        anki.theme(dark=False)
    assert_no_console_errors(anki)


def test_keyboard_focus_shows_on_a_multi_answer_item(anki: AnkiDesktop) -> None:
    order = review(anki, "multi")
    anki.move_to(".ag-front .ag-question")
    hint = anki.eval("!document.querySelector('.ag-front .ag-hint').hidden")
    assert hint
    anki.key("Down")  # focus moves, nothing is picked on a multi-answer item
    focused = anki.eval("+document.activeElement.dataset.choice")
    assert focused == order[0]
    seen = looks(anki, f'.ag-front button.ag-choice[data-choice="{order[0]}"]')
    assert seen["focus"]
    assert seen["outline"] == ["solid", "3px", seen["picked"]]
    assert anki.eval("document.querySelectorAll('[aria-checked=\"true\"]').length") == 0
    # x picks; Space would show the answer (tests/card/test_desktop_keys.py)
    anki.key("x", "Down", "Down", "x")
    picked = anki.eval(CHECKED_CHOICES)
    assert sorted(picked) == sorted([order[0], order[2]])
    assert anki.call("state")["side"] == "question"
    show_answer(anki, "Return")  # after the card's own keys, Enter is Anki's: the answer
    shown = back(anki)
    right = {1, 3}
    chosen = {order[0], order[2]}
    expected = "correct" if chosen == right else "partial" if chosen & right else "incorrect"
    assert shown["verdict"] == expected
    assert {c[0] for c in shown["choices"] if c[2] == "true"} == chosen
    assert_no_console_errors(anki)


def test_urdu_is_right_to_left_with_clicks(anki: AnkiDesktop) -> None:
    review(anki, "urdu")
    layout = anki.eval(
        """(function () { var b = document.querySelector('.ag-front button.ag-choice');
            return [getComputedStyle(b).direction,
                    b.querySelector('.ag-marker').getBoundingClientRect().x >
                    b.querySelector('.ag-text').getBoundingClientRect().x]; })()"""
    )
    assert layout == ["rtl", True]
    pick(anki, 1)
    show_answer(anki, "space")
    shown = back(anki)
    assert shown["verdict"] == "correct" and shown["text"] == "✓ درست"
    assert_no_console_errors(anki)


def test_english_question_in_an_urdu_deck_reads_left_to_right(anki: AnkiDesktop) -> None:
    review(anki, "mixed")
    question = anki.eval(
        """(function () { var q = document.querySelector('.ag-front .ag-question');
            var s = getComputedStyle(q), t = q.firstChild, r = document.createRange();
            r.setStart(t, t.length - 2); r.setEnd(t, t.length - 1); var before = r.getBoundingClientRect().x;
            r.setStart(t, t.length - 1); r.setEnd(t, t.length);
            var mark = r.getBoundingClientRect();
            return [s.direction, s.textAlign, mark.x > before]; })()"""
    )
    # the question mark follows the last word, the block aligned as Urdu reads
    assert question == ["ltr", "right", True]
    pick(anki, 1)
    show_answer(anki, "space")
    assert back(anki)["verdict"] == "correct"
    assert_no_console_errors(anki)


def test_an_anki_that_does_not_start_fails_in_time_with_its_log(tmp_path: Path) -> None:
    require()
    hangs = tmp_path / "hangs"
    hangs.write_text("#!/bin/sh\necho stuck before the profile opened\nexec sleep 600\n")
    hangs.chmod(0o755)
    started = time.monotonic()
    desktop = AnkiDesktop(tmp_path / "base", start_timeout=3, program=hangs)
    with pytest.raises(AnkiDesktopError, match="did not open its profile within 3 s") as error:
        desktop.start()
    assert "stuck before the profile opened" in str(error.value)
    assert time.monotonic() - started < 60
    assert (
        desktop.process is not None and desktop.process.poll() is not None
    )  # nothing left running

    crashes = tmp_path / "crashes"
    crashes.write_text("#!/bin/sh\necho no display for Qt >&2\nexit 3\n")
    crashes.chmod(0o755)
    with pytest.raises(AnkiDesktopError, match="exited with status 3") as error:
        AnkiDesktop(tmp_path / "base2", program=crashes).start()
    assert "no display for Qt" in str(error.value)


def test_a_right_click_or_delete_crosses_a_choice_out(anki: AnkiDesktop) -> None:
    order = review(anki, "single")
    first, second = (f'.ag-front button.ag-choice[data-choice="{n}"]' for n in order[:2])
    crossed = "document.querySelector({}).getAttribute('data-crossed') === 'true'"
    anki.move_to(first)
    anki.xdotool("click", "3")
    anki.wait_for(crossed.format(json.dumps(first)), what="the right-clicked choice crossed out")
    assert anki.call("popup") is None  # the card's gesture, not Anki's context menu
    struck = anki.eval(
        f"getComputedStyle(document.querySelector({json.dumps(first)} + ' .ag-text')).textDecorationLine"
    )
    assert struck == "line-through"
    anki.xdotool("click", "1")  # a crossed-out choice is not pickable
    anki.move_to(second)
    anki.xdotool("click", "1")
    anki.wait_for(
        f"document.querySelector({json.dumps(second)}).getAttribute('aria-checked') === 'true'",
        what="the second choice picked",
    )
    assert (
        anki.eval(f"document.querySelector({json.dumps(first)}).getAttribute('aria-checked')")
        == "false"
    )
    anki.move_to(first)
    anki.xdotool("click", "3")  # again: undone
    anki.wait_for(f"!({crossed.format(json.dumps(first))})", what="the cross-out undone")
    anki.key("Down")  # keyboard focus, then Delete crosses the focused choice out
    focused = anki.eval("+document.activeElement.dataset.choice")
    anki.key("Delete")
    target = f'.ag-front button.ag-choice[data-choice="{focused}"]'
    anki.wait_for(
        crossed.format(json.dumps(target)), what="the focused choice crossed out by Delete"
    )
    picked = anki.eval(CHECKED_CHOICES)
    anki.key("Escape")  # the keyboard back to Anki: Space shows the answer again
    anki.wait_for("document.activeElement === document.body", what="the focus given back")
    anki.key("space")
    anki.wait_for(
        "!!document.querySelector('.ag-card.ag-back[data-ag-ready]')", what="the back after Space"
    )
    back = anki.eval(
        f"""(function () {{ var li = document.querySelector('.ag-back .ag-choices li[data-choice="{focused}"]');
            return [li.dataset.crossed, li.querySelector('.ag-status').innerText]; }})()"""
    )
    assert back[0] == "true" and back[1].endswith("Ruled out")
    assert focused not in picked
    assert_no_console_errors(anki)
