"""The card in WebKit, the engine of AnkiMobile and of Safari on AnkiWeb.

Debian's WebKitGTK, through its own Python (tests/webkit/driver.py) under
Xvfb, on the cards that the `site` fixture (tests/card/conftest.py) has the Anki backend render: the front
is picked, the back is a freshly loaded page that must find the front's state.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import TESTS
from tests.support import gui
from tests.support.adopt import GENANKI_KEPT
from tests.support.browser import anki_rendered_sides, serve_cards
from tests.support.cardkeys import CHECKED_CHOICES, FOCUSED_CHOICE, HEAR_CLIENT_KEYS

DRIVER = TESTS / "webkit" / "driver.py"
SYSTEM_PYTHON = "/usr/bin/python3"


class WebKitError(Exception):
    """WebKit did not start, or did not answer in time."""


class WebKit:
    """One WebKitGTK view in a driver process, spoken to in JSON lines."""

    def __init__(self, size: str = "390x844") -> None:
        gui.check("WebKit")
        if shutil.which("xvfb-run") is None or not Path(SYSTEM_PYTHON).exists():
            pytest.fail(
                "the WebKit tests need xvfb-run, python3-gi and gir1.2-webkit2-4.1 (apt); `bash .ci/run` installs them"
            )
        env = dict(os.environ, WEBKIT_DISABLE_COMPOSITING_MODE="1", GDK_BACKEND="x11")
        env.pop("PYTHONPATH", None)
        self.process = subprocess.Popen(
            ["xvfb-run", "-a", SYSTEM_PYTHON, str(DRIVER), size],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            start_new_session=True,
        )
        self.version = self._answer()
        self.loaded = ""

    def _answer(self) -> Any:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()  # the driver times every request out after 30 s
        if not line:
            self.process.wait(10)
            assert self.process.stderr is not None
            raise WebKitError(f"the WebKit driver exited: {self.process.stderr.read()[-3000:]}")
        reply = json.loads(line)
        if "error" in reply:
            raise WebKitError(reply["error"])
        return reply["result"]

    def request(self, **request: str) -> Any:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        return self._answer()

    def load(self, url: str) -> None:
        """Load a page, after checking the one shown had no JavaScript errors."""
        if self.loaded:
            assert self.eval("window.__agErrors") == [], self.loaded
        self.request(load=url)
        self.loaded = url

    def eval(self, js: str) -> Any:
        return self.request(eval=js)

    def keys(self, keys: str) -> None:
        """Press and release keys, by GDK name ("Down x space alt+2"), one at a time."""
        self.request(keys=keys)

    def wait_for(self, js: str, what: str, timeout: float = 10) -> Any:
        """Poll an expression until it is truthy (WebKit's page handles keys on its own time)."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.eval(js)
            if value:
                return value
            if time.monotonic() > deadline:
                raise WebKitError(f"timed out after {timeout} s waiting for {what}: {js}")
            time.sleep(0.05)

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, 9)
            self.process.wait(10)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture(scope="module")
def webkit() -> Iterator[WebKit]:
    view = WebKit()
    yield view
    view.close()


@pytest.fixture
def base(site: tuple[str, dict[str, tuple[str, str]]], webkit: WebKit) -> Iterator[str]:
    yield site[0]
    assert webkit.eval("window.__agErrors") == []


FRONT_ORDER = "[].map.call(document.querySelectorAll('.ag-front button.ag-choice'), function (b) { return +b.dataset.choice; })"
BACK = """(function () { var v = document.querySelector('.ag-verdict');
    return {verdict: v.hidden ? null : v.dataset.verdict, text: v.innerText.trim(),
            choices: [].map.call(document.querySelectorAll('.ag-back .ag-choices .ag-choice'), function (e) {
                return [+e.dataset.choice, e.dataset.correct, e.dataset.picked, e.querySelector('.ag-mark').textContent];
            })}; })()"""


