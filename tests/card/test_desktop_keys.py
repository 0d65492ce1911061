"""The keys of docs/card.md's table in the real Anki desktop, with real X key events
(xdotool under Xvfb): after the card's own keys or a click, Space and Enter reach Anki's
reviewer and show the answer; after Tab, Space acts on the focused control and Enter
shows the answer, picking a focused single answer first; Escape hands the keys back.

A key the card must leave to Anki is proved by the back that Anki then shows, with the
picks as they were: had the card taken Space, the card would still be on its question."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.desktop.harness import AnkiDesktop, with_decks
from tests.desktop.reviewer import (
    assert_no_console_errors,
    back,
    open_front,
    pick,
    show_answer,
)
from tests.helpers import item
from tests.support.cardkeys import CHECKED_CHOICES, FOCUSED_CHOICE

DECKS = {
    "single": ("en", item("single", answer=2)),
    "multi": ("en", item("multi", answer=[1, 3], choices=5)),
}


@pytest.fixture(scope="module")
def anki(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AnkiDesktop]:
    yield from with_decks(tmp_path_factory.mktemp("keys"), DECKS, 800, 560)


def review(anki: AnkiDesktop, topic: str) -> list[int]:
    """Open a deck's only card in the reviewer, the pointer on its question; the order."""
    order = open_front(anki, topic, DECKS[topic][0])
    anki.move_to(".ag-front .ag-question")
    return order


def picked_on_back(anki: AnkiDesktop) -> list[int]:
    return sorted(c[0] for c in back(anki)["choices"] if c[2] == "true")


def wait_checked(anki: AnkiDesktop, numbers: list[int]) -> None:
    expected = json.dumps(sorted(numbers), separators=(",", ":"))  # as JSON.stringify writes
    anki.wait_for(f"JSON.stringify({CHECKED_CHOICES}) === {json.dumps(expected)}",
                  timeout=10, what=f"choices {expected} checked")  # fmt: skip


def tab_to_choice(anki: AnkiDesktop) -> int:
    for _ in range(8):
        anki.key("Tab")
        number: int = anki.eval(FOCUSED_CHOICE)
        if number:
            return number
    raise AssertionError("Tab never reached a choice")


def test_after_the_cards_keys_space_and_enter_show_the_answer(anki: AnkiDesktop) -> None:
    order = review(anki, "single")
    anki.key("Down", "Down")
    wait_checked(anki, [order[1]])
    show_answer(anki, "space")  # before, Space "acted" on the picked choice: no answer
    assert picked_on_back(anki) == [order[1]]

    order = review(anki, "multi")
    anki.key("Down", "x")
    wait_checked(anki, [order[0]])
    show_answer(anki, "space")  # before, Space undid the pick
    assert picked_on_back(anki) == [order[0]]

    order = review(anki, "multi")
    anki.key("alt+2")
    wait_checked(anki, [order[1]])
    show_answer(anki, "Return")
    assert picked_on_back(anki) == [order[1]]
    assert_no_console_errors(anki)


def test_after_a_click_space_and_enter_show_the_answer(anki: AnkiDesktop) -> None:
    order = review(anki, "multi")
    pick(anki, order[2])
    show_answer(anki, "space")
    assert picked_on_back(anki) == [order[2]]

    order = review(anki, "multi")
    pick(anki, order[3])
    show_answer(anki, "Return")
    assert picked_on_back(anki) == [order[3]]
    assert_no_console_errors(anki)


def test_after_tab_space_acts_and_enter_shows_the_answer(anki: AnkiDesktop) -> None:
    review(anki, "multi")
    first = tab_to_choice(anki)
    anki.key("space")
    wait_checked(anki, [first])
    anki.key("space")
    wait_checked(anki, [])
    anki.key("space")
    wait_checked(anki, [first])
    assert anki.call("state")["side"] == "question"
    show_answer(anki, "Return")  # Enter never toggles: it shows the answer
    assert picked_on_back(anki) == [first]

    review(anki, "single")
    first = tab_to_choice(anki)
    wait_checked(anki, [])
    show_answer(anki, "Return")  # picks the focused single answer, then shows it
    assert picked_on_back(anki) == [first]
    assert_no_console_errors(anki)


def test_arrows_after_tab_and_escape_give_space_back_to_anki(anki: AnkiDesktop) -> None:
    order = review(anki, "multi")
    tab_to_choice(anki)
    anki.key("Down")  # the card's key: Space is Anki's again
    show_answer(anki, "space")
    assert picked_on_back(anki) == []

    order = review(anki, "single")
    first = tab_to_choice(anki)
    anki.key("space")
    wait_checked(anki, [first])
    anki.key("Escape")
    anki.wait_for("document.activeElement === document.body", what="the focus given back")
    show_answer(anki, "space")
    assert picked_on_back(anki) == [first]
    assert order
    assert_no_console_errors(anki)
