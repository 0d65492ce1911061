"""Untranslated text: scripts that do not fit the language, texts left as the reference
wrote them, language identification where scripts cannot tell; and which bank is a
topic's reference."""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from ankigen.bank.model import Bank, Item
from ankigen.core.errors import Diagnostic
from ankigen.text import lang, langid, markup

# The script a language is written in, by the first word of Unicode character
# names (which follow the Script property for letters). Languages not listed
# are not checked.
EXPECTED_SCRIPT = {
    "bn": "BENGALI",
    "as": "BENGALI",
    "hi": "DEVANAGARI",
    "mr": "DEVANAGARI",
    "ne": "DEVANAGARI",
    "ur": "ARABIC",
    "ar": "ARABIC",
    "fa": "ARABIC",
    "ps": "ARABIC",
    "he": "HEBREW",
    "ru": "CYRILLIC",
    "uk": "CYRILLIC",
    "bg": "CYRILLIC",
    "el": "GREEK",
    "ta": "TAMIL",
    "te": "TELUGU",
    "th": "THAI",
    "ko": "HANGUL",
    "am": "ETHIOPIC",
    "ka": "GEORGIAN",
    "hy": "ARMENIAN",
    "zh": "CJK",
    "ja": "CJK HIRAGANA KATAKANA",
    "en": "LATIN",
    "de": "LATIN",
    "fr": "LATIN",
    "es": "LATIN",
    "pt": "LATIN",
    "yo": "LATIN",
    "wo": "LATIN",
}


def sources_for(reference: str) -> tuple[str, ...]:
    """The languages texts are translated from: English and the project's reference."""
    return tuple(dict.fromkeys((*SOURCES, *([reference] if reference else []))))


_SCRIPT_OF: dict[str, str] = {}


_TAG = re.compile(r"<[^>]*>")


def _script(char: str) -> str:
    script = _SCRIPT_OF.get(char)
    if script is None:
        name = unicodedata.name(char, "")
        script = _SCRIPT_OF[char] = name.split(" ")[0] if name else "UNKNOWN"
    return script


def foreign_script(text: str, language: str) -> str | None:
    """The script most words of `text` are written in, when it is not the language's own.

    Words, not letters, are counted (each by its first letter), so a long
    product name such as "DistributedDataParallel" does not outweigh the
    sentence around it.
    """
    expected = EXPECTED_SCRIPT.get(lang.primary_language(language))
    if expected is None or (expected == "LATIN" and text.isascii()):
        return None
    words: dict[str, int] = {}
    for word in _TAG.sub(" ", text).split():
        for char in word:
            if char.isalpha():
                script = _script(char)
                words[script] = words.get(script, 0) + 1
                break
    if not words:
        return None
    own = sum(n for script, n in words.items() if script in expected.split())
    if own * 2 >= sum(words.values()):
        return None
    return max(words, key=lambda script: words[script])


SOURCES = ("en",)
"""Languages texts are translated from, besides the topic's reference language."""


@dataclass(frozen=True)
class Untranslated:
    """One text of an item that looks untranslated, and why."""

    part: str
    """`question`, `choices` or `explanation`."""
    line: int
    reason: str
    """`in Latin script`, `in English`, `the same as in en`."""


def untranslated_parts(
    bank: Bank,
    item: Item,
    sources: Sequence[str] = SOURCES,
    like: tuple[str, ...] = (),
    like_language: str = "",
) -> list[Untranslated]:
    """The texts of one item written in another script, or identified as a source language.

    The choices are judged together: one choice is often a name ("Apache
    Spark RDDs") that stays as it is in every language. `like`: the same item's
    `unit_texts` in the topic's reference (in `like_language`), if known: a text that is
    its text reworded is found in the reference's language without the identifier
    (`langid.shares_most`).
    """
    verdicts = _verdicts(
        bank.language,
        item.question,
        item.choices,
        item.explanation,
        item.whys,
        tuple(sources),
        like,
        like_language if like else "",
    )
    return [
        Untranslated(label, item.line_at("choices" if label == "whys" else label), reason)
        for label, reason in verdicts
    ]