def click(webkit: WebKit, choice: int) -> None:
    webkit.eval(
        f"document.querySelector('.ag-front button.ag-choice[data-choice=\"{choice}\"]').click()"
    )


def test_webkit_carries_a_wrong_pick_to_a_freshly_loaded_back(webkit: WebKit, base: str) -> None:
    assert webkit.version.startswith("WebKitGTK")
    webkit.load(f"{base}/front-single.html")
    order = webkit.eval(FRONT_ORDER)
    assert sorted(order) == [1, 2, 3, 4]
    click(webkit, 1)
    click(webkit, 3)
    assert webkit.eval("document.querySelectorAll('[aria-checked=\"true\"]').length") == 1
    webkit.load(f"{base}/back-single.html")
    back = webkit.eval(BACK)
    assert back["verdict"] == "incorrect" and back["text"] == "✗ Incorrect"
    assert back["choices"] == [
        [
            n,
            "true" if n == 2 else "false",
            "true" if n == 3 else "false",
            {2: "!", 3: "✗"}.get(n, ""),
        ]
        for n in order
    ]


def test_webkit_multi_answer_partly_correct(webkit: WebKit, base: str) -> None:
    webkit.load(f"{base}/front-multi.html")
    assert (
        webkit.eval("document.querySelector('.ag-front .ag-choices').getAttribute('role')")
        == "group"
    )
    click(webkit, 1)
    click(webkit, 2)
    webkit.load(f"{base}/back-multi.html")
    back = webkit.eval(BACK)
    assert back["verdict"] == "partial"
    missed = webkit.eval(
        "document.querySelector('.ag-back .ag-choice[data-choice=\"3\"] .ag-status').innerText"
    )
    assert "Missed" in missed


def test_webkit_right_to_left_and_mixed_direction(webkit: WebKit, base: str) -> None:
    webkit.load(f"{base}/front-rtl.html")
    layout = webkit.eval(
        """(function () { var b = document.querySelector('.ag-front button.ag-choice');
            return [getComputedStyle(b).direction,
                    b.querySelector('.ag-marker').getBoundingClientRect().x >
                    b.querySelector('.ag-text').getBoundingClientRect().x]; })()"""
    )
    assert layout == ["rtl", True]
    click(webkit, 1)
    webkit.load(f"{base}/back-rtl.html")
    assert webkit.eval(BACK)["text"] == "✓ درست"
    webkit.load(f"{base}/front-mixed.html")
    question = webkit.eval(
        """(function () { var q = document.querySelector('.ag-question'), s = getComputedStyle(q);
            var t = q.firstChild, r = document.createRange();
            r.setStart(t, t.length - 2); r.setEnd(t, t.length - 1); var before = r.getBoundingClientRect().x;
            r.setStart(t, t.length - 1); r.setEnd(t, t.length);
            return [s.direction, s.textAlign, r.getBoundingClientRect().x > before]; })()"""
    )
    assert question == ["ltr", "right", True]


def test_webkit_back_without_state_marks_the_authors_order(webkit: WebKit, base: str) -> None:
    webkit.eval("sessionStorage.clear()")
    webkit.load(f"{base}/back-fixed.html")
    back = webkit.eval(BACK)
    assert back["verdict"] is None
    assert [c[0] for c in back["choices"]] == [1, 2, 3, 4]
    assert [c[0] for c in back["choices"] if c[1] == "true"] == [4]


