"""Fixtures of the card's engines: the deck most card tests run, served, and a tab on it.

Every test in this folder drives a browser, WebKit or the Anki desktop, and is marked
gui (tests/conftest.py)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from tests.helpers import REPO
from tests.support.browser import Client, anki_rendered_sides, serve_cards, write_card_banks


@pytest.fixture(scope="module")
def site(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[str, dict[str, tuple[str, str]]]]:
    """Build a deck, import it into real Anki, and serve each card's sides on 127.0.0.1."""
    root = tmp_path_factory.mktemp("card")
    project = root / "project"
    banks = project / "banks"
    banks.mkdir(parents=True)
    write_card_banks(banks)
    sides = anki_rendered_sides(project, root / "anki")
    with serve_cards(root / "web", sides, ["desktop.html"]) as base:
        yield base, sides


@pytest.fixture
def client(chromium: Any, site: tuple[str, dict[str, tuple[str, str]]]) -> Iterator[Client]:
    """A tab on `site` that fails the test on any JavaScript error."""
    base, sides = site
    tab = Client(chromium, base, sides)
    yield tab
    tab.close()


@pytest.fixture(scope="module")
def shipped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, list[str]]]:
    """Every shipped card's sides served as pages; yields the base URL and the card keys
    (ITEM.LANGUAGE.DECK), each deck's first card first."""
    root = tmp_path_factory.mktemp("shipped-layout")
    shutil.copytree(REPO / "banks", root / "project" / "banks")
    sides = anki_rendered_sides(
        root / "project",
        root / "anki",
        lambda card: f"{card.note()['ItemId']}.{card.note()['Language']}.{card.did}",
    )
    firsts: dict[str, str] = {}
    for key in sides:
        firsts.setdefault(key.rsplit(".", 1)[1], key)
    keys = list(firsts.values()) + [k for k in sides if k not in firsts.values()]
    with serve_cards(root / "web", sides, []) as base:
        yield base, keys
