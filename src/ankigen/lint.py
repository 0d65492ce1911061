"""Checks on banks beyond their schema: across languages, scripts, placeholders, bias.

`build`, `lint`, `preview` and `status` all run these, so an author sees the
same problems wherever they look.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from pathlib import Path

from ankigen import lang, langid
from ankigen.bank import Bank, Item, load_bank
from ankigen.bankcache import BankCache
from ankigen.errors import Diagnostic
from ankigen.parallel import parallel_map

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

PLACEHOLDER = re.compile(
    r"_AIU_PROTECTED_\w*|__[A-Z][A-Z0-9_]*__|\{\{\s*\w*\s*\}\}|\{\d+\}|%\(\w+\)[sd]|%[sd]\b"
    r"|\$\{\w+\}|\[\[\w+\]\]|<x\s+id=|\uFFFD"
)
BIAS_MIN_ITEMS = 4


@dataclass(frozen=True)
class Checked:
    """Banks that loaded, with every problem found in and across them."""

    banks: tuple[Bank, ...]
    diagnostics: tuple[Diagnostic, ...]
    failed: tuple[Path, ...] = ()
    """Bank files that could not be loaded at all."""
    reference: str = ""
    """The project's reference language, if it names one."""

    @property
    def errors(self) -> int:
        return sum(d.severity == "error" for d in self.diagnostics)

    @property
    def warnings(self) -> int:
        return sum(d.severity == "warning" for d in self.diagnostics)


def check_paths(
    paths: Iterable[Path],
    media_dir: Path | None = None,
    pool: Executor | None = None,
    cache: BankCache | None = None,
    reference: str = "",
) -> Checked:
    """Load and check banks; with `media_dir`, also verify every image they name.

    `reference` is the project's reference language (by default English where a topic has it).

    With a cache, banks whose files did not change are not read again.
    """
    banks: list[Bank] = []
    diagnostics: list[Diagnostic] = []
    failed: list[Path] = []
    paths = list(paths)
    known: dict[Path, tuple[Bank | None, list[Diagnostic]]] = {}
    for path in paths:
        cached = cache.get(path) if cache else None
        if cached is not None:
            known[path] = cached
    fresh = [path for path in paths if path not in known]
    check = functools.partial(load_and_check, sources=sources_for(reference))
    for path, result in zip(fresh, parallel_map(check, fresh, pool), strict=True):
        known[path] = result
        if cache:
            cache.put(path, result)
    for path in paths:
        bank, found = known[path]
        diagnostics.extend(found)
        if bank is None:
            failed.append(path)
        else:
            banks.append(bank)
    diagnostics.extend(check_across(banks, reference))
    if media_dir is not None:
        diagnostics.extend(check_images(banks, media_dir))
    return Checked(tuple(banks), tuple(sorted(diagnostics)), tuple(failed), reference)


def check_images(banks: Sequence[Bank], media_dir: Path) -> list[Diagnostic]:
    from ankigen.media import check, image_refs

    return check(image_refs(banks), media_dir)


def sources_for(reference: str) -> tuple[str, ...]:
    """The languages texts are translated from: English and the project's reference."""
    return tuple(dict.fromkeys((*SOURCES, *([reference] if reference else []))))


def load_and_check(
    path: Path, sources: tuple[str, ...] = ("en",)
) -> tuple[Bank | None, list[Diagnostic]]:
    """One bank with the problems found in it alone (runs in a worker process)."""
    bank, found = load_bank(path)
    if bank is not None:
        found.extend(check_bank(bank, sources))
    return bank, found


def check_bank(bank: Bank, sources: tuple[str, ...] = ("en",)) -> Iterable[Diagnostic]:
    yield from untranslated(bank, sources)
    yield from placeholders(bank)
    yield from position_bias(bank)
    yield from missing_alt_text(bank)


