"""Text contrast, measured by computed colours in Chromium (WCAG 1.4.3): every piece of
text the card shows stands 4.5:1 against the surface under it (3:1 for large text), in
light and night, in every state a choice takes: picked, crossed out, hovered, focused on
the front; picked, correct, missed, crossed out and quiet on the back. The focus ring
stands 3:1 against the page (WCAG 1.4.11)."""

from __future__ import annotations

import pytest

from tests.support.browser import Client

# Each visible text node of the card: its element, its contrast against the first opaque
# background under it (the colour's own alpha and every ancestor's opacity blended in),
# and the ratio it needs (3 for large text: 24 px, or 18.66 px bold).
MEASURE = """() => {
    const parse = c => { const m = c.match(/[\\d.]+/g).map(Number);
        return [m[0], m[1], m[2], m.length > 3 ? m[3] : 1]; };
    const lum = c => { const l = c.slice(0, 3).map(v => { v /= 255;
        return v <= 0.04045 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
        return 0.2126 * l[0] + 0.7152 * l[1] + 0.0722 * l[2]; };
    const blend = (fg, bg, a) => fg.slice(0, 3).map((v, i) => v * a + bg[i] * (1 - a));
    const found = [];
    const walker = document.createTreeWalker(document.querySelector('.ag-card'), NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) {
        const t = walker.currentNode, e = t.parentElement;
        if (!t.data.trim() || !e.checkVisibility({opacityProperty: false, visibilityProperty: true}) ||
            e.closest('.ag-sr, mjx-container, .ag-code')) { continue; }
        let bg = null, opacity = 1;
        for (let n = e; n; n = n.parentElement) {
            const s = getComputedStyle(n);
            opacity *= parseFloat(s.opacity);
            const c = parse(s.backgroundColor);
            if (!bg && c[3] > 0) { bg = c; }
        }
        bg = bg || [255, 255, 255, 1];
        const s = getComputedStyle(e), fg = parse(s.color);
        const shown = blend(blend(fg, bg, fg[3]), bg, opacity);
        const [hi, lo] = [lum(shown), lum(bg)].sort((a, b) => b - a);
        const size = parseFloat(s.fontSize), bold = parseInt(s.fontWeight, 10) >= 700;
        const need = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
        const ratio = (hi + 0.05) / (lo + 0.05);
        if (ratio < need) {
            found.push(`${e.className || e.tagName} "${t.data.trim().slice(0, 20)}" ${ratio.toFixed(2)} < ${need}`);
        }
    }
    return found;
}"""
RING = """() => { const e = document.activeElement, s = getComputedStyle(e);
    return [s.outlineStyle, s.outlineColor, getComputedStyle(document.body).backgroundColor]; }"""


def _luminance(rgb: list[float]) -> float:
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def _ratio(a: str, b: str) -> float:
    channels = [
        [float(v) / 255 for v in c.split("(")[1].rstrip(")").split(",")[:3]] for c in (a, b)
    ]
    light, dark = sorted((_luminance(c) for c in channels), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def low(client: Client, state: str) -> list[str]:
    found: list[str] = client.page.evaluate(MEASURE)
    return [f"{state}: {f}" for f in found]


@pytest.mark.parametrize("night", [False, True], ids=["light", "night"])
def test_every_state_of_the_card_stands_out(client: Client, night: bool) -> None:
    client.desktop()
    client.page.evaluate("n => document.body.classList.toggle('nightMode', n)", night)
    client.show_question("multi")  # 1 and 3 are right
    client.page.mouse.move(1, 1)
    found = low(client, "front")
    crossed = '.ag-front button.ag-choice[data-choice="4"]'
    client.page.click(crossed, button="right")
    client.pick(1, 2)  # picked, right and wrong (the last one also hovered)
    found += low(client, "picked, crossed out, hovered")
    client.page.hover(crossed)
    found += low(client, "crossed out and hovered")
    client.page.mouse.move(1, 1)
    client.page.keyboard.press("Escape")
    for _ in range(8):  # Tab to a choice: the focus ring
        client.page.keyboard.press("Tab")
        if client.page.evaluate("!!document.activeElement.closest('.ag-choice')"):
            break
    style, ring, page = client.page.evaluate(RING)
    assert style == "solid" and _ratio(ring, page) >= 3, (ring, page)
    found += low(client, "focused")
    client.show_answer("multi")
    found += low(client, "back")  # picked right and wrong, missed, crossed out, quiet
    assert client.page.locator('.ag-back li[data-crossed="true"]').count() == 1
    assert client.page.locator('.ag-back li[data-missed="true"]').count() == 1
    assert found == []
