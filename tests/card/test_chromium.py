"""The card in a real browser: Anki renders it, headless Chromium runs it.

Two client flows are driven: Anki desktop's (one page, #qa swapped, scripts run
again) and AnkiDroid's (a fresh page load for the back).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.support.browser import ARTIFACTS, MIXED_QUESTION, Client

pytest.importorskip("playwright.sync_api")


def test_desktop_single_answer_right_pick(client: Client) -> None:
    client.desktop()
    client.show_question("single")
    order = client.front_order()
    assert sorted(order) == [1, 2, 3, 4]
    assert client.page.get_attribute(".ag-front .ag-choices", "role") == "radiogroup"
    client.pick(1, 2)  # radio: the second pick replaces the first
    checked = client.page.eval_on_selector_all(
        '.ag-front [aria-checked="true"]', "els => els.map(e => e.dataset.choice)"
    )
    assert checked == ["2"]
    client.show_answer("single")
    back = client.back_choices()
    assert [int(c["choice"]) for c in back] == order
    assert {c["choice"]: (c["correct"], c["picked"]) for c in back} == {
        "1": ("false", "false"),
        "2": ("true", "true"),
        "3": ("false", "false"),
        "4": ("false", "false"),
    }
    assert client.verdict() == "correct:✓ Correct"
    picked = next(c for c in back if c["choice"] == "2")
    assert (picked["mark"], picked["status"]) == ("✓", "Correct answer · Your answer")


def test_desktop_single_answer_wrong_pick_marks_both(client: Client) -> None:
    client.desktop()
    client.show_question("single")
    client.pick(3)
    client.show_answer("single")
    back = {c["choice"]: c for c in client.back_choices()}
    assert (back["3"]["mark"], back["3"]["status"], back["3"]["picked"]) == (
        "✗",
        "Your answer",
        "true",
    )
    assert (back["2"]["mark"], back["2"]["status"], back["2"]["picked"]) == (
        "!",  # the correct answer, missed: its own mark, not a success's
        "Correct answer",
        "false",
    )
    assert back["1"]["mark"] == "" and back["1"]["status"] == ""
    assert client.verdict() == "incorrect:✗ Incorrect"


def test_multi_answer_uses_checkboxes_and_marks_missed_choices(client: Client) -> None:
    client.desktop()
    client.show_question("multi")
    assert client.page.get_attribute(".ag-front .ag-choices", "role") == "group"
    assert client.page.is_visible(".ag-front .ag-hint")
    assert client.page.inner_text(".ag-front .ag-hint") == "Select all that apply"
    client.pick(1, 2, 4, 4)  # 4 toggled on and off again
    client.show_answer("multi")
    back = {c["choice"]: c for c in client.back_choices()}
    assert (back["1"]["picked"], back["1"]["status"]) == ("true", "Correct answer · Your answer")
    assert (back["2"]["mark"], back["2"]["status"]) == ("✗", "Your answer")
    assert (back["3"]["mark"], back["3"]["status"]) == ("!", "Correct answer · Missed")
    assert back["4"]["picked"] == "false"
    assert client.verdict() == "partial:◑ Partly correct"
    # missed is not success: no fill, a dashed edge, apart in greyscale too
    looks = client.page.evaluate(
        """() => ['1', '3'].map(n => {
            const s = getComputedStyle(document.querySelector(`.ag-back .ag-choices li[data-choice="${n}"]`));
            const [r, g, b] = s.backgroundColor.match(/[0-9.]+/g).map(Number);
            const alpha = (s.backgroundColor.match(/[0-9.]+/g)[3] ?? 1) * 1;
            return [s.borderTopStyle, Math.round((0.299 * r + 0.587 * g + 0.114 * b) * alpha)]; })"""
    )
    assert looks[0][0] == "solid" and looks[1][0] == "dashed"
    assert looks[0][1] != looks[1][1]


def test_android_fresh_page_load_carries_order_and_picks(client: Client) -> None:
    client.load_front("multi")
    order = client.front_order()
    client.pick(1, 3)
    client.load_back("multi")
    back = client.back_choices()
    assert [int(c["choice"]) for c in back] == order
    assert [c["choice"] for c in back if c["picked"] == "true"] == sorted(
        ["1", "3"], key=lambda n: order.index(int(n))
    )
    assert client.verdict() == "correct:✓ Correct"


def test_shuffle_differs_between_reviews_and_holds_front_to_back(client: Client) -> None:
    client.desktop()
    orders = set()
    for _ in range(12):
        client.show_question("multi")
        order = client.front_order()
        orders.add(tuple(order))
        client.show_answer("multi")
        assert [int(c["choice"]) for c in client.back_choices()] == order
    assert len(orders) > 1  # 5! orders: twelve equal draws happen with probability 1e-23


def test_shuffle_false_keeps_the_authors_order(client: Client) -> None:
    client.desktop()
    for _ in range(5):
        client.show_question("fixed")
        assert client.front_order() == [1, 2, 3, 4]


def test_keyboard_arrows_pick_and_x_toggles(client: Client) -> None:
    client.desktop()
    client.show_question("single")
    order = client.front_order()
    client.page.keyboard.press("ArrowDown")
    client.page.keyboard.press("ArrowDown")
    client.show_answer("single")
    assert [c["choice"] for c in client.back_choices() if c["picked"] == "true"] == [str(order[1])]

    client.show_question("multi")
    order = client.front_order()
    client.page.keyboard.press("ArrowDown")
    client.page.keyboard.press("x")  # the first one: already focused, toggles it on
    client.page.keyboard.press("ArrowDown")
    client.page.keyboard.press("x")
    client.show_answer("multi")
    assert sorted(c["choice"] for c in client.back_choices() if c["picked"] == "true") == sorted(
        str(n) for n in order[:2]
    )


def test_urdu_card_is_right_to_left_marker_included(client: Client) -> None:
    client.load_front("rtl")
    assert client.page.get_attribute(".ag-card", "lang") == "ur"
    direction = client.page.eval_on_selector(
        ".ag-front button.ag-choice", "e => getComputedStyle(e).direction"
    )
    assert direction == "rtl"
    marker_x, text_x = client.page.eval_on_selector(
        ".ag-front button.ag-choice",
        "e => [e.querySelector('.ag-marker').getBoundingClientRect().x, e.querySelector('.ag-text').getBoundingClientRect().x]",
    )
    assert marker_x > text_x  # the marker sits at the right, where the line starts
    client.pick(1)
    client.load_back("rtl")
    assert client.page.inner_text(".ag-verdict").strip() == "✓ درست"


MIXED_LAYOUT = """sel => {
    const e = document.querySelector(sel);
    const style = getComputedStyle(e);
    const range = document.createRange();
    const text = e.firstChild;
    // the last character (a question mark, a full stop) against the one before it: right of
    // it when the text runs left to right, at the far end of the line when it does not
    range.setStart(text, text.length - 2); range.setEnd(text, text.length - 1);
    const before = range.getBoundingClientRect().x;
    range.setStart(text, text.length - 1); range.setEnd(text, text.length);
    const last = range.getBoundingClientRect().x;
    return {direction: style.direction, align: style.textAlign, endsAfter: before < last,
            right: Math.round(e.getBoundingClientRect().right)};
}"""


def test_english_text_in_an_urdu_card_keeps_its_own_direction(client: Client) -> None:
    client.load_front("mixed")
    question = client.page.evaluate(MIXED_LAYOUT, ".ag-question")
    # left to right, so the question mark ends the sentence; aligned as the deck reads
    assert question["direction"] == "ltr" and question["endsAfter"]
    assert question["align"] == "right"
    choice = client.page.evaluate(MIXED_LAYOUT, ".ag-front .ag-text")
    assert choice["direction"] == "ltr" and choice["endsAfter"]
    marker_x, text_x = client.page.eval_on_selector(
        ".ag-front button.ag-choice",
        "e => [e.querySelector('.ag-marker').getBoundingClientRect().x, e.querySelector('.ag-text').getBoundingClientRect().x]",
    )
    assert marker_x > text_x  # the layout stays the deck's: marker on the right
    client.pick(1)
    client.load_back("mixed")
    for selector in (".ag-back .ag-question", ".ag-back .ag-text", ".ag-explanation-text"):
        block = client.page.evaluate(MIXED_LAYOUT, selector)
        assert block["direction"] == "ltr" and block["endsAfter"], selector
        assert block["align"] == "right", selector
    assert (
        client.page.eval_on_selector(".ag-back .ag-status", "e => getComputedStyle(e).direction")
        == "rtl"
    )


def test_a_retired_notice_does_not_set_its_questions_direction(client: Client) -> None:
    client.load_front("retired-mixed")
    layout = client.page.evaluate(
        """() => { const q = document.querySelector('.ag-question');
            const text = q.lastChild, range = document.createRange();
            range.setStart(text, text.length - 2); range.setEnd(text, text.length - 1);
            const before = range.getBoundingClientRect().x;
            range.setStart(text, text.length - 1); range.setEnd(text, text.length);
            return [!!q.querySelector('.ag-retired'), text.textContent,
                    before < range.getBoundingClientRect().x]; }"""
    )
    assert layout == [True, MIXED_QUESTION, True]


def test_urdu_text_in_an_english_card_keeps_its_own_direction(client: Client) -> None:
    client.load_front("rtl")  # the Urdu deck's card, its text put in an English card
    client.page.evaluate(
        """() => { const card = document.querySelector('.ag-card');
            card.setAttribute('lang', 'en'); card.setAttribute('dir', 'ltr'); }"""
    )
    question = client.page.evaluate(MIXED_LAYOUT, ".ag-question")
    assert question["direction"] == "rtl" and not question["endsAfter"]
    assert question["align"] == "left"


def test_without_javascript_each_choice_takes_its_own_direction(
    chromium: Any, site: tuple[str, dict[str, tuple[str, str]]]
) -> None:
    base, _ = site
    context = chromium.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(f"{base}/back-mixed.html")
    li = page.eval_on_selector(
        ".ag-static li",
        "e => [getComputedStyle(e).unicodeBidi, getComputedStyle(e).textAlign, getComputedStyle(e).direction]",
    )
    context.close()
    assert li == ["plaintext", "right", "rtl"]


def test_back_status_lines_stay_inside_their_choice(client: Client) -> None:
    client.desktop()
    client.show_question("multi")
    client.pick(1, 2)
    client.show_answer("multi")
    overflow = client.page.eval_on_selector_all(
        ".ag-back .ag-choice",
        "els => els.map(e => e.scrollWidth - e.clientWidth)",
    )
    assert overflow and all(extra <= 0 for extra in overflow)
    assert client.page.evaluate("document.documentElement.scrollWidth <= innerWidth")


def test_anki_scrolls_to_the_top_of_the_back_not_past_the_question(client: Client) -> None:
    """Anki desktop and AnkiDroid scroll #answer into view when the answer is shown."""
    client.load_back("single")
    first = client.page.evaluate(
        "() => document.getElementById('answer') === document.querySelector('.ag-card.ag-back')"
    )
    assert first
    assert client.page.locator("#answer").count() == 1