@functools.lru_cache(maxsize=1 << 15)
def _verdicts(
    language: str,
    question: str,
    choices: tuple[str, ...],
    explanation: str,
    whys: tuple[str, ...],
    sources: tuple[str, ...],
    like: tuple[str, ...] = (),
    like_language: str = "",
) -> tuple[tuple[str, str], ...]:
    """`untranslated_parts` by the texts alone, remembered: the same texts are judged
    again by every check across banks, by the coverage matrix, and by `serve` on each
    save, and language identification is the slow part of it all. A Python string
    keeps its hash, so a text judged before is found again for the cost of a lookup."""
    units = _units(question, choices, explanation, whys)
    found: list[tuple[str, str]] = []
    for label, text in units:
        # masking only removes words of other scripts' terms: own-script text stays own-script
        if foreign_script(text, language) is None:
            continue
        script = foreign_script(langid.mask(text), language)
        if script:
            expected = EXPECTED_SCRIPT[lang.primary_language(language)].split()[0]
            found.append((label, f"in {script.title()} script, not {expected.title()}"))
    if found:
        return tuple(found)
    likes = dict(zip(("question", "choices", "explanation", "whys"), like, strict=False))
    for label, text in units:
        code = langid.identify(text, language, sources, likes.get(label, ""), like_language)
        if code:
            found.append((label, f"in {langid.language_name(code)}"))
    return tuple(found)


def _units(
    question: str, choices: tuple[str, ...], explanation: str, whys: tuple[str, ...]
) -> list[tuple[str, str]]:
    """The texts of an item judged one by one, by label (the choices together, the whys
    together), without code and formulas, which are not in any language."""
    units = [
        ("question", markup.prose(question)),
        ("choices", "\n".join(markup.prose(c) for c in choices)),
        ("explanation", markup.prose(explanation)),
    ]
    prose_whys = [markup.prose(w) for w in whys if w]
    if prose_whys:
        units.append(("whys", "\n".join(prose_whys)))
    return units


def unit_texts(
    question: str, choices: tuple[str, ...], explanation: str, whys: tuple[str, ...] = ()
) -> tuple[str, ...]:
    """An item's texts as `untranslated_parts` judges them, for its `like`."""
    return tuple(text for _, text in _units(question, choices, explanation, whys))


def same_as_reference(item: Item, ref: Item, reference: str) -> list[Untranslated]:
    """The question or explanation, when it is the reference's text (ignoring case and spaces).

    An item whose every text is the reference's counts too, however short,
    unless it has no words at all (code, numbers): that is how `ankigen
    translate` leaves the texts for the translator.
    """
    texts = (item.question, item.choices, item.explanation)
    labels = _same_as_reference(texts, (ref.question, ref.choices, ref.explanation))
    reason = f"the same as in {reference!r}"
    return [Untranslated(label, item.line_at(label), reason) for label in labels]


@functools.lru_cache(maxsize=1 << 15)
def _same_as_reference(
    texts: tuple[str, tuple[str, ...], str], ref_texts: tuple[str, tuple[str, ...], str]
) -> tuple[str, ...]:
    """The labels `same_as_reference` names, by the texts alone, remembered as
    `_verdicts` is."""
    (question, choices, explanation), (ref_question, ref_choices, ref_explanation) = (
        texts,
        ref_texts,
    )
    if _normal(question) != _normal(ref_question) and (
        _normal(explanation) != _normal(ref_explanation)
    ):
        return ()  # the common case, decided without looking further
    flat = (question, *choices, explanation)
    ref_flat = (ref_question, *ref_choices, ref_explanation)
    identical = len(flat) == len(ref_flat) and all(
        _normal(a) == _normal(b) for a, b in zip(flat, ref_flat, strict=True)
    )
    if identical and any(langid.words(langid.mask(text)) for text in flat):
        return ("question", "choices", "explanation")
    found = []
    for label, text, ref_text in (
        ("question", question, ref_question),
        ("explanation", explanation, ref_explanation),
    ):
        if _normal(text) != _normal(ref_text):
            continue
        if len(langid.words(langid.mask(text))) >= langid.MIN_WORDS:
            found.append(label)
    return tuple(found)


