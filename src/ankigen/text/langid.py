"""Is this text still in the language it was translated from?

Script detection (`checks.translation.foreign_script`) cannot tell English left in a Yoruba
or Wolof bank: they share the Latin script. This module answers for any
script, offline, with two independent signals that must both agree, because
a false "untranslated" is as wrong as a missed one:

1. **Grammar words.** Untranslated prose carries the source language's
   function words (the, of, is, which ...); a translated sentence dense with
   English technical terms ("Activation checkpointing dafay recompute
   activations yi ...") keeps its own grammar. At least a fifth of the words
   must be function words of the source language. This is cheap, so most
   translated text never reaches step 2.
2. **A language identifier** (lingua, offline n-gram models), restricted to
   the bank's language, the source languages and, for bank languages lingua
   does not know (such as Wolof), a fixed set of decoys so that "not English"
   has somewhere to go. The source language must win with confidence.

Technical terms are masked before either step: code, acronyms and mixed-case
names (GPU, NCCL, FSDP, ZeRO, PyTorch), words with digits or identifier
punctuation (fp16, torch.distributed, init_process_group) and short
parenthesized glosses ("(optimizer state)"). Texts with fewer than
`MIN_WORDS` words left are not judged at all: short texts are noise.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lingua import LanguageDetector

MIN_WORDS = 3
"""Fewer words than this (after masking) are never judged."""
MIN_GRAMMAR_SHARE = 0.2
"""At least this share of the words must be the source language's function words."""
MAX_WORDS = 30
"""Only the first words are read: a longer text says nothing new, and costs time."""
LONG_TEXT_WORDS = 12
"""From this many words on, the identifier's faster trigram-only mode is used."""
MIN_CONFIDENCE = 0.5
"""The identifier's confidence in the source language, among the candidates."""
DECISIVE_SHARE = 0.35
"""A text this dense with one source language's function words, and with none of the
bank language's own (where ankigen has its list, `OWN_WORDS`), is in that source language without
asking the identifier, which costs about 0.1 ms a text and a model load per process:
the identifier agreed on every such text tested (tests/checks/test_translation.py)."""
DECISIVE_WORDS = 6
"""A decision without the identifier takes at least this many words."""

_TAGS = re.compile(r"<code>.*?</code>|<[^>]*>", re.S | re.I)
_GLOSS = re.compile(r"\([^()]{0,80}\)")
# acronyms and mixed case (GPU, ZeRO, PyTorch), digits, identifier punctuation
_TECHNICAL = re.compile(
    r"(?<!\S)(?=\S*?(?:[A-Z]\S*?[A-Z]|[a-z][A-Z]|\d|[_./:=\\#@{}\[\]<>`$%]\w))\S+"
)
_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")

# The most frequent function words of the languages texts are usually
# translated from. Words that are also common in other languages were left
# out (English "a", "no", "i"; Spanish "a"; French "a"), so a translation does
# not reach the share by accident.
FUNCTION_WORDS: dict[str, frozenset[str]] = {
    "en": frozenset(
        "the an of to in on at by for with from into onto and or but not is are was were be "
        "been being it its this that these those which what who whom whose why how when where "
        "there their they them he she we you his her our your can could would should will "
        "may might must do does did has have had if than then as so only each every all any "
        "more most such instead while because before after about between during without "
        "also".split()
    ),
    "fr": frozenset(
        "le la les un une des du de et ou mais est sont été être il elle ils elles nous vous "
        "ce cette ces qui que quoi dont où pour par avec sans dans sur sous entre pendant "
        "chaque tous toutes plus moins aussi ne pas leur leurs son sa ses au aux".split()
    ),
    "es": frozenset(
        "el la los las un una unos unas del de y o pero es son fue ser está están que cual "
        "cuál quien por para con sin en sobre entre durante cada todos todas más menos también "
        "su sus al lo como porque cuando donde".split()
    ),
    "de": frozenset(
        "der die das den dem des ein eine einen einem einer und oder aber ist sind war waren "
        "sein wird werden nicht kein keine mit von zu zum zur im auf für aus bei nach über "
        "unter zwischen während jeder jede jedes alle mehr auch nur wie wenn weil dass welche "
        "welcher welches".split()
    ),
    "pt": frozenset(
        "o os as um uma uns umas do da dos das de e ou mas é são foi ser está estão que qual "
        "quem por para com sem em no na nos nas sobre entre durante cada todos todas mais "
        "menos também seu sua seus suas ao como porque quando onde".split()
    ),
}