def test_back_without_the_fronts_state_shows_no_verdict(client: Client) -> None:
    client.load_back("single")  # e.g. the card browser's preview
    back = client.back_choices()
    assert [c["choice"] for c in back] == ["1", "2", "3", "4"]
    assert [c["choice"] for c in back if c["correct"] == "true"] == ["2"]
    assert all(c["picked"] == "false" for c in back)
    assert client.verdict() is None
    assert "Explanation: single." in client.page.inner_text(".ag-explanation")


def test_back_shows_the_cards_version_in_small_print(client: Client) -> None:
    client.load_front("single")
    assert not client.page.is_visible(".ag-version")
    client.load_back("single")
    line = client.page.inner_text(".ag-back .ag-version")
    assert re.fullmatch(r"Version \d{4}\.\d\d\.\d\d\+[0-9a-f]{8}", line.strip())
    size = client.page.eval_on_selector(".ag-version", "e => getComputedStyle(e).fontSize")
    body = client.page.eval_on_selector(".ag-explanation", "e => getComputedStyle(e).fontSize")
    assert float(size.rstrip("px")) < float(body.rstrip("px"))
    client.load_back("rtl")
    assert client.page.inner_text(".ag-version").startswith("ورژن")


def test_state_of_an_earlier_review_is_never_reused(client: Client) -> None:
    client.load_front("single")
    client.pick(2)
    client.load_back("single")
    assert client.verdict() == "correct:✓ Correct"
    # an hour later the back is shown again without a new front: that state is stale
    client.page.evaluate(
        """() => { for (const k of Object.keys(sessionStorage)) {
             const s = JSON.parse(sessionStorage.getItem(k)); s.back -= 3600 * 1000;
             sessionStorage.setItem(k, JSON.stringify(s)); } }"""
    )
    client.load_back("single")
    assert client.verdict() is None