def check_across(banks: Sequence[Bank], reference: str = "") -> list[Diagnostic]:
    """Problems between banks: the same deck twice, translations out of step."""
    found: list[Diagnostic] = []
    first: dict[str, Bank] = {}
    for bank in banks:
        if bank.key in first:
            found.append(
                Diagnostic(
                    bank.path,
                    bank.lines.get("language", 1),
                    "error",
                    f"topic {bank.topic!r} in language {bank.language!r} is already defined "
                    f"in {first[bank.key].path}",
                )
            )
            continue
        first[bank.key] = bank
    found.extend(parity(list(first.values()), reference))
    found.extend(copied_from_reference(list(first.values()), reference))
    return found


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
    bank: Bank, item: Item, sources: Sequence[str] = SOURCES
) -> list[Untranslated]:
    """The texts of one item written in another script, or identified as a source language.

    The choices are judged together: one choice is often a name ("Apache
    Spark RDDs") that stays as it is in every language.
    """
    units = [
        ("question", item.question, item.lines.get("question", item.line)),
        ("choices", "\n".join(item.choices), item.lines.get("choices", item.line)),
        ("explanation", item.explanation, item.lines.get("explanation", item.line)),
    ]
    found: list[Untranslated] = []
    for label, text, line in units:
        # masking only removes words of other scripts' terms: own-script text stays own-script
        if foreign_script(text, bank.language) is None:
            continue
        script = foreign_script(langid.mask(text), bank.language)
        if script:
            expected = EXPECTED_SCRIPT[lang.primary_language(bank.language)].split()[0]
            reason = f"in {script.title()} script, not {expected.title()}"
            found.append(Untranslated(label, line, reason))
    if found:
        return found
    for label, text, line in units:
        code = langid.identify(text, bank.language, tuple(sources))
        if code:
            found.append(Untranslated(label, line, f"in {langid.language_name(code)}"))
    return found


def same_as_reference(item: Item, ref: Item, reference: str) -> list[Untranslated]:
    """The question or explanation, when it is the reference's text (ignoring case and spaces).

    An item whose every text is the reference's counts too, however short,
    unless it has no words at all (code, numbers): that is how `ankigen
    translate` leaves the texts for the translator.
    """
    if _normal(item.question) != _normal(ref.question) and (
        _normal(item.explanation) != _normal(ref.explanation)
    ):
        return []  # the common case, decided without looking further
    texts = (item.question, *item.choices, item.explanation)
    ref_texts = (ref.question, *ref.choices, ref.explanation)
    identical = len(texts) == len(ref_texts) and all(
        _normal(a) == _normal(b) for a, b in zip(texts, ref_texts, strict=True)
    )
    if identical and any(langid.words(langid.mask(text)) for text in texts):
        reason = f"the same as in {reference!r}"
        return [
            Untranslated("question", item.lines.get("question", item.line), reason),
            Untranslated("choices", item.lines.get("choices", item.line), reason),
            Untranslated("explanation", item.lines.get("explanation", item.line), reason),
        ]
    found = []
    for label in ("question", "explanation"):
        text, ref_text = getattr(item, label), getattr(ref, label)
        if _normal(text) != _normal(ref_text):
            continue
        if len(langid.words(langid.mask(text))) >= langid.MIN_WORDS:
            line = item.lines.get(label, item.line)
            found.append(Untranslated(label, line, f"the same as in {reference!r}"))
    return found


def _normal(text: str) -> str:
    return " ".join(text.casefold().split())


def untranslated(bank: Bank, sources: Sequence[str] = SOURCES) -> Iterable[Diagnostic]:
    for item in bank.items:
        parts = untranslated_parts(bank, item, sources)
        if parts:
            yield _untranslated_warning(bank, item, parts)


def _untranslated_warning(bank: Bank, item: Item, parts: Sequence[Untranslated]) -> Diagnostic:
    by_reason: dict[str, list[str]] = {}
    for part in parts:
        by_reason.setdefault(part.reason, []).append(part.part)
    what = "; ".join(f"{', '.join(labels)} {reason}" for reason, labels in by_reason.items())
    return Diagnostic(bank.path, item.line, "warning", f"item {item.id!r}: untranslated? {what}")


def untranslated_items(
    banks: Sequence[Bank], reference_tag: str = ""
) -> dict[str, dict[str, list[Untranslated]]]:
    """bank key -> item id -> its untranslated texts, in every bank that has any."""
    found: dict[str, dict[str, list[Untranslated]]] = {}
    for bank, reference in _with_references(banks, reference_tag):
        ref_items = {i.id: i for i in reference.items} if reference else {}
        for item in bank.items:
            parts = untranslated_parts(bank, item, sources_for(reference_tag))
            ref = ref_items.get(item.id)
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


