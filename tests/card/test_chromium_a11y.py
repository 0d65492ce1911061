"""Every shipped card as a screen reader meets it, in Chromium: axe-core's WCAG 2.1 A and
AA rules on every front and back, light and night; then the accessibility tree itself.

axe-core comes from axe-playwright-python (the test extras), which ships axe.min.js."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.browser import Client

try:
    from axe_playwright_python.sync_playwright import Axe
except ImportError:  # a clear failure, not a skip: the check is part of the card's tests
    Axe = None

RULES = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}}


@pytest.fixture(scope="module")
def axe() -> Any:
    if Axe is None:
        pytest.fail("the accessibility tests need axe-playwright-python: pip install -e '.[test]'")
    return Axe()


@pytest.fixture
def page(chromium: Any) -> Iterator[Any]:
    context = chromium.new_context(viewport={"width": 800, "height": 560})
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    yield tab
    context.close()
    assert errors == []


def violations(axe: Any, page: Any) -> list[str]:
    found = []
    for night in (False, True):
        page.evaluate("n => document.body.classList.toggle('nightMode', n)", night)
        result = axe.run(page, context=".ag-card", options=RULES).response
        found += [
            f"{'night' if night else 'light'} {v['id']}: {n['target'][0]} ({n['failureSummary']})"
            for v in result["violations"]
            for n in v["nodes"]
        ]
    return found


def test_every_shipped_card_passes_axe_light_and_night(
    shipped: tuple[str, list[str]], page: Any, axe: Any
) -> None:
    base, keys = shipped
    found: dict[str, list[str]] = {}
    for key in keys:
        page.goto(f"{base}/front-{key}.html")
        front = violations(axe, page)
        if page.is_visible(".ag-front .ag-reveal"):
            page.click(".ag-front .ag-reveal")
        page.click(".ag-front button.ag-choice")  # a pick, and a choice crossed out
        page.click(".ag-front button.ag-choice:nth-child(2)", button="right")
        front += violations(axe, page)
        page.goto(f"{base}/back-{key}.html")
        page.wait_for_selector(".ag-back[data-ag-ready] .ag-verdict:not([hidden])")
        back = violations(axe, page)
        if front or back:
            found[key] = front + back
    kinds = sorted({v.split(" (")[0] for vs in found.values() for v in vs})
    assert found == {}, f"{len(found)} of {len(keys)} cards; the kinds: {kinds}"


# The accessibility tree, as Chromium gives it to a screen reader (aria_snapshot).
def test_the_front_reads_as_a_question_and_its_choices(client: Client) -> None:
    client.load_front("multi")
    order = client.front_order()
    client.pick(order[0])
    client.page.click(f'.ag-front button.ag-choice[data-choice="{order[1]}"]', button="right")
    tree = client.page.locator(".ag-front .ag-choices").aria_snapshot()
    question = client.page.inner_text(".ag-front .ag-question").strip()
    assert tree.splitlines()[0] == f'- group "{question}":'
    lines = tree.splitlines()[1:]
    assert len(lines) == 5
    assert all(line.lstrip().startswith("- checkbox ") for line in lines)
    assert "[checked]" in lines[0] and "[checked]" not in lines[2]
    assert "[disabled]" in lines[1] and "Ruled out" in lines[1]  # crossed out, and said so
    client.load_front("single")
    tree = client.page.locator(".ag-front .ag-choices").aria_snapshot()
    assert all(line.lstrip().startswith("- radio ") for line in tree.splitlines()[1:])


def test_the_back_says_the_verdict_then_each_choice_and_why(client: Client) -> None:
    client.load_front("multi")
    order = client.front_order()
    wrong = next(n for n in order if n not in (1, 3))
    client.pick(1, wrong)
    client.load_back("multi")
    verdict = client.page.locator(".ag-verdict")
    assert verdict.get_attribute("role") == "status"  # a live region: said once, when filled
    assert client.page.locator("[role=status], [aria-live]").count() == 1
    notes = {
        n: client.page.locator(f'.ag-back li.ag-choice[data-choice="{n}"]').aria_snapshot()
        for n in (1, 3, wrong)
    }
    assert all(note.startswith("- listitem:") for note in notes.values()), notes
    assert "Your answer" in notes[1] and "Correct answer" in notes[1]
    assert "Missed" in notes[3] and "Your answer" not in notes[3]
    assert "Your answer" in notes[wrong] and "Correct answer" not in notes[wrong]


def test_right_to_left_choices_keep_their_language(client: Client) -> None:
    client.load_front("rtl")
    langs = client.page.eval_on_selector_all(
        ".ag-front button.ag-choice",
        "els => els.map(e => [e.closest('[lang]').getAttribute('lang'), getComputedStyle(e).direction])",
    )
    assert langs and all(lang == ["ur", "rtl"] for lang in langs)


def test_the_back_says_each_choices_why(shipped: tuple[str, list[str]], page: Any) -> None:
    base, keys = shipped
    key = next(k for k in keys if k.startswith("ring-time-large-n.en."))  # a why per choice
    page.goto(f"{base}/front-{key}.html")
    page.click('.ag-front button.ag-choice[data-choice="2"]')  # wrong
    page.goto(f"{base}/back-{key}.html")
    page.wait_for_selector(".ag-back[data-ag-ready] .ag-verdict:not([hidden])")
    for number in (1, 2, 3, 4):
        li = page.locator(f'.ag-back li.ag-choice[data-choice="{number}"]')
        why = " ".join(li.locator(".ag-why").inner_text().split())
        heard = " ".join(li.aria_snapshot().split())
        assert why[:12] in heard, (number, why, heard)
    assert (
        "Correct answer" in page.locator('.ag-back li.ag-choice[data-choice="1"]').aria_snapshot()
    )
    assert "Your answer" in page.locator('.ag-back li.ag-choice[data-choice="2"]').aria_snapshot()