def test_another_cards_state_is_not_used(client: Client) -> None:
    client.desktop()
    client.show_question("single")
    client.pick(2)
    client.show_answer("tricky")
    assert client.verdict() is None


def test_field_text_with_quotes_and_tags_stays_text(client: Client) -> None:
    client.desktop()
    client.show_question("tricky")
    assert client.page.inner_text(".ag-question") == "Quotes \" and ' and </script> & bold: which?"
    assert client.page.inner_html(".ag-question b") == "bold"
    client.pick(1)
    client.show_answer("tricky")
    assert client.verdict() == "correct:✓ Correct"


def test_night_mode_restyles_the_card(client: Client) -> None:
    client.load_front("single")
    day = client.page.eval_on_selector(".ag-choice", "e => getComputedStyle(e).backgroundColor")
    client.page.evaluate("document.body.classList.add('nightMode')")
    night = client.page.eval_on_selector(".ag-choice", "e => getComputedStyle(e).backgroundColor")
    client.page.evaluate("document.body.classList.replace('nightMode', 'night_mode')")
    night_android = client.page.eval_on_selector(
        ".ag-choice", "e => getComputedStyle(e).backgroundColor"
    )
    assert day != night == night_android


def test_choices_are_large_tappable_buttons(client: Client) -> None:
    client.load_front("single")
    boxes = client.page.eval_on_selector_all(
        ".ag-front button.ag-choice",
        "els => els.map(e => [e.className, e.getBoundingClientRect().height, e.getBoundingClientRect().width])",
    )
    assert all("tappable" in cls and height >= 44 and width > 300 for cls, height, width in boxes)