# Function words of bank languages that are seldom sources, for `decisive` alone: a
# text with any of them is not decided without the identifier. Words that English
# also uses were left out, so an English text does not carry them by accident.
OWN_WORDS: dict[str, frozenset[str]] = {
    "it": frozenset(
        "il lo la gli le un una uno di del della dei delle che è sono per con nel nella "
        "più ogni tra sul sulla questo questa quale anche quando perché".split()
    ),
    "nl": frozenset(
        "de het een van en zijn niet met voor op aan bij naar uit ook maar wordt worden "
        "dat deze die wat welke elke alle meer als wanneer omdat tussen tijdens".split()
    ),
    "sv": frozenset(
        "och att det som en ett är inte med för på av till den de om från eller också "
        "varje alla mer vilken vilket när eftersom mellan blir".split()
    ),
    "pl": frozenset(
        "w na z nie jest są się że jak dla przez od po przy oraz lub ale także "
        "każdy wszystkie który która które gdy ponieważ między podczas".split()
    ),
    "tr": frozenset(
        "ve bir bu ile için da de değil olan olarak daha gibi ama veya çünkü "
        "arasında sonra önce hangi tüm kadar".split()
    ),
    "yo": frozenset(
        "ni ti si ati awọn kan fun ko naa yii lati pe bi gbogbo rẹ wọn àti tí ní sí fún "
        "láti bí kò náà yìí ń".split()
    ),
    "wo": frozenset(
        "ci ak la bi yi ngir dafa dañu nga mu ñu te mooy dafay lu ba ko leen dina nekk "
        "bu gi ji li".split()
    ),
}

# Latin-script languages that absorb text in a language lingua has no model
# for, so "not English" has somewhere to go. Diverse on purpose: Romance,
# Germanic, Bantu, Niger-Congo, Cushitic, Austronesian.
_LATIN_DECOYS = "fr es de pt it nl sw yo zu so id tl tn sn la".split()


def mask(text: str) -> str:
    """The text without markup, code, technical terms and short parenthesized glosses."""
    # each step only where it can change something: masking is most of the untranslated
    # check's own time, run on every text of every translation on a cold build
    if "<" in text:
        text = _TAGS.sub(" ", text)
    if "(" in text:
        outside = _GLOSS.sub(" ", text)
        if len(_WORD.findall(outside)) >= MIN_WORDS:
            text = outside
    return " ".join(_TECHNICAL.sub(" ", text).split())


# `_WORD` on ASCII text, lowered: there a letter is [A-Za-z] and ’ cannot occur, and the
# engine tests a plain range in half the time of Unicode's categories
_ASCII_WORD = re.compile(r"[a-z]+(?:['-][a-z]+)*")


def words(text: str) -> list[str]:
    """The words of `text`, lowercased."""
    if text.isascii():
        return _ASCII_WORD.findall(text.lower())
    return list(map(str.lower, _WORD.findall(text)))


def grammar_share(tokens: list[str], language: str) -> float:
    known = FUNCTION_WORDS.get(language)
    if not known or not tokens:
        return 0.0
    return sum(t in known for t in tokens) / len(tokens)


def primary(language: str) -> str:
    return language.split("-")[0].lower()


@functools.cache
def _lingua_code(code: str) -> object | None:
    from lingua import IsoCode639_1, Language

    try:
        return Language.from_iso_code_639_1(getattr(IsoCode639_1, code.upper()))
    except (AttributeError, ValueError):
        return None


# The names of the languages with function words, as the identifier gives them: an
# untranslated text decided by its function words is reported without loading lingua
# (2 ms of an edit whose check needs no identifier; the test asserts they agree)
_NAMES = {"en": "English", "fr": "French", "es": "Spanish", "de": "German", "pt": "Portuguese"}


