"""The deck description people see in Anki and on AnkiWeb, with localized headings."""

from __future__ import annotations

import html
from collections.abc import Sequence

from ankigen.apkg.note import RETIRED_TAG, NoteContent
from ankigen.bank.model import Bank
from ankigen.core.hashing import content_hash
from ankigen.text import l10n
from ankigen.text.html import inline_html


def content_version(contents: Sequence[NoteContent]) -> str:
    """A short hash of every note's content, so people sharing a deck can tell versions apart."""
    return content_hash(*(f"{c.guid}:{c.hash}" for c in sorted(contents, key=lambda c: c.guid)))[
        :10
    ]


def deck_description(bank: Bank, contents: Sequence[NoteContent], version: str = "") -> str:
    def word(key: str) -> str:
        return html.escape(l10n.deck_word(bank.language, key))

    rows = [f"<p><b>{inline_html(bank.title)}</b></p>"]
    if bank.description:
        rows.append(f"<p>{inline_html(bank.description)}</p>")
    if bank.level:
        rows.append(f"<p>{word('level')}: {inline_html(bank.level)}</p>")
    retired = sum(item.retired for item in bank.items)
    rows.append(
        f"<p>{word('items')}: {len(bank.items) - retired} · "
        f"{word('language')}: {html.escape(l10n.language_name(bank.language))}</p>"
    )
    if retired:
        rows.append(
            f'<p>{word("retired_items")}: {retired} (<code dir="ltr">tag:{RETIRED_TAG}</code>)</p>'
        )
    if bank.source:
        rows.append(f"<p>{word('source')}: {inline_html(bank.source)}</p>")
    if bank.license:
        rows.append(f"<p>{word('license')}: {inline_html(bank.license)}</p>")
    shown = version or content_version(contents)
    rows.append(f"<p>{word('version')}: <code>{html.escape(shown)}</code></p>")
    return (
        f'<div class="ag-deck" lang="{bank.language}" dir="{bank.direction}">'
        + "".join(rows)
        + "</div>"
    )
