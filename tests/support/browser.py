"""Cards in a browser: Anki renders them, a local web server serves each side, and
headless Chromium (Debian's, through Playwright) runs them as a client would.

The fixtures over these are `chromium` (tests/conftest.py) and `site` and `client`
(tests/card/conftest.py); a test that starts Chromium is marked gui (tests/support/gui.py).
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import shutil
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.helpers import TESTS, AnkiCollection, invoke, item, write_bank
from tests.support import gui

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# screenshots for a person to look at
ARTIFACTS = TESTS / "artifacts"

# the deck most card tests run (`write_card_banks`)
TRICKY = "Quotes \" and ' and </script> & <b>bold</b>: which?"
# the shipped Urdu deck has questions the source left in English
MIXED_QUESTION = "What memory limit remains in plain data parallelism?"


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


def write_card_banks(banks: Path) -> None:
    """The banks of the deck most card tests run: one answer, several, a fixed order,
    tricky text, right to left, mixed directions, a retired item, Bengali and Japanese."""
    write_bank(
        banks,
        "cards",
        "en",
        items=[
            item("single", answer=2),
            item("multi", answer=[1, 3], choices=5),
            item("fixed", answer=4, shuffle=False),
            item("tricky", answer=1, question=TRICKY, choices=3),
        ],
    )
    write_bank(
        banks,
        "cards",
        "ur",
        items=[
            item("rtl", answer=1, question="کون سا درست ہے؟"),
            item(
                "mixed",
                answer=1,
                shuffle=False,
                question=MIXED_QUESTION,
                choices=2,
                explanation="Only the parameters are replicated.",
            ),
            item("retired-mixed", answer=1, retired=True, question=MIXED_QUESTION),
        ],
    )
    write_bank(banks, "cards", "bn", items=[item("bengali", answer=[1, 2])])
    write_bank(banks, "cards", "ja", items=[item("japanese", answer=[1, 2])])


def anki_rendered_sides(
    project: Path, anki_dir: Path, key: Callable[[Any], str] = lambda card: card.note()["ItemId"]
) -> dict[str, tuple[str, str]]:
    """Build the project's banks, import the packages into real Anki and return each
    card's question and answer HTML as Anki renders them, by `key` (the item id), in
    the order of the cards' ids."""
    old = Path.cwd()
    os.chdir(project)
    try:
        result = invoke(CliRunner(), "build")
        assert result.exit_code == 0, result.output
    finally:
        os.chdir(old)
    collection = AnkiCollection(anki_dir)
    sides: dict[str, tuple[str, str]] = {}
    try:
        for package in sorted((project / "out").glob("*.apkg")):
            collection.import_package(package)
        for card_id in sorted(collection.col.find_cards("")):
            card = collection.col.get_card(card_id)
            sides[key(card)] = (card.question(), card.answer())
    finally:
        collection.close()
    return sides


@contextlib.contextmanager
def serve_cards(
    web: Path, sides: dict[str, tuple[str, str]], pages: Sequence[str]
) -> Iterator[str]:
    """Each card side as a page of its own (`front-ID.html`, `back-ID.html`) beside the
    `pages` from tests/browser/, served on 127.0.0.1; yields the base URL."""
    web.mkdir(exist_ok=True)
    for page in pages:
        shutil.copy(TESTS / "browser" / page, web / page)
    (web / "favicon.ico").write_bytes(b"")  # browsers ask for it; a 404 would log an error
    for item_id, (question, answer) in sides.items():
        for side, markup in (("front", question), ("back", answer)):
            (web / f"{side}-{item_id}.html").write_text(
                '<!doctype html><html><head><meta charset="utf-8">'
                '<meta name="viewport" content="width=device-width, initial-scale=1"></head>'
                f'<body class="card card1">{markup}</body></html>',
                encoding="utf-8",
            )
    handler = functools.partial(QuietHandler, directory=str(web))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def headless_chromium() -> Iterator[Any]:
    """Debian's chromium, started by Playwright as this machine allows it; only for a
    test marked gui (the `chromium` fixture marks its tests)."""
    playwright_api = pytest.importorskip("playwright.sync_api")
    gui.check("headless Chromium")
    with playwright_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


class Client:
    """One browser tab that fails the test on any JavaScript error."""

    def __init__(
        self, browser: Any, base: str, sides: dict[str, tuple[str, str]], **options: Any
    ) -> None:
        self.context = browser.new_context(viewport={"width": 390, "height": 844}, **options)
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.on(
            "console", lambda msg: self.errors.append(msg.text) if msg.type == "error" else None
        )
        self.base = base
        self.sides = sides

    def close(self) -> None:
        self.context.close()
        assert self.errors == []

    # Anki desktop: one page, sides swapped into #qa
    def desktop(self) -> None:
        self.page.goto(f"{self.base}/desktop.html")

    def show_question(self, item_id: str) -> None:
        self.page.evaluate("html => _showQuestion(html)", self.sides[item_id][0])

    def show_answer(self, item_id: str) -> None:
        self.page.evaluate("html => _showAnswer(html)", self.sides[item_id][1])

    # AnkiDroid: a fresh page for each side
    def load_front(self, item_id: str) -> None:
        self.page.goto(f"{self.base}/front-{item_id}.html")

    def load_back(self, item_id: str) -> None:
        self.page.goto(f"{self.base}/back-{item_id}.html")

    def front_order(self) -> list[int]:
        return [
            int(n)
            for n in self.page.eval_on_selector_all(
                ".ag-front button.ag-choice", "els => els.map(e => e.dataset.choice)"
            )
        ]

    def pick(self, *numbers: int) -> None:
        for number in numbers:
            self.page.click(f'.ag-front button.ag-choice[data-choice="{number}"]')

    def back_choices(self) -> list[dict[str, str]]:
        result: list[dict[str, str]] = self.page.eval_on_selector_all(
            ".ag-back .ag-choices .ag-choice",
            """els => els.map(e => ({choice: e.dataset.choice, correct: e.dataset.correct,
                picked: e.dataset.picked, mark: e.querySelector('.ag-mark').textContent,
                status: (e.querySelector('.ag-status') || {innerText: ''}).innerText}))""",
        )
        return result

    def verdict(self) -> str | None:
        return self.page.evaluate(
            """() => { const v = document.querySelector('.ag-verdict');
                 return v && !v.hidden ? v.dataset.verdict + ':' + v.innerText : null; }"""
        )