def language_name(code: str) -> str:
    """The English name of a language the identifier knows, such as `English`."""
    if primary(code) in _NAMES:
        return _NAMES[primary(code)]
    found = _lingua_code(primary(code))
    return str(found.name).title() if found is not None else code  # type: ignore[attr-defined]


def known(language: str) -> bool:
    """Whether the identifier has a model for this language: every language with function
    words has one (a test asserts it), and lingua is not loaded to say so."""
    return primary(language) in FUNCTION_WORDS or _lingua_code(primary(language)) is not None


@functools.cache
def _detector(bank_language: str, sources: tuple[str, ...], long: bool) -> LanguageDetector:
    """Trigram models only for long texts (lingua's low accuracy mode: several times
    faster, and as accurate beyond a dozen words); every n-gram size for short ones."""
    from lingua import LanguageDetectorBuilder

    codes = set(sources)
    if known(bank_language):
        codes.add(bank_language)
    else:
        codes.update(_LATIN_DECOYS)
    languages = [lang for lang in (_lingua_code(c) for c in sorted(codes)) if lang is not None]
    builder = LanguageDetectorBuilder.from_languages(*languages)  # type: ignore[arg-type]
    return (builder.with_low_accuracy_mode() if long else builder).build()


def identify(
    text: str, bank_language: str, sources: tuple[str, ...], like: str = "", like_language: str = ""
) -> str | None:
    """The source language `text` is confidently written in, if it is not the bank's.

    `sources` are the languages texts are translated from (the reference
    language, English); a text is only ever said to be in one of them. `like`: the
    same text in the topic's reference (`like_language`), if known (see `shares_most`).
    """
    candidates = _candidates(bank_language, sources)
    if not candidates:
        return None
    function_words = _all_function_words(candidates)
    if function_words is not None and function_words.isdisjoint(words(text)):
        return None  # masking only removes words: without a function word now, none later
    return identify_masked(mask(text), bank_language, sources, like, like_language)


@functools.cache
def _all_function_words(candidates: tuple[str, ...]) -> frozenset[str] | None:
    """Every candidate's function words, if each candidate has a list."""
    if not all(c in FUNCTION_WORDS for c in candidates):
        return None
    return frozenset().union(*(FUNCTION_WORDS[c] for c in candidates))


@functools.cache
def _candidates(bank_language: str, sources: tuple[str, ...]) -> tuple[str, ...]:
    own = primary(bank_language)
    return tuple(c for c in sorted({primary(s) for s in sources} - {own}) if known(c))


def identify_masked(
    masked: str,
    bank_language: str,
    sources: tuple[str, ...],
    like: str = "",
    like_language: str = "",
) -> str | None:
    """`identify` for text already passed through `mask`."""
    own = primary(bank_language)
    candidates = _candidates(bank_language, sources)
    if not candidates:
        return None
    tokens = words(masked)[:MAX_WORDS]
    if len(tokens) < MIN_WORDS:
        return None
    with_words = [c for c in candidates if c in FUNCTION_WORDS]
    if with_words and not any(grammar_share(tokens, c) >= MIN_GRAMMAR_SHARE for c in with_words):
        return None
    found = decisive(tokens, own, candidates)
    if found is None and like and like_language in candidates and shares_most(tokens, like):
        return like_language
    return found or _judged(" ".join(tokens), own, candidates)


def shares_most(tokens: list[str], like: str) -> bool:
    """Whether most of a text's words (`tokens`, masked) are words of `like`, the same
    field of the same item in the reference: then the text is the reference's, reworded
    (the reference edited after it was copied), and in the reference's language without
    asking the identifier. Masking leaves numbers, code and formulas out of both: an
    edit that changed them changes no word. Asked only of a text with the function words
    of a source language (`identify_masked`), which a translation does not have: a
    translation that kept the reference's terms keeps its own grammar."""
    if not tokens:
        return False
    # the reference's words unmasked: `tokens` hold no number, code or term to match its
    # masked ones, and masking costs four times the words (a tenth of a reworded lint)
    known = set(words(like))
    return sum(t in known for t in tokens) * 2 > len(tokens)


