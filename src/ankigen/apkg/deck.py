"""The deck description people see in Anki and on AnkiWeb, with localized headings."""

from __future__ import annotations

import html
from collections.abc import Sequence

from ankigen.apkg.note import RETIRED_TAG, NoteContent
from ankigen.bank.model import Bank
from ankigen.core.hashing import content_hash
from ankigen.identity.guid import named_deck_id
from ankigen.text import l10n
from ankigen.text.html import inline_html, plain_text


def content_version(contents: Sequence[NoteContent]) -> str:
    """A short hash of every note's content, so people sharing a deck can tell versions apart."""
    return content_hash(*(f"{c.guid}:{c.hash}" for c in sorted(contents, key=lambda c: c.guid)))[
        :10
    ]


def deck_description(bank: Bank, contents: Sequence[NoteContent], version: str = "") -> str:
    def word(key: str) -> str:
        return _word(bank.language, key)

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


def parent_decks(
    banks: Sequence[Bank], versions: dict[str, str], reference: str = ""
) -> dict[str, tuple[tuple[int, str, str], ...]]:
    """bank key -> its parent deck as (id, name, description), for decks that have one.

    The description names the topic, lists the decks under the parent with
    their languages and versions, in the reference language's words.
    """
    own = {plain_text(b.deck_name) for b in banks}
    groups: dict[str, list[Bank]] = {}
    for bank in banks:
        name = plain_text(bank.deck_name)
        if "::" in name:
            groups.setdefault(name.rsplit("::", 1)[0], []).append(bank)
    out: dict[str, tuple[tuple[int, str, str], ...]] = {}
    for parent, children in groups.items():
        if parent in own:
            continue  # that deck has its own description
        description = _parent_description(parent, children, versions, reference or "en")
        entry = ((named_deck_id(parent), parent, description),)
        for bank in children:
            out[bank.key] = entry
    return out


def _parent_description(
    parent: str, children: Sequence[Bank], versions: dict[str, str], language: str
) -> str:
    def word(key: str) -> str:
        return _word(language, key)

    topics = sorted({b.topic for b in children})
    rows = [f"<p><b>{html.escape(parent.rsplit('::', 1)[-1])}</b></p>"]
    rows.append(f"<p>{html.escape(', '.join(topics))}</p>")
    items = []
    for bank in sorted(children, key=lambda b: (b.language != language, b.language, b.topic)):
        items.append(
            f'<li><span lang="{html.escape(bank.language)}">'
            f"{html.escape(l10n.language_name(bank.language))}</span>: "
            f'<span lang="{html.escape(bank.language)}">{inline_html(bank.title)}</span> · '
            f"{word('version')} <code>{html.escape(versions.get(bank.key, ''))}</code></li>"
        )
    rows.append(f"<p>{word('language')}:</p><ul>{''.join(items)}</ul>")
    return '<div class="ag-deck ag-parent">' + "".join(rows) + "</div>"


def _word(language: str, key: str) -> str:
    """A word of the deck descriptions in `language`, as HTML."""
    return html.escape(l10n.deck_word(language, key))
