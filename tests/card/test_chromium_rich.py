"""Richer items on the card: whys, code, math, recall first and the grading hint.

As in tests/card/test_chromium.py, Anki renders the cards and headless Chromium runs
them, in Anki desktop's flow (one page, #qa swapped) and AnkiDroid's (a fresh
page per side), in English and in Urdu. Math is typeset by Anki desktop's own
MathJax 3, from the aqt package, where it is installed.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.helpers import invoke
from tests.support.browser import Client, anki_rendered_sides, serve_cards

LONG_LINE = "torch.distributed.all_reduce(gradients, op=dist.ReduceOp.SUM, group=data_parallel_group, async_op=False)"

EN = rf"""topic: rich
language: en
title: Rich
items:
  - id: whys
    question: Which collective leaves the same sum on every rank?
    choices:
      - text: All-reduce
        why: Every rank ends with the sum.
      - text: Broadcast
        why: It copies one rank's tensor.
      - text: Gather
        why: Only one rank receives the pieces.
      - text: Scatter
        why: It splits one rank's tensor.
    answer: 1
    explanation: All-reduce sums and shares.
  - id: whys-multi
    question: Which leave every rank with the same full tensor?
    choices:
      - text: All-gather
        why: Every rank gets every piece.
      - text: Reduce-scatter
        why: Each rank keeps one reduced shard.
      - text: All-reduce
        why: Every rank gets the whole sum.
    answer: [1, 3]
    explanation: All-gather and all-reduce.
  - id: code
    question: |
      What does this print on 8 GPUs?
      ```python
      print(dist.get_world_size())  # {LONG_LINE}
      ```
    choices:
      - "8"
      - text: |
          ```python
          {LONG_LINE}
          ```
        why: |
          Not a number: it is this call
          ```python
          dist.all_reduce(t)
          ```
    answer: 1
    explanation: |
      The world size:
      ```python
      dist.get_world_size()
      ```
  - id: math
    question: 'How many bytes does each of \(n\) ranks send in a ring all-reduce of \(S\) bytes?'
    choices:
      - text: '\(2\frac{{n-1}}{{n}}S\)'
        why: 'Reduce-scatter and all-gather each send \(\frac{{n-1}}{{n}}S\).'
      - '\(nS\)'
      - '\(S/n\)'
    answer: 1
    explanation: |
      \[2\frac{{n-1}}{{n}}S\]
  - id: recall
    recall: true
    question: Which collective copies one rank's tensor to all?
    choices:
      - text: Broadcast
        why: One source, every rank a copy.
      - text: All-reduce
        why: It sums.
      - text: Gather
        why: It collects to one rank.
    answer: 1
    explanation: Broadcast.
  - id: recall-multi
    recall: true
    question: Which two make up a ring all-reduce?
    choices: [Reduce-scatter, All-gather, Broadcast, Gather]
    answer: [1, 2]
    explanation: Reduce-scatter, then all-gather.
"""

UR = r"""topic: rich
language: ur
title: بھرپور
recall: true
items:
  - id: ur-rich
    question: |
      آٹھ GPUs پر یہ کیا چھاپے گا؟
      ```python
      print(dist.get_world_size())  # ایک لمبا تبصرہ a long comment that keeps going and going and going
      ```
    choices:
      - text: '\(8\)'
        why: ہر رینک ایک عمل ہے۔
      - text: '\(1\)'
        why: یہ صرف ایک رینک ہے۔
      - text: '\(0\)'
        why: رینک صفر سے گنے جاتے ہیں، تعداد نہیں۔
    answer: 1
    explanation: دنیا کا سائز۔