@functools.lru_cache(maxsize=1 << 15)
def _normal(text: str) -> str:
    return " ".join(text.casefold().split())


def forget_texts() -> None:
    """Empty the memos of texts (`_verdicts`, `_same_as_reference`, `_normal`), once a
    bank is checked: through them a process kept the texts of the last 32,768 items it
    checked until the build's end, 50 MiB of the main process when a cold build at
    10 x 10,000 items had its peak. An edit reuses verdicts by the bank cache's entry
    (`Before`), not these."""
    _verdicts.cache_clear()
    _same_as_reference.cache_clear()
    _normal.cache_clear()


def untranslated(
    bank: Bank,
    sources: Sequence[str] = SOURCES,
    said: Mapping[int, str] | None = None,
    reference: tuple[str, Mapping[str, tuple[str, ...]]] | None = None,
) -> Iterable[Diagnostic]:
    """Items whose texts look untranslated; an item whose seal is in `said` (what the
    previous check said of the same sealed content, in the same language) gets that.
    `reference`: the topic's reference language and its items' `unit_texts` by id."""
    said = said or {}
    like_language, likes = reference or ("", {})
    for item in bank.items:
        message = said.get(item.seal) if item.seal else None
        if message is not None:
            if message:
                yield Diagnostic(bank.path, item.line, "warning", message)
            continue
        like = likes.get(item.id, ())
        parts = untranslated_parts(bank, item, sources, like, like_language)
        if parts:
            yield _untranslated_warning(bank, item, parts)


def _untranslated_prefix(item: Item) -> str:
    # `Before.of` finds an item's warning by this prefix at the item's line: no other
    # check of a bank's own may begin a message with it
    return f"item {item.id!r}: untranslated? "


def _untranslated_warning(bank: Bank, item: Item, parts: Sequence[Untranslated]) -> Diagnostic:
    by_reason: dict[str, list[str]] = {}
    for part in parts:
        by_reason.setdefault(part.reason, []).append(part.part)
    what = "; ".join(f"{', '.join(labels)} {reason}" for reason, labels in by_reason.items())
    return Diagnostic(bank.path, item.line, "warning", _untranslated_prefix(item) + what)


def untranslated_items(
    banks: Sequence[Bank], reference_tag: str = ""
) -> dict[str, dict[str, list[Untranslated]]]:
    """bank key -> item id -> its untranslated texts, in every bank that has any."""
    found: dict[str, dict[str, list[Untranslated]]] = {}
    for bank, reference in _with_references(banks, reference_tag):
        ref_items = {i.id: i for i in reference.items} if reference else {}
        for item in bank.items:
            ref = ref_items.get(item.id)
            like = (
                unit_texts(ref.question, ref.choices, ref.explanation, ref.whys)
                if ref is not None and reference is not None
                else ()
            )
            language = reference.language if reference is not None else ""
            parts = untranslated_parts(bank, item, sources_for(reference_tag), like, language)
            if ref is not None and reference is not None:
                parts += same_as_reference(item, ref, reference.language)
            if parts:
                found.setdefault(bank.key, {})[item.id] = parts
    return found


def _with_references(
    banks: Sequence[Bank], reference_tag: str = ""
) -> Iterator[tuple[Bank, Bank | None]]:
    """Each bank with its topic's reference bank (None for the reference itself)."""
    topics: dict[str, list[Bank]] = {}
    for bank in banks:
        topics.setdefault(bank.topic, []).append(bank)
    for bank in banks:
        reference = reference_language(topics[bank.topic], reference_tag)
        same = reference is bank or reference.language == bank.language
        yield bank, (None if same else reference)


def reference_language(banks: Sequence[Bank], reference: str = "") -> Bank:
    """The project's reference language if the topic has it, else English, else the first tag."""
    return min(banks, key=lambda b: (b.language != reference, b.language != "en", b.language))
