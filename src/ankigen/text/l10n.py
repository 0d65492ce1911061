"""Every localized word ankigen writes: the card's own words, the deck descriptions',
the release notes' headings, language names, and the two choices of an imported
true/false question. The words are data (`words.json`, shipped with the package), read
once, when first asked for.

The card chooses among its words with CSS on its `lang` attribute, so they show
without JavaScript and no author text is ever placed in a script.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

from ankigen.text.lang import primary_language

FALLBACK = "en"
"""The language of a word a language lacks."""

WORDS_PATH = Path(__file__).with_name("words.json")


@functools.cache
def _words() -> dict[str, dict[str, object]]:
    # beside this module, as setuptools installs package data (see `apkg.notetype._read`)
    text = WORDS_PATH.read_text("utf-8")
    found: dict[str, dict[str, object]] = json.loads(text)
    return found


def _in(table: str, language: str) -> object:
    words = _words()[table]
    return words.get(primary_language(language), words[FALLBACK])


@functools.cache  # asked once for each phrase of the note type's templates
def card_words() -> dict[str, dict[str, str]]:
    """The card's words: language -> key -> word, English first."""
    words = _words()["card"]
    return {code: dict(entries) for code, entries in words.items()}  # type: ignore[call-overload]


def card_keys() -> tuple[str, ...]:
    return tuple(card_words()[FALLBACK])


def phrase(key: str) -> str:
    """One UI phrase in every language; the card's CSS shows the one for its language."""
    import html  # here: a build with nothing to do reads this module, not the templates

    spans = "".join(
        f'<span lang="{code}">{html.escape(words[key])}</span>'
        for code, words in card_words().items()
    )
    return f'<span class="ag-t" data-k="{key}">{spans}</span>'


def phrases_block() -> str:
    """Every phrase, hidden, for the script to copy from."""
    return '<div class="ag-l10n" hidden>' + "".join(phrase(k) for k in card_keys()) + "</div>"


def css() -> str:
    """Show the phrase in the card's language, English where it has none."""
    others = [code for code in card_words() if code != FALLBACK]
    known = ",\n".join(f'.ag-card[lang|="{code}"] .ag-t > [lang="{FALLBACK}"]' for code in others)
    rules = [
        ".ag-t > [lang] { display: none; }",
        f'.ag-t > [lang="{FALLBACK}"] {{ display: inline; }}',
        f"{known} {{ display: none; }}",
    ]
    rules.extend(
        f'.ag-card[lang|="{code}"] .ag-t > [lang="{code}"] {{ display: inline; }}'
        for code in others
    )
    return "\n".join(rules) + "\n"


def deck_word(language: str, key: str) -> str:
    """A heading of the generated deck description (plain text). `retired` is the
    notice on a retired card; its {search} is replaced by the search that finds such
    cards, the same in every language."""
    words = _in("deck", language)
    assert isinstance(words, dict)
    return str(words[key])


def heading(language: str, key: str) -> str:
    """A heading of the release notes."""
    words = _in("release_notes", language)
    assert isinstance(words, dict)
    return str(words[key])


def language_name(language: str) -> str:
    names = _words()["language_names"]
    return str(names.get(primary_language(language), language))


def true_false(language: str) -> tuple[str, str]:
    """ "True" and "False" in the language, English for languages not listed."""
    pair = _in("true_false", language)
    assert isinstance(pair, list)
    return str(pair[0]), str(pair[1])


def partial_credit(language: str, percent: str) -> str:
    """How a choice's `why` starts when the source gave it part of the credit."""
    pattern = _in("partial_credit", language)
    assert isinstance(pattern, str)
    return pattern.format(percent=percent)