"""

AQT = importlib.util.find_spec("_aqt")
AQT_JS = Path(AQT.submodule_search_locations[0]) / "data" / "web" / "js" if AQT else None
WHYS = {
    "1": "Every rank ends with the sum.",
    "2": "It copies one rank's tensor.",
    "3": "Only one rank receives the pieces.",
    "4": "It splits one rank's tensor.",
}


@pytest.fixture(scope="module")
def site(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[str, dict[str, tuple[str, str]]]]:
    root = tmp_path_factory.mktemp("rich")
    project = root / "project"
    for language, text in (("en", EN), ("ur", UR)):
        path = project / "banks" / "rich" / f"{language}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    sides = anki_rendered_sides(project, root / "anki")
    web = root / "web"
    if AQT_JS is not None:
        # Anki desktop's own MathJax, where the reviewer finds it
        (web / "_anki").mkdir(parents=True)
        (web / "_anki" / "js").symlink_to(AQT_JS)
    with serve_cards(web, sides, ["desktop.html", "desktop-mathjax.html"]) as base:
        yield base, sides


def back_whys(client: Client) -> list[tuple[str, str]]:
    result: list[list[str]] = client.page.eval_on_selector_all(
        ".ag-back .ag-choices [data-choice]",
        "els => els.map(e => [e.dataset.choice, (e.querySelector('.ag-why') || {innerText: ''}).innerText])",
    )
    return [(n, why) for n, why in result]


def grade_hint(client: Client) -> str | None:
    return client.page.evaluate(
        "() => { const h = document.querySelector('.ag-grade-hint'); "
        "return h && h.offsetParent ? h.innerText : null; }"
    )


# ---- why each choice is right or wrong


def test_back_shows_each_why_under_its_choice_in_the_fronts_order(client: Client) -> None:
    client.desktop()
    client.show_question("whys")
    order = client.front_order()
    # the front shows no why, in the buttons or anywhere else
    assert (
        client.page.eval_on_selector_all(".ag-front .ag-choices .ag-why", "els => els.length") == 0
    )
    front_text = client.page.inner_text(".ag-card")
    assert not any(why in front_text for why in WHYS.values())
    client.pick(3)
    client.show_answer("whys")
    assert back_whys(client) == [(str(n), WHYS[str(n)]) for n in order]
    back = {c["choice"]: c for c in client.back_choices()}
    assert (back["3"]["mark"], back["3"]["status"]) == ("✗", "Your answer")
    # the why sits under the choice's text, inside the marked choice
    text_box, why_box = client.page.eval_on_selector(
        '.ag-back .ag-choices [data-choice="3"]',
        "e => [e.querySelector('.ag-text').getBoundingClientRect().bottom,"
        " e.querySelector('.ag-why').getBoundingClientRect().top]",
    )
    assert why_box >= text_box
    assert client.page.inner_text(".ag-answer-text") == "All-reduce"


def test_whys_on_a_fresh_page_back_and_in_urdu(client: Client) -> None:
    client.load_front("ur-rich")
    client.page.click(".ag-reveal")
    order = client.front_order()
    client.pick(2)
    client.load_back("ur-rich")
    whys = back_whys(client)
    assert [int(n) for n, _ in whys] == order
    assert dict(whys)["2"] == "یہ صرف ایک رینک ہے۔"
    assert client.verdict() == "incorrect:✗ غلط"
    assert grade_hint(client) == "اس کا دیانت دار درجہ “دوبارہ” (Again) ہے۔"


def test_without_javascript_only_the_back_shows_the_whys(
    chromium: Any, site: tuple[str, dict[str, tuple[str, str]]]
) -> None:
    base, sides = site
    tab = Client(chromium, base, sides, java_script_enabled=False)
    try:
        tab.load_front("whys")
        assert tab.page.is_visible(".ag-front .ag-static ol")
        assert not any(why in tab.page.inner_text(".ag-card") for why in WHYS.values())
        tab.load_back("whys")
        shown = tab.page.eval_on_selector_all(
            ".ag-back .ag-static li[data-choice]",
            "els => els.map(e => [e.dataset.choice, e.querySelector('.ag-why').innerText])",
        )
        assert [tuple(pair) for pair in shown] == sorted(WHYS.items())
        assert all(tab.page.is_visible(f'.ag-static [data-choice="{n}"] .ag-why') for n in WHYS)
        # recall needs the script: without it the choices are simply shown
        tab.load_front("recall")
        assert tab.page.is_visible(".ag-front .ag-static ol")
        assert tab.page.locator(".ag-reveal").count() == 0
    finally:
        tab.close()


# ---- the grading hint


def test_the_grading_hint_follows_wrong_and_partial_answers_only(client: Client) -> None:
    client.desktop()
    client.show_question("whys")
    client.pick(1)
    client.show_answer("whys")
    assert client.verdict() == "correct:✓ Correct" and grade_hint(client) is None
    client.show_question("whys")
    client.pick(2)
    client.show_answer("whys")
    assert grade_hint(client) == "The honest grade for this one is Again."
    client.show_question("whys-multi")
    client.pick(1)
    client.show_answer("whys-multi")
    assert client.verdict() == "partial:◑ Partly correct"
    assert grade_hint(client) == "The honest grade for this one is Again."
    client.show_question("whys-multi")
    client.show_answer("whys-multi")
    assert client.verdict() == "none:No answer selected" and grade_hint(client) is None


def test_the_grading_hint_is_quiet(client: Client) -> None:
    client.load_front("whys")
    client.pick(4)
    client.load_back("whys")
    hint, verdict = client.page.evaluate(
        """() => [...['.ag-grade-hint', '.ag-verdict']].map(s => {
             const e = document.querySelector(s), st = getComputedStyle(e);
             return [parseFloat(st.fontSize), st.fontWeight, e.getBoundingClientRect().top]; })"""
    )
    assert hint[0] < verdict[0] and int(hint[1]) < int(verdict[1]) and hint[2] > verdict[2]


# ---- code


def code_layout(client: Client, selector: str) -> dict[str, Any]:
    result: dict[str, Any] = client.page.eval_on_selector(
        selector,
        """e => { const pre = e.querySelector('pre'); const st = getComputedStyle(e);
            return {direction: st.direction, align: st.textAlign,
                    scrolls: pre.scrollWidth > pre.clientWidth,
                    page: document.documentElement.scrollWidth,
                    tokens: e.querySelectorAll('span[class]').length,
                    background: st.backgroundColor}; }""",
    )
    return result


def test_code_is_highlighted_and_scrolls_sideways_on_a_phone(client: Client) -> None:
    client.load_front("code")
    question = code_layout(client, ".ag-question .ag-code")
    assert question["tokens"] > 3 and question["direction"] == "ltr"
    assert question["scrolls"] and question["page"] <= 390  # the card is not widened
    button = code_layout(client, '.ag-front button.ag-choice[data-choice="2"] .ag-code')
    assert button["scrolls"] and button["page"] <= 390
    assert client.page.locator(".ag-card script, .ag-code [style], .ag-code [onclick]").count() == 0
    client.pick(1)
    client.load_back("code")
    assert code_layout(client, ".ag-explanation .ag-code")["tokens"] > 0
    why = code_layout(client, '.ag-back .ag-choices [data-choice="2"] .ag-why .ag-code')
    assert why["tokens"] > 0 and why["page"] <= 390


def test_code_is_readable_in_night_mode(client: Client) -> None:
    client.load_front("code")
    colors = (
        "e => [getComputedStyle(e).backgroundColor, getComputedStyle(e.querySelector('.nb')).color]"
    )
    day = client.page.eval_on_selector(".ag-question .ag-code", colors)
    for mode in ("nightMode", "night_mode"):
        client.page.evaluate(f"document.body.className = 'card card1 {mode}'")
        night = client.page.eval_on_selector(".ag-question .ag-code", colors)
        assert night != day
        background, token = (rgb(c) for c in night)
        assert contrast(token, background) >= 4.5
    background, token = (rgb(c) for c in day)
    assert contrast(token, background) >= 4.5


def rgb(css: str) -> tuple[float, ...]:
    return tuple(float(v) for v in css[css.index("(") + 1 : -1].split(",")[:3])


def contrast(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    def luminance(c: tuple[float, ...]) -> float:
        def channel(v: float) -> float:
            v /= 255
            return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

        r, g, bl = (channel(v) for v in c)
        return 0.2126 * r + 0.7152 * g + 0.0722 * bl

    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_code_stays_left_to_right_in_an_urdu_card(client: Client) -> None:
    client.load_front("ur-rich")
    assert client.page.get_attribute(".ag-card", "dir") == "rtl"
    layout = code_layout(client, ".ag-question .ag-code")
    assert (layout["direction"], layout["align"]) == ("ltr", "left")
    assert layout["scrolls"] and layout["page"] <= 390


# ---- math


def test_math_stays_as_written_where_there_is_no_mathjax(client: Client) -> None:
    client.desktop()
    client.show_question("math")
    labels = client.page.eval_on_selector_all(
        ".ag-front button.ag-choice .ag-text", "els => els.map(e => e.textContent)"
    )
    assert sorted(labels) == sorted([r"\(2\frac{n-1}{n}S\)", r"\(nS\)", r"\(S/n\)"])
    client.pick(1)
    client.show_answer("math")
    assert client.verdict() == "correct:✓ Correct"
    assert r"\[2\frac{n-1}{n}S\]" in client.page.inner_text(".ag-explanation")


needs_mathjax = pytest.mark.skipif(
    AQT_JS is None, reason="Anki desktop's MathJax (aqt) is not installed"
)


def typeset_choices(client: Client, selector: str) -> list[tuple[int, str]]:
    result: list[tuple[int, str]] = client.page.eval_on_selector_all(
        selector,
        "els => els.map(e => [e.querySelectorAll('.ag-text mjx-container').length,"
        " e.querySelector('.ag-text').textContent])",
    )
    return result


@needs_mathjax
@pytest.mark.parametrize("item_id", ["math", "ur-rich"])
def test_math_is_typeset_on_both_sides_after_the_shuffle(client: Client, item_id: str) -> None:
    client.page.goto(f"{client.base}/desktop-mathjax.html")
    client.page.evaluate("html => _showQuestion(html)", client.sides[item_id][0])
    if item_id == "ur-rich":  # recall first: the formulas are typeset when shown, too
        client.page.click(".ag-reveal")
    client.page.wait_for_function(
        "() => [...document.querySelectorAll('button.ag-choice')].every("
        "b => b.querySelector('mjx-container'))"
    )
    front = typeset_choices(client, ".ag-front button.ag-choice")
    assert all(count == 1 and "\\(" not in text for count, text in front)
    order = client.front_order()
    client.pick(order[0])
    client.page.evaluate("html => _showAnswer(html)", client.sides[item_id][1])
    client.page.wait_for_function(
        "() => [...document.querySelectorAll('.ag-choices li.ag-choice')].every("
        "b => b.querySelector('mjx-container'))"
    )
    back = typeset_choices(client, ".ag-back .ag-choices li.ag-choice")
    assert all(count == 1 and "\\(" not in text for count, text in back)
    assert [int(c["choice"]) for c in client.back_choices()] == order
    if item_id == "math":
        assert client.page.locator('.ag-explanation mjx-container[display="true"]').count() == 1
        why = client.page.locator('.ag-choices [data-choice="1"] .ag-why mjx-container')
        assert why.count() == 1


# ---- recall first


def test_recall_hides_the_choices_behind_a_button(client: Client) -> None:
    client.desktop()
    client.show_question("recall")
    assert client.page.get_attribute(".ag-card", "data-recall") == "true"
    assert client.page.inner_text(".ag-reveal") == "Show choices"
    assert client.page.is_visible(".ag-question") and client.page.is_visible(".ag-reveal")
    assert not client.page.is_visible(".ag-front .ag-choices")
    assert not client.page.is_visible(".ag-front .ag-static")
    order = client.front_order()  # already shuffled, while hidden
    client.page.click(".ag-reveal")
    assert client.page.is_visible(".ag-front .ag-choices") and not client.page.is_visible(
        ".ag-reveal"
    )
    assert client.page.evaluate("document.activeElement.dataset.choice") == str(order[0])
    client.pick(1)
    client.show_answer("recall")
    assert [int(c["choice"]) for c in client.back_choices()] == order
    assert client.verdict() == "correct:✓ Correct"


def test_recall_is_keyboard_reachable(client: Client) -> None:
    client.desktop()
    client.show_question("recall")
    client.page.keyboard.press("Tab")
    assert client.page.evaluate("document.activeElement.className") == "ag-reveal tappable"
    client.page.keyboard.press("Enter")
    assert client.page.is_visible(".ag-front .ag-choices")
    # arrows reveal first and only then pick, so nothing unseen is ever picked
    client.show_question("recall")
    order = client.front_order()
    client.page.keyboard.press("ArrowDown")
    assert client.page.is_visible(".ag-front .ag-choices")
    assert client.page.locator('.ag-front [aria-checked="true"]').count() == 0
    client.page.keyboard.press("ArrowDown")
    client.show_answer("recall")
    assert [c["choice"] for c in client.back_choices() if c["picked"] == "true"] == [str(order[0])]


def test_recall_multi_answer_shows_its_hint_with_the_choices(client: Client) -> None:
    client.load_front("recall-multi")
    assert not client.page.is_visible(".ag-hint")
    client.page.click(".ag-reveal")
    assert client.page.inner_text(".ag-hint") == "Select all that apply"
    client.pick(1, 2)
    client.load_back("recall-multi")
    assert client.verdict() == "correct:✓ Correct"


def test_recall_never_revealed_means_no_answer(client: Client) -> None:
    client.load_front("recall")
    order = client.front_order()
    client.load_back("recall")
    assert [int(c["choice"]) for c in client.back_choices()] == order
    assert client.verdict() == "none:No answer selected"


def test_recall_in_urdu(client: Client) -> None:
    client.desktop()
    client.show_question("ur-rich")
    assert client.page.get_attribute(".ag-card", "data-recall") == "true"
    assert client.page.inner_text(".ag-reveal") == "اختیارات دکھائیں"
    client.page.click(".ag-reveal")
    client.pick(1)
    client.show_answer("ur-rich")
    assert client.verdict() == "correct:✓ درست"
    assert grade_hint(client) is None
    assert dict(back_whys(client))["1"] == "ہر رینک ایک عمل ہے۔"


def test_the_preview_shows_whys_code_and_recall(
    chromium: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    banks = tmp_path / "banks" / "rich"
    banks.mkdir(parents=True)
    (banks / "en.yaml").write_text(EN, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert invoke(CliRunner(), "preview").exit_code == 0
    page = chromium.new_page(viewport={"width": 390, "height": 844})
    errors: list[Any] = []
    page.on("pageerror", lambda error: errors.append(error))
    try:
        page.goto((tmp_path / "out" / "preview" / "rich.en.html").as_uri())
        recall = page.locator('.pv-card[data-item="recall"]')
        assert not recall.locator(".ag-choices").is_visible()
        recall.locator(".ag-reveal").click()
        recall.locator('button.ag-choice[data-choice="2"]').click()
        recall.locator(".pv-flip").click()
        assert (
            recall.locator(".ag-grade-hint").inner_text()
            == "The honest grade for this one is Again."
        )
        assert recall.locator('.ag-choices [data-choice="2"] .ag-why').inner_text() == "It sums."
        code = page.locator('.pv-card[data-item="code"]')
        assert code.locator(".ag-question .ag-code span.nb").first.inner_text() == "print"
    finally:
        page.close()
    assert errors == []


CUE = """sel => { const block = document.querySelector(sel), pre = block.querySelector('pre');
    const after = getComputedStyle(block, '::after'), before = getComputedStyle(block, '::before');
    const box = block.getBoundingClientRect();
    return {more: block.dataset.more || null, fits: block.hasAttribute('data-fits'),
            after: after.content !== 'none' && after.boxShadow !== 'none',
            before: before.content !== 'none' && before.boxShadow !== 'none',
            overflow: getComputedStyle(pre).overflowX, inView: box.right <= innerWidth}; }"""


def test_code_that_scrolls_shows_its_cut_edge_on_a_phone(client: Client) -> None:
    """Seen without touching: a shadow at the cut edge; scrolled to the end, the shadow
    moves to the start. An overflow of two pixels does not scroll."""
    client.load_front("code")
    sel = ".ag-question .ag-code"
    assert client.page.evaluate(CUE, sel) == {
        "more": "right", "fits": False, "after": True, "before": False,
        "overflow": "auto", "inView": True,
    }  # fmt: skip
    client.page.evaluate(
        "sel => { const p = document.querySelector(sel + ' pre'); p.scrollLeft = p.scrollWidth; }",
        sel,
    )
    client.page.wait_for_function(
        "sel => document.querySelector(sel).dataset.more === 'left'", arg=sel
    )
    assert client.page.evaluate(CUE, sel)["before"]
    # the same code in a box two pixels narrower than it: no scrollbar, no cue
    client.page.evaluate(
        """sel => { const block = document.querySelector(sel), pre = block.querySelector('pre');
            const s = getComputedStyle(pre), pad = parseFloat(s.paddingLeft) + parseFloat(s.paddingRight);
            pre.scrollLeft = 0; block.style.maxWidth = 'none';
            pre.style.width = (pre.scrollWidth - 2 - pad) + 'px';
            window.dispatchEvent(new Event('resize')); }""",
        sel,
    )
    seen = client.page.evaluate(CUE, sel)
    assert (seen["more"], seen["fits"], seen["overflow"]) == (None, True, "hidden")