def test_without_javascript_the_back_still_answers(
    chromium: Any, site: tuple[str, dict[str, tuple[str, str]]]
) -> None:
    base, sides = site
    tab = Client(chromium, base, sides, java_script_enabled=False)
    try:
        tab.load_front("single")
        assert tab.page.is_visible(".ag-front .ag-static ol")
        tab.load_back("single")
        items = tab.page.eval_on_selector_all(
            ".ag-back .ag-static li",
            "els => els.map(e => [e.dataset.choice, getComputedStyle(e, '::before').content])",
        )
        assert [n for n, _ in items] == ["1", "2", "3", "4"]
        assert [n for n, before in items if "✓" in before] == ["2"]
        assert tab.page.is_visible(".ag-answer") and "single choice 2" in tab.page.inner_text(
            ".ag-answer"
        )
        assert "Explanation: single." in tab.page.inner_text(".ag-explanation")
        assert not tab.page.is_visible(".ag-verdict")
        version = tab.page.eval_on_selector(
            ".ag-back .ag-static ol", "e => getComputedStyle(e, '::after').content"
        )
        assert re.fullmatch(r'"\d{4}\.\d\d\.\d\d\+[0-9a-f]{8}"', version)
        ARTIFACTS.mkdir(exist_ok=True)
        tab.page.screenshot(path=str(ARTIFACTS / "back-no-js.png"))
    finally:
        tab.close()


@pytest.mark.parametrize(
    ("item_id", "hint"),
    [("bengali", "প্রযোজ্য সবগুলো বেছে নিন"), ("japanese", "Select all that apply")],
)
def test_ui_words_follow_the_language_with_english_fallback(
    client: Client, item_id: str, hint: str
) -> None:
    client.load_front(item_id)
    assert client.page.inner_text(".ag-front .ag-hint") == hint


def test_scripts_leak_no_globals_and_run_safely_many_times(client: Client) -> None:
    client.desktop()
    before = client.page.evaluate("Object.keys(window)")
    for _ in range(3):
        client.show_question("single")
        client.pick(2)
        client.show_answer("single")
        assert client.verdict() == "correct:✓ Correct"
    assert client.page.evaluate("Object.keys(window)") == before
    assert client.page.evaluate("window.onload") is None


def _luminance(css: str) -> float:
    """WCAG's relative luminance of an `rgb(...)` colour."""
    channels = [int(v) / 255 for v in re.findall(r"[0-9.]+", css)[:3]]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def _contrast(a: str, b: str) -> float:
    light, dark = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


