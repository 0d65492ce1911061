"""Real quiz files in, faithfully: what the source shows is what the card shows.

Expectations follow Moodle's own importers (question/format/{gift,xml,aiken}/format.php)
and how Moodle then displays each text format: HTML and Moodle's own format are HTML,
plain text is text.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ankigen.bank.model import Bank
from ankigen.bank.reader import parse_bank
from ankigen.formats.convert import import_file
from ankigen.text.html import inline_html, plain_text

DATA = Path(__file__).parent / "data" / "fidelity"


def imported(name: str) -> Bank:
    done = import_file(DATA / name, "t", "en", None)
    text = re.sub(r'explanation: ""  # TODO.*', 'explanation: "x"', done.bank)
    bank, problems = parse_bank("b.yaml", text.encode())
    assert bank is not None, problems
    return bank


def shown(bank: Bank) -> list[tuple[str, ...]]:
    """Each item's question and choices as the card's reader sees them."""
    return [(plain_text(i.question), *map(plain_text, i.choices)) for i in bank.items]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (
            "tags-as-text.xml",
            [
                (
                    "What does <code> mark? It is inline & short.",
                    "Code, as in <code>x</code>",
                    "A break: <br>",
                ),
                ("What does <br> do? And &lt;b&gt;?", "<br> breaks a line", "<b> makes a break"),
            ],
        ),
        (
            "tags-as-text.gift",
            [
                (
                    "What does <b> do in HTML?",
                    "It makes text bold, as this",
                    "It breaks a line like <br>",
                ),
                ("What does <br> do?", "It breaks a line: <br>", "It makes <b>bold</b>"),
            ],
        ),
        (
            "tags-as-text.aiken",
            [("What does <br> do in HTML?", "It breaks a line", "It makes text <b>bold</b>")],
        ),
    ],
)
def test_tag_names_shown_as_text_stay_text(name: str, expected: list[tuple[str, ...]]) -> None:
    assert shown(imported(name)) == expected


def test_only_real_markup_becomes_the_cards_markup() -> None:
    bank = imported("tags-as-text.xml")
    html = inline_html(bank.items[0].question)
    assert html == "What does &lt;code&gt; mark? It is <b>inline</b> &amp; short."
    assert (
        inline_html(bank.items[0].choices[0])
        == "Code, as in <code>&lt;code&gt;x&lt;/code&gt;</code>"
    )
    gift = imported("tags-as-text.gift")
    assert inline_html(gift.items[1].choices[1]) == "It makes &lt;b&gt;bold&lt;/b&gt;"
