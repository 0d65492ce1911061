"""The back's layout on every shipped card, measured: the result first.

Every card of every shipped deck is rendered by real Anki, then run in headless
Chromium as AnkiDroid runs it (a fresh page per side) at phone size (360x740,
scale 3, touch). The learner picks a wrong choice, the worst case for room: the
verdict, the pick, the correct choice and the start of the explanation must all
be on the first screen. Screenshots of each deck's first back go to
tests/artifacts/ for a person to look at.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import pytest

from tests.helpers import REPO
from tests.support.browser import ARTIFACTS
from tests.support.layout import MEASURE, PARTS

# The first screens: a phone, as AnkiDroid shows a card, and the web view of Anki
# desktop's reviewer in an 800x560 main window (433 px tall below Anki's toolbars, as
# tests/card/test_desktop_shipped.py measures it there).
SCREENS = {
    "phone": {"viewport": {"width": 360, "height": 740}, "device_scale_factor": 3,
              "is_mobile": True, "has_touch": True},
    "desktop": {"viewport": {"width": 800, "height": 433}},
}  # fmt: skip


@pytest.fixture(scope="module")
def phone(chromium: Any) -> Iterator[Any]:
    context = chromium.new_context(
        viewport={"width": 360, "height": 740},
        device_scale_factor=3,
        is_mobile=True,
        has_touch=True,
    )
    yield context
    context.close()


def back_after_a_wrong_pick(page: Any, base: str, key: str, touch: bool = True) -> dict[str, float]:
    page.goto(f"{base}/front-{key}.html")
    wrong = page.eval_on_selector_all(
        ".ag-front button.ag-choice",
        "els => els.map(e => e.dataset.choice)",
    )
    correct = page.evaluate(
        "() => [...document.querySelectorAll('.ag-static li[data-correct=\"true\"]')]"
        ".map(e => e.dataset.choice)"
    )
    choice = next(n for n in wrong if n not in correct)
    press = page.tap if touch else page.click
    if page.is_visible(".ag-front .ag-reveal"):  # recall first: the choices behind a button
        press(".ag-front .ag-reveal")
    press(f'.ag-front button.ag-choice[data-choice="{choice}"]')
    page.goto(f"{base}/back-{key}.html")
    page.wait_for_selector(".ag-back[data-ag-ready] .ag-verdict:not([hidden])")
    measured: dict[str, float] = page.evaluate(MEASURE)
    return measured


@pytest.mark.parametrize("screen", SCREENS)
def test_every_shipped_back_shows_the_result_on_the_first_screen(
    shipped: tuple[str, list[str]], chromium: Any, screen: str
) -> None:
    base, keys = shipped
    context = chromium.new_context(**SCREENS[screen])
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    ARTIFACTS.mkdir(exist_ok=True)
    late: dict[str, list[str]] = {}
    long: list[str] = []
    decks_seen: set[str] = set()
    for key in keys:
        seen = back_after_a_wrong_pick(page, base, key, touch=screen == "phone")
        deck = key.rsplit(".", 1)[1]
        if (
            deck not in decks_seen
            or "gradient-accumulation.ur" in key
            or "all-reduce-print.en" in key
        ):
            decks_seen.add(deck)
            page.screenshot(path=str(ARTIFACTS / f"{screen}-back-{key}.png"))
        # an item whose question alone fills 40% of the screen is simply too long: the
        # verdict and the pick must still be there
        parts = ("verdict", "pick") if seen["question"] > 0.4 * seen["screen"] else PARTS
        off = [part for part in parts if seen[part] is None or seen[part] > seen["screen"]]
        if off:
            late[key] = off + [f"{part}={seen[part]:.0f}" for part in ("question", *PARTS)]
        if parts != PARTS:
            long.append(key)
    context.close()
    assert errors == []
    assert late == {}, f"{len(late)} of {len(keys)} backs put these below the first screen: {late}"
    assert len(long) <= len(keys) // 10, long  # the rule, not the exception


def _urdu_texts() -> list[str]:
    """Every shipped Urdu text that is prose (no code), as one paragraph."""
    import yaml

    from ankigen.text.html import plain_text

    texts = []
    for path in sorted((REPO / "banks").glob("*/ur.yaml")):
        for item in yaml.safe_load(path.read_text(encoding="utf-8"))["items"]:
            choices = [c if isinstance(c, str) else c.get("text", "") for c in item["choices"]]
            whys = [c.get("why", "") for c in item["choices"] if isinstance(c, dict)]
            for text in [item["question"], item.get("explanation", ""), *choices, *whys]:
                shown = " ".join(plain_text(text).split())
                if shown and "```" not in text:
                    texts.append(shown)
    return texts


PARAGRAPH = """<body style="margin:0;background:#fff"><div id=p dir=rtl lang=ur
    style="font-family:'Noto Nastaliq Urdu';font-size:18px;width:300px;text-align:right;
    position:absolute;top:60px;left:20px"></div></body>"""