@pytest.mark.parametrize("night", [False, True], ids=["light", "night"])
def test_boundaries_stand_out_three_to_one(client: Client, night: bool) -> None:
    """WCAG 1.4.11: a choice's edge and its radio or checkbox, against the choice's
    surface and the page, measured from the computed colours."""
    client.load_front("multi")
    if night:
        client.page.evaluate("document.body.classList.add('nightMode')")
    seen = client.page.evaluate(
        """() => { const b = document.querySelector('.ag-front button.ag-choice');
            const s = getComputedStyle(b), m = getComputedStyle(b.querySelector('.ag-marker'));
            return [s.borderTopColor, s.backgroundColor, m.borderTopColor,
                    getComputedStyle(document.body).backgroundColor]; }"""
    )
    edge, surface, marker, page = seen
    for boundary in (edge, marker):
        assert _contrast(boundary, surface) >= 3, (boundary, surface)
        assert _contrast(boundary, page) >= 3, (boundary, page)


def test_picking_and_flipping_move_nothing(client: Client) -> None:
    """No jitter: a pick changes no box, the question stays put on the flip, and the
    mark, the text and the note under it start at one edge."""
    client.desktop()
    client.show_question("single")
    boxes = "() => [...document.querySelectorAll('.ag-front button.ag-choice')].map(b => { const r = b.getBoundingClientRect(); return [r.x, r.y, r.width, r.height]; })"
    before = client.page.evaluate(boxes)
    question = "() => document.querySelector('.ag-question').getBoundingClientRect().top"
    top = client.page.evaluate(question)
    client.pick(3)
    assert client.page.evaluate(boxes) == before
    client.show_answer("single")
    assert client.page.evaluate(question) == top
    edges = client.page.evaluate(
        """() => [...document.querySelectorAll('.ag-back .ag-choices li.ag-choice')].map(li => {
            const start = e => { const r = e.getBoundingClientRect(); return r.left; };
            const text = li.querySelector('.ag-text'), note = li.querySelector('.ag-note');
            // a note on a row of its own starts where the text does; a status that
            // fits sits at the end of the text's row
            const own = note && note.getBoundingClientRect().top >= text.getBoundingClientRect().bottom - 1;
            const pad = own ? parseFloat(getComputedStyle(note).paddingLeft) : 0;
            return [start(text), own ? start(note) + pad : null]; })"""
    )
    texts = {round(e[0], 1) for e in edges}
    notes = {round(e[1], 1) for e in edges if e[1] is not None}
    assert len(texts) == 1 and notes <= texts, edges


def test_a_long_press_crosses_a_choice_out_on_a_phone(
    chromium: Any, site: tuple[str, dict[str, tuple[str, str]]]
) -> None:
    """A touch held on a choice (CDP touch events, as a finger) crosses it out without
    picking it; a tap then does nothing; another long press undoes it. The back says
    which choice was ruled out."""
    base, sides = site
    tab = Client(chromium, base, sides, has_touch=True, is_mobile=True, device_scale_factor=3)
    try:
        tab.load_front("single")
        cdp = tab.context.new_cdp_session(tab.page)
        target = '.ag-front button.ag-choice[data-choice="3"]'
        crossed = f"document.querySelector('{target}').getAttribute('data-crossed') === 'true'"

        def long_press() -> None:
            box = tab.page.locator(target).bounding_box()
            point = [{"x": box["x"] + box["width"] / 2, "y": box["y"] + box["height"] / 2}]
            before = tab.page.evaluate(crossed)
            cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": point})
            # held until the card has acted: the press is as long as it needs to be
            tab.page.wait_for_function(f"({crossed}) !== {str(before).lower()}")
            cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})

        long_press()
        assert tab.page.get_attribute(target, "aria-checked") == "false"
        tab.page.tap(target, force=True)  # aria-disabled: Playwright would wait for it
        assert tab.page.get_attribute(target, "aria-checked") == "false"  # not pickable
        long_press()  # undone
        assert tab.page.get_attribute(target, "data-crossed") is None
        long_press()  # out again, for the back
        tab.page.tap('.ag-front button.ag-choice[data-choice="2"]')
        tab.load_back("single")
        li = tab.page.locator('.ag-back .ag-choices li[data-choice="3"]')
        assert li.get_attribute("data-crossed") == "true"
        assert li.locator(".ag-status").inner_text() == "Ruled out"
        assert tab.verdict() == "correct:✓ Correct"
    finally:
        tab.close()