@pytest.fixture(scope="module")
def kept_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A deck keeping an adopted note type (`anki_notetype:`), its Urdu card as Anki
    renders it, served as the `site` fixture serves its cards."""
    from tests.helpers import item, write_bank

    root = tmp_path_factory.mktemp("webkit-kept")
    project = root / "project"
    urdu = item("urdu", answer=3, choices=3, shuffle=False, question="کون سا درست ہے؟")
    write_bank(project / "banks", "kept", "ur", items=[urdu], anki_notetype=GENANKI_KEPT)
    sides = anki_rendered_sides(project, root / "anki", key=lambda card: "urdu")
    with serve_cards(root / "web", sides, []) as served:
        yield served


def test_webkit_draws_a_kept_note_types_card_right_to_left(webkit: WebKit, kept_site: str) -> None:
    webkit.load(f"{kept_site}/front-urdu.html")
    assert webkit.eval("document.querySelector('.ag-card').getAttribute('dir')") == "rtl"
    assert webkit.eval(FRONT_ORDER) == [1, 2, 3]
    click(webkit, 3)
    webkit.load(f"{kept_site}/back-urdu.html")
    back = webkit.eval(BACK)
    assert back["verdict"] == "correct"
    assert [c[1] for c in back["choices"]] == ["false", "false", "true"]


# docs/card.md's table of keys, with key events as GTK delivers a keyboard's. The client
# is a listener on the window, after the card's: it hears each Space or Enter the card
# leaves to it (whether the card prevented it, whether a control of the card kept focus).


def front(webkit: WebKit, base: str, item_id: str) -> list[int]:
    webkit.load(f"{base}/front-{item_id}.html")
    webkit.eval(HEAR_CLIENT_KEYS)
    order: list[int] = webkit.eval(FRONT_ORDER)
    return order


def heard(webkit: WebKit, count: int) -> list[Any]:
    webkit.wait_for(f"window.__heard.length >= {count}", what=f"{count} keys heard by the client")
    result: list[Any] = webkit.eval("window.__heard.splice(0)")
    return result


def checked(webkit: WebKit, numbers: list[int]) -> None:
    expected = json.dumps(sorted(numbers), separators=(",", ":"))
    webkit.wait_for(
        f"JSON.stringify({CHECKED_CHOICES}) === {json.dumps(expected)}",
        what=f"choices {expected} checked",
    )


def test_webkit_keys_after_the_cards_own_keys_or_a_click(webkit: WebKit, base: str) -> None:
    order = front(webkit, base, "single")
    webkit.keys("Down Down")
    checked(webkit, [order[1]])
    webkit.keys("space")
    assert heard(webkit, 1) == [[" ", False, False]]  # on to the client, nothing clicked
    checked(webkit, [order[1]])

    order = front(webkit, base, "multi")
    webkit.keys("Down x space")
    assert heard(webkit, 1) == [[" ", False, False]]
    checked(webkit, [order[0]])  # before, Space undid the pick
    webkit.keys("alt+3 Return")
    assert heard(webkit, 1) == [["Enter", False, False]]
    checked(webkit, [order[0], order[2]])

    order = front(webkit, base, "multi")
    click(webkit, order[1])
    webkit.keys("space Return")
    assert heard(webkit, 2) == [[" ", False, False], ["Enter", False, False]]
    checked(webkit, [order[1]])


def test_webkit_keys_after_tab_and_escape(webkit: WebKit, base: str) -> None:
    front(webkit, base, "multi")
    webkit.keys("Tab")
    first = webkit.wait_for(FOCUSED_CHOICE, what="Tab on a choice")
    webkit.keys("space")
    checked(webkit, [first])
    webkit.keys("space")
    checked(webkit, [])
    webkit.keys("space Return")  # Space toggles; Enter shows the answer, toggling nothing
    assert heard(webkit, 1) == [["Enter", False, False]]
    checked(webkit, [first])

    front(webkit, base, "single")
    webkit.keys("Tab")
    first = webkit.wait_for(FOCUSED_CHOICE, what="Tab on a choice")
    webkit.keys("Return")  # picks the focused single answer, then shows the answer
    assert heard(webkit, 1) == [["Enter", False, False]]
    checked(webkit, [first])

    front(webkit, base, "multi")
    webkit.keys("Tab Escape")
    webkit.wait_for("document.activeElement === document.body", what="the keys handed back")
    webkit.keys("space")
    assert heard(webkit, 1) == [[" ", False, False]]
    checked(webkit, [])
