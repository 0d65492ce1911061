"""`ankigen pull anki`: the notes of a running Anki, through AnkiConnect, here a stand-in
that answers as AnkiConnect does from a real collection (its `exportPackage` is Anki's
legacy exporter of one deck, as AnkiConnect's is)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ankigen.bank.reader import load_bank
from tests.helpers import AnkiCollection, edit, invoke
from tests.support.ankiconnect import answer, asked


class AnkiConnectOf(BaseHTTPRequestHandler):
    """AnkiConnect's answers to the actions `pull` asks, from `collection`."""

    collection: AnkiCollection

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        request = asked(self)
        col, params = self.collection.col, request.get("params", {})
        result: Any = None
        if request["action"] == "version":
            result = 6
        elif request["action"] == "deckNames":
            result = [deck.name for deck in col.decks.all_names_and_ids()]
        elif request["action"] == "findCards":
            result = list(col.find_cards(params["query"]))
        elif request["action"] == "cardsInfo":
            result = [
                {"cardId": card, "deckName": col.decks.name(col.get_card(card).did)}
                for card in params["cards"]
            ]
        elif request["action"] == "exportPackage":  # AnkiConnect's own way
            from anki.exporting import AnkiPackageExporter

            exporter = AnkiPackageExporter(col)
            exporter.did = col.decks.by_name(params["deck"])["id"]
            exporter.includeSched = params.get("includeSched", False)
            exporter.exportInto(params["path"])
            result = True
        answer(self, result)


@pytest.fixture
def anki_connect(imported: AnkiCollection) -> Iterator[str]:
    handler = type("Handler", (AnkiConnectOf,), {"collection": imported})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join(5)


def test_a_fix_made_while_the_cards_are_in_a_filtered_deck_is_pulled(
    project: Path, runner: CliRunner, imported: AnkiCollection, anki_connect: str
) -> None:
    """A learner in a Custom Study session fixes a question: the cards are in the
    filtered deck, and Anki's exporter takes a deck's cards by the deck they are in, so
    `pull anki` found nothing to pull. The filtered decks holding the deck's cards are
    exported too."""
    col = imported.col
    session = col.decks.new_filtered("Custom Study Session")
    deck = col.decks.get(session)
    deck["terms"] = [['deck:"demo quiz (en)"', 100, 0]]
    col.decks.save(deck)
    col.sched.rebuild_filtered_deck(session)
    moved = [col.get_card(card).did for card in col.find_cards("")]
    assert set(moved) == {session}  # the control: every card is in the filtered deck
    edit(imported, "one", Question="Which collective sums over all ranks?")
    pulled = invoke(runner, "pull", "anki", "--url", anki_connect)
    assert pulled.exit_code == 0, pulled.output
    bank, _ = load_bank(project / "banks" / "demo" / "en.yaml")
    assert bank is not None and bank.items[0].question == "Which collective sums over all ranks?"


def test_notes_whose_cards_left_the_deck_are_named_not_passed_over(
    runner: CliRunner, imported: AnkiCollection, anki_connect: str
) -> None:
    """A learner moved a card to a deck of their own: its note is in no deck the pull
    exports, and the pull said "nothing to pull", a fix on it lost unsaid. It says how
    many notes of the deck were not found, and how to pull them."""
    col = imported.col
    mine = col.decks.id("My hard ones")
    card = col.get_card(col.find_cards("")[0])
    card.did = mine
    col.update_card(card)
    pulled = invoke(runner, "pull", "anki", "--url", anki_connect)
    assert pulled.exit_code == 0, pulled.output
    assert (
        "1 note of the deck 'demo quiz (en)' not in it in Anki (cards moved to another deck, "
        "or notes deleted): nothing pulled from them; export the deck they are in and pull "
        "that file"
    ) in pulled.stderr