def decisive(tokens: list[str], own: str, candidates: tuple[str, ...]) -> str | None:
    """The source language a text is plainly in, by its function words alone, if it is."""
    own_words = FUNCTION_WORDS.get(own) or OWN_WORDS.get(own)
    if own_words is None or len(tokens) < DECISIVE_WORDS:
        return None
    if not own_words.isdisjoint(tokens):
        return None
    shares = sorted(
        ((grammar_share(tokens, c), c) for c in candidates if c in FUNCTION_WORDS), reverse=True
    )
    if not shares or shares[0][0] < DECISIVE_SHARE:
        return None
    if len(shares) > 1 and shares[1][0] >= shares[0][0] / 2:
        return None  # two source languages in reach: the identifier tells them apart
    return shares[0][1]


MODELS_HELD = 2
"""Bank languages whose models stay loaded at once, besides the source languages'.
lingua's models take about 28 MiB a language, never given back: a cold build of ten
half-translated languages held them all in each process, 280 MiB at most, and its
peak memory was over its goal. A process checks a bank at a time, so the models of a
language it checked before make room for the next one's, which fill the same memory."""

_held: dict[str, None] = {}
"""The bank languages whose models may be loaded, the most recently used last."""


def _hold(own: str, candidates: tuple[str, ...]) -> None:
    """`own`'s models are about to be used: the least recently used beyond `MODELS_HELD`
    are unloaded (loaded again, by lingua, if asked for later)."""
    if own in candidates or not known(own):
        return  # a source's models serve every bank; an unknown language's decoys too
    _held.pop(own, None)
    _held[own] = None
    while len(_held) > MODELS_HELD:
        oldest = next(iter(_held))
        del _held[oldest]
        language = _lingua_code(oldest)
        if language is not None and oldest not in candidates:
            from lingua import LanguageDetectorBuilder

            builder = LanguageDetectorBuilder.from_languages(language)  # type: ignore[arg-type]
            builder.build().unload_language_models()  # type: ignore[no-untyped-call]


_remembered: dict[str, str] = {}
"""Verdicts of the identifier kept from earlier builds, by `verdict_key` ("" for none)."""
_learned: dict[str, str] | None = None
"""The verdicts it gave since they were remembered (None: not remembering)."""


def verdict_key(masked: str, own: str, candidates: tuple[str, ...]) -> str:
    """The digest of a text and the languages it is judged among."""
    key = "\x00".join((masked, own, *candidates)).encode()
    return hashlib.blake2b(key, digest_size=16).hexdigest()


def remember(verdicts: Mapping[str, str]) -> None:
    """Answer from `verdicts` (`checks.verdicts` keeps them), and note the new ones."""
    global _learned
    _remembered.clear()
    _remembered.update(verdicts)
    _learned = {}


def take_learned() -> dict[str, str]:
    """The verdicts given since the last call, by `verdict_key`."""
    global _learned
    found, _learned = _learned or {}, ({} if _learned is not None else None)
    return found


def _judged(masked: str, own: str, candidates: tuple[str, ...]) -> str | None:
    """`_judge`, answered from the remembered verdicts where it can be."""
    if _learned is None:
        return _judge(masked, own, candidates)
    key = verdict_key(masked, own, candidates)
    found = _remembered.get(key, _learned.get(key))
    if found is not None:
        return found or None
    code = _judge(masked, own, candidates)
    _learned[key] = code or ""
    return code


@functools.lru_cache(maxsize=65536)
def _judge(masked: str, own: str, candidates: tuple[str, ...]) -> str | None:
    _hold(own, candidates)
    detector = _detector(own, candidates, masked.count(" ") + 1 >= LONG_TEXT_WORDS)
    values = detector.compute_language_confidence_values(masked)
    if not values:
        return None
    best = values[0]
    code = best.language.iso_code_639_1.name.lower()
    if code not in candidates or best.value < MIN_CONFIDENCE:
        return None
    if code in FUNCTION_WORDS and grammar_share(masked.split(), code) < MIN_GRAMMAR_SHARE:
        return None
    return code