def _touching(page: Any, texts: list[str], line_height: str) -> int:
    """How many paragraphs have two consecutive lines whose ink touches: each line of a
    paragraph (as it wraps at phone width) drawn alone in its place, and the pixels of
    neighbours compared."""
    import io

    from PIL import Image, ImageChops

    page.set_content(PARAGRAPH)
    page.evaluate("lh => { document.getElementById('p').style.lineHeight = lh; }", line_height)
    page.evaluate("() => document.fonts.ready")
    touching = 0
    for text in texts:
        lines: list[str] = page.evaluate(
            """words => { const p = document.getElementById('p'); p.innerHTML = '';
                words.forEach((w, i) => { const s = document.createElement('span');
                    s.textContent = w; p.appendChild(s);
                    if (i < words.length - 1) p.appendChild(document.createTextNode(' ')); });
                const lines = [];
                let top = null;
                for (const s of p.querySelectorAll('span')) {
                    const t = s.getBoundingClientRect().top;
                    if (top === null || Math.abs(t - top) > 2) { lines.push([]); top = t; }
                    lines[lines.length - 1].push(s.textContent); }
                return lines.map(l => l.join(' ')); }""",
            text.split(" "),
        )
        masks = []
        for index, line in enumerate(lines):
            page.evaluate(
                """([line, index]) => { const p = document.getElementById('p'); p.innerHTML = '';
                    for (let k = 0; k < index; k++) p.appendChild(document.createElement('br'));
                    const s = document.createElement('span'); s.style.whiteSpace = 'nowrap';
                    s.textContent = line; p.appendChild(s); }""",
                [line, index],
            )
            shot = page.screenshot(clip={"x": 0, "y": 0, "width": 340, "height": 420})
            masks.append(
                Image.open(io.BytesIO(shot)).convert("L").point(lambda v: 255 if v < 160 else 0)
            )
        if any(ImageChops.multiply(a, b).getbbox() for a, b in itertools.pairwise(masks)):
            touching += 1
    return touching


def test_nastaliq_lines_have_the_room_the_font_asks_for(
    shipped: tuple[str, list[str]], phone: Any
) -> None:
    """The card's Urdu line height lets no more lines touch, pixel by pixel, than the font's
    own line spacing does, over every shipped Urdu text; 1.45 (Latin's) lets many."""
    base, keys = shipped
    page = phone.new_page()
    page.goto(f"{base}/front-{next(k for k in keys if '.ur.' in k)}.html")
    card = page.evaluate(
        "() => { const c = document.querySelector('.ag-card'); const s = getComputedStyle(c);"
        " return parseFloat(s.lineHeight) / parseFloat(s.fontSize); }"
    )
    page.close()
    texts = _urdu_texts()
    page = phone.browser.new_page(viewport={"width": 360, "height": 420})
    try:
        ours = _touching(page, texts, f"{card:.3f}")
        own = _touching(page, texts, "normal")
        latin = _touching(page, texts, "1.45")
    finally:
        page.close()
    assert ours <= own < latin, (ours, own, latin)