def copied_from_reference(banks: Sequence[Bank], reference_tag: str = "") -> Iterable[Diagnostic]:
    """Questions and explanations left as the reference wrote them."""
    for bank, reference in _with_references(banks, reference_tag):
        if reference is None:
            continue
        ref_items = {i.id: i for i in reference.items}
        for item in bank.items:
            ref = ref_items.get(item.id)
            if ref is None:
                continue
            parts = same_as_reference(item, ref, reference.language)
            # one warning per item: the bank's own check already named the rest
            if parts and not untranslated_parts(bank, item, sources_for(reference_tag)):
                yield _untranslated_warning(bank, item, parts)


def placeholders(bank: Bank) -> Iterable[Diagnostic]:
    texts: list[tuple[int, str, str]] = [(bank.lines.get("title", 1), "title", bank.title)]
    if bank.description:
        texts.append((bank.lines.get("description", 1), "description", bank.description))
    for item in bank.items:
        texts.append(
            (item.lines.get("question", item.line), f"item {item.id!r}: question", item.question)
        )
        texts.extend(
            (item.lines.get("choices", item.line), f"item {item.id!r}: choice {n}", choice)
            for n, choice in enumerate(item.choices, start=1)
        )
        texts.append(
            (
                item.lines.get("explanation", item.line),
                f"item {item.id!r}: explanation",
                item.explanation,
            )
        )
    for line, label, text in texts:
        match = PLACEHOLDER.search(text)
        if match:
            yield Diagnostic(
                bank.path,
                line,
                "warning",
                f"{label}: {match[0]!r} looks like a translation tool's placeholder",
            )


def missing_alt_text(bank: Bank) -> Iterable[Diagnostic]:
    for item in bank.items:
        for image, alt in (("image", "image_alt"), ("explanation_image", "explanation_image_alt")):
            if getattr(item, image) and not getattr(item, alt):
                yield Diagnostic(
                    bank.path,
                    item.lines.get(image, item.line),
                    "warning",
                    f"item {item.id!r}: {image} has no {alt}: describe it for screen readers",
                )


def position_bias(bank: Bank) -> Iterable[Diagnostic]:
    fixed = [i for i in bank.items if not i.shuffle and len(i.answer) == 1]
    if len(fixed) < BIAS_MIN_ITEMS:
        return
    position, count = Counter(i.answer[0] for i in fixed).most_common(1)[0]
    if count * 2 > len(fixed):
        yield Diagnostic(
            bank.path,
            bank.lines.get("items", 1),
            "warning",
            f"{count} of {len(fixed)} unshuffled items have choice {position} as the answer; "
            "learners can guess the position: vary it, or let the card shuffle",
        )


def reference_language(banks: Sequence[Bank], reference: str = "") -> Bank:
    """The project's reference language if the topic has it, else English, else the first tag."""
    return min(banks, key=lambda b: (b.language != reference, b.language != "en", b.language))


def parity(banks: Sequence[Bank], reference_tag: str = "") -> Iterable[Diagnostic]:
    topics: dict[str, list[Bank]] = {}
    for bank in banks:
        topics.setdefault(bank.topic, []).append(bank)
    for group in topics.values():
        if len(group) < 2:
            continue
        reference = reference_language(group, reference_tag)
        ref_items = {i.id: i for i in reference.items}
        all_ids = {i.id for b in group for i in b.items}
        for bank in group:
            items = {i.id: i for i in bank.items}
            for item_id in sorted(all_ids - set(items)):
                holder = next(b for b in group if item_id in {i.id for i in b.items})
                yield Diagnostic(
                    bank.path,
                    bank.lines.get("items", 1),
                    "warning",
                    f"item {item_id!r} is missing in {bank.language!r} (it is in {holder.path})",
                )
            if bank is reference:
                continue
            for item_id, item in items.items():
                ref = ref_items.get(item_id)
                if ref is None:
                    continue
                if len(ref.choices) != len(item.choices):
                    yield Diagnostic(
                        bank.path,
                        item.lines.get("choices", item.line),
                        "warning",
                        f"item {item_id!r} has {len(item.choices)} choices; in "
                        f"{reference.language!r} it has {len(ref.choices)}",
                    )
                elif ref.answer != item.answer:
                    yield Diagnostic(
                        bank.path,
                        item.lines.get("answer", item.line),
                        "warning",
                        f"item {item_id!r}: answer {_answer(item.answer)} differs from "
                        f"{_answer(ref.answer)} in {reference.language!r}",
                    )


def _answer(answer: tuple[int, ...]) -> str:
    return str(answer[0]) if len(answer) == 1 else "[" + ", ".join(map(str, answer)) + "]"
