"""Richer items in the real Anki desktop, which ships MathJax 3: formulas typeset on both sides.

Uses the desktop harness of tests/desktop/ (aqt under Xvfb, a test add-on, real
X input through xdotool); see tests/card/test_desktop.py for how it works.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
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
    "edited": (
        "en",
        {
            "id": "edited",
            "question": "Which collective sums across ranks?",
            "choices": ["all-reduce", "broadcast", "scatter"],
            "answer": 1,
            "explanation": "It sums.",
        },
    ),
}
# What a note edited in Anki's editor can hold: it never met lint, which refuses all of
# these (tests/checks/test_lint.py). MathJax's html, bbox and base macros would make a javascript: link,
# a full-window overlay, a second #answer and the card's own classes. The backslash is
# hidden from a plain text search by an HTML comment and by an entity in two of them.
HOSTILE_QUESTION = (
    r"Pick \(\frac{1}{2}\) \(\href{javascript:document.title='pwned'}{x}\) "
    r"\(\style{position:fixed;inset:0;background:red}{\text{Easy}}\) "
    r"\(\class{ag-verdict}{z}\) \(\hr<!-- -->ef{javascript:1}{w}\) "
    r"\(&#92;href{javascript:2}{v}\) \(\bbox[position:fixed;inset:0]{b}\) "
    r"\(\mmlToken{mi}[href='javascript:3']{t}\)"
)
HOSTILE_EXPLANATION = r"\(\cssId{answer}{y}\) \(\require{html}\href{javascript:4}{u}\)"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("desktop-rich")


@pytest.fixture(scope="module")
def anki(root: Path) -> Iterator[Any]:
    yield from harness.with_decks(root, DECKS, 800, 700)


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


HOSTILE_FACTS = """(function () {
    var card = document.querySelector('.ag-card'), box = card.getBoundingClientRect();
    // what MathJax draws; its assistive MathML beside it is clipped to nothing
    var inMath = [].slice.call(card.querySelectorAll('mjx-container, mjx-math *'));
    var ids = [].map.call(document.querySelectorAll('[id]'), function (e) { return e.id; });
    return {
        formulas: card.querySelectorAll('.ag-question mjx-container, .ag-explanation-text mjx-container').length,
        links: [].filter.call(document.querySelectorAll('[href]'), function (e) {
            return /^\\s*javascript:/i.test(e.getAttribute('href')); }).length,
        mathLinks: card.querySelectorAll('mjx-container [href], mjx-container a').length,
        fixed: inMath.filter(function (e) { return getComputedStyle(e).position === 'fixed'; }).length,
        outside: inMath.filter(function (e) { var b = e.getBoundingClientRect();
            return b.width && (b.left < box.left - 1 || b.right > box.right + 1 ||
                               b.top < box.top - 1 || b.bottom > box.bottom + 1); }).length,
        borrowed: card.querySelectorAll('mjx-container [class*="ag-"], mjx-container [id]').length,
        duplicateIds: ids.filter(function (id, i) { return ids.indexOf(id) !== i; }),
        answers: document.querySelectorAll('#answer').length,
        shown: card.querySelector('.ag-question').textContent.indexOf('\u29f5href') >= 0,
        title: document.title.indexOf('pwned') >= 0};
})()"""


def test_formula_macros_edited_into_a_note_in_anki_stay_inert(anki: Any) -> None:
    anki.call("set_field", item="edited", field="Question", value=HOSTILE_QUESTION)
    anki.call("set_field", item="edited", field="Explanation", value=HOSTILE_EXPLANATION)
    anki.theme(dark=False)
    review(anki, "edited")
    anki.wait_for(
        "document.querySelectorAll('.ag-question mjx-container').length === 8",
        what="the edited question's eight formulas typeset",
    )
    front = anki.eval(HOSTILE_FACTS)
    assert front == {
        "formulas": 8,
        "links": 0,
        "mathLinks": 0,
        "fixed": 0,
        "outside": 0,
        "borrowed": 0,
        "duplicateIds": [],
        "answers": 0,
        "shown": True,
        "title": False,
    }
    anki.click('.ag-front button.ag-choice[data-choice="1"]')
    show_answer(anki)
    anki.wait_for(
        "document.querySelectorAll('.ag-explanation-text mjx-container').length === 2",
        what="the edited explanation's two formulas typeset",
    )
    back = anki.eval(HOSTILE_FACTS)
    assert back == {**front, "formulas": 10, "answers": 1}
    assert anki.eval("document.querySelector('.ag-verdict').dataset.verdict") == "correct"


def test_the_keyboard_does_what_the_focus_says(anki: Any) -> None:
    """Real X keys: Tab reaches "Show choices" and Space opens it (Anki would show the
    answer instead), Alt+2 picks the second choice shown, Enter shows the answer."""
    anki.theme(dark=False)
    review(anki, "recall")
    anki.move_to(".ag-front .ag-question")
    for _ in range(6):
        if anki.eval("document.activeElement.classList.contains('ag-reveal')"):
            break
        anki.key("Tab")
    assert anki.eval("document.activeElement.classList.contains('ag-reveal')")
    anki.key("space")
    anki.wait_for(
        "!document.querySelector('.ag-front .ag-choices').hidden", what="the choices, opened"
    )
    assert anki.call("state")["side"] == "question"
    shown = typeset(anki, ".ag-front button.ag-choice")
    anki.key("alt+2")
    anki.wait_for(
        f"document.querySelector('.ag-front button.ag-choice[data-choice=\"{shown[1][0]}\"]')"
        ".getAttribute('aria-checked') === 'true'",
        what="the second choice shown, picked by Alt+2",
    )
    assert anki.call("state")["side"] == "question"
    anki.key("Return")
    anki.wait_for(
        "!!document.querySelector('.ag-card.ag-back[data-ag-ready]')", what="the back after Enter"
    )
    picked = anki.eval(
        "[].map.call(document.querySelectorAll('.ag-back .ag-choices li[data-picked=\"true\"]'),"
        " function (e) { return +e.dataset.choice; })"
    )
    assert picked == [shown[1][0]]


# A side as a reader meets it, in any page: its text, its choices by number (the order is
# shuffled), the elements outside formulas by tag and class, and each typeset formula as
# the glyphs MathJax drew (CHTML draws a character as an mjx-c of a class named after it).
SIDE_FACTS = """(function () {
    function text(e) { return e ? e.textContent.replace(/\\s+/g, ' ').trim() : null; }
    function glyphs(m) {
        return [].map.call(m.querySelectorAll('mjx-c'), function (c) { return c.className; }).join(' ');
    }
    var card = document.querySelector('.ag-card');
    return {
        side: card.className,
        question: text(card.querySelector('.ag-question')),
        verdict: text(card.querySelector('.ag-verdict')),
        explanation: text(card.querySelector('.ag-explanation')),
        choices: [].map.call(card.querySelectorAll('.ag-choices [data-choice], button.ag-choice'),
            function (c) { return [c.dataset.choice, c.className, text(c)]; }).sort(),
        elements: [].filter.call(card.querySelectorAll('*'), function (e) {
            return !e.closest('mjx-container'); }).map(function (e) {
            return e.tagName.toLowerCase() + '.' + [].slice.call(e.classList).sort().join('.');
        }).sort(),
        formulas: [].map.call(card.querySelectorAll('mjx-container'), function (m) {
            return (m.getAttribute("display") || "inline") + " " + glyphs(m); }).sort()
    };
})()"""


def test_the_preview_shows_what_anki_shows(anki: Any, root: Path, chromium: Any) -> None:
    """One card, both sides, in the real Anki desktop and in `ankigen preview` opened in
    Chromium offline: the same text, the same elements, the same typeset formulas."""
    from ankigen.preview.pages import make_preview

    wait_typeset = (
        "document.querySelectorAll('.ag-card mjx-container').length >= 5 && "
        "!document.querySelector('.ag-card .ag-text:not(:has(mjx-container))')"
    )
    anki.theme(dark=False)
    review(anki, "math")
    anki.wait_for(wait_typeset, what="the front typeset")
    in_anki = [anki.eval(SIDE_FACTS)]
    anki.click('.ag-front button.ag-choice[data-choice="2"]')
    show_answer(anki)
    anki.wait_for(wait_typeset, what="the back typeset")
    in_anki.append(anki.eval(SIDE_FACTS))

    make_preview(root / "project" / "banks", root / "preview")
    errors: list[Any] = []
    context = chromium.new_context(viewport={"width": 800, "height": 700})
    page = context.new_page()
    try:
        page.route("http*://**", lambda route: route.abort())
        page.on("pageerror", lambda error: errors.append(error))
        page.goto((root / "preview" / "math.en.html").as_uri())
        page.wait_for_function(f"() => {wait_typeset}")
        in_preview = [page.evaluate(SIDE_FACTS)]
        page.click('.ag-front button.ag-choice[data-choice="2"]')
        page.click(".pv-flip")
        page.wait_for_function(
            f"() => document.querySelector('.ag-back[data-ag-ready]') && {wait_typeset}"
        )
        in_preview.append(page.evaluate(SIDE_FACTS))
    finally:
        context.close()
    assert errors == []
    front, back = in_anki
    assert "ag-front" in front["side"] and "ag-back" in back["side"]
    assert back["verdict"] and back["verdict"] == in_preview[1]["verdict"]
    # the choices, the why of choice 1 and the explanation's display formula
    assert len(back["formulas"]) == 12 and back["formulas"][-1].startswith("true mjx-c32 ")
    assert in_preview == in_anki
