"""The keys of docs/card.md's table in Chromium (Playwright's key events, default actions
included): Space and Enter go on to the client, to show the answer, after the card's
own keys or a click; after Tab, Space acts on the focused control.

The client here is a listener on the window, after the card's, as AnkiWeb's and
AnkiDroid's own key handlers are: it hears a key the card leaves alone. The desktop's
rows, with real X keys, are in tests/card/test_desktop_keys.py."""

from __future__ import annotations

from typing import Any

from tests.support.browser import Client
from tests.support.cardkeys import CHECKED_CHOICES, FOCUSED_CHOICE, HEAR_CLIENT_KEYS


def start(client: Client, item_id: str) -> list[int]:
    client.desktop()
    client.page.evaluate(HEAR_CLIENT_KEYS)
    client.show_question(item_id)
    client.page.mouse.move(1, 1)
    return client.front_order()


def heard(client: Client) -> list[Any]:
    result: list[Any] = client.page.evaluate("window.__heard.splice(0)")
    return result


def checked(client: Client) -> list[int]:
    return sorted(client.page.evaluate(CHECKED_CHOICES))


def tab_to_choice(client: Client) -> int:
    for _ in range(8):
        client.page.keyboard.press("Tab")
        number: int = client.page.evaluate(FOCUSED_CHOICE)
        if number:
            return number
    raise AssertionError("Tab never reached a choice")


def test_after_the_cards_own_keys_space_and_enter_go_to_the_client(client: Client) -> None:
    order = start(client, "single")
    client.page.keyboard.press("ArrowDown")
    client.page.keyboard.press("ArrowDown")
    assert checked(client) == [order[1]]
    client.page.keyboard.press(" ")
    assert heard(client) == [[" ", False, False]]  # on to the client; nothing clicked
    assert checked(client) == [order[1]]

    order = start(client, "multi")
    client.page.keyboard.press("ArrowDown")
    client.page.keyboard.press("x")
    client.page.keyboard.press(" ")  # before, Space toggled the pick off again
    assert heard(client) == [[" ", False, False]]
    assert checked(client) == [order[0]]

    order = start(client, "multi")
    client.page.keyboard.press("Alt+2")
    assert checked(client) == sorted([order[1]])
    client.page.keyboard.press("Enter")
    assert heard(client) == [["Enter", False, False]]
    assert checked(client) == [order[1]]


def test_after_a_click_space_and_enter_go_to_the_client(client: Client) -> None:
    order = start(client, "multi")
    client.pick(order[2])
    client.page.keyboard.press(" ")
    assert heard(client) == [[" ", False, False]]
    assert checked(client) == [order[2]]
    client.pick(order[3])
    client.page.keyboard.press("Enter")
    assert heard(client) == [["Enter", False, False]]
    assert checked(client) == sorted([order[2], order[3]])


def test_after_tab_space_acts_on_the_choice(client: Client) -> None:
    start(client, "multi")
    first = tab_to_choice(client)
    client.page.keyboard.press(" ")
    assert checked(client) == [first]
    client.page.keyboard.press(" ")
    assert checked(client) == []
    assert heard(client) == []  # the card's, not the client's
    client.page.keyboard.press("Enter")  # Enter never toggles: it shows the answer
    assert heard(client) == [["Enter", False, False]]
    assert checked(client) == []

    start(client, "single")
    first = tab_to_choice(client)
    client.page.keyboard.press(" ")
    assert checked(client) == [first] and heard(client) == []


def test_after_tab_enter_picks_the_single_answer_then_shows_it(client: Client) -> None:
    start(client, "single")
    first = tab_to_choice(client)
    assert checked(client) == []
    client.page.keyboard.press("Enter")
    assert checked(client) == [first]
    assert heard(client) == [["Enter", False, False]]


def test_arrows_after_tab_give_space_back_and_escape_hands_the_keys_back(
    client: Client,
) -> None:
    order = start(client, "multi")
    tab_to_choice(client)
    client.page.keyboard.press("ArrowDown")  # the card's key: Space is the client's again
    client.page.keyboard.press(" ")
    assert heard(client) == [[" ", False, False]] and checked(client) == []

    start(client, "multi")
    tab_to_choice(client)
    client.page.keyboard.press("Escape")
    assert client.page.evaluate("document.activeElement === document.body")
    client.page.keyboard.press(" ")
    assert heard(client) == [[" ", False, False]] and checked(client) == []
    assert order  # the front was shown
