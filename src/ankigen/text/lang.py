"""Language tags (BCP 47): validation, canonical case and text direction."""

from __future__ import annotations

import functools
import re

_TAG = re.compile(
    r"""
    (?P<language>[a-z]{2,3}(?:-[a-z]{3}){0,3})
    (?:-(?P<script>[a-z]{4}))?
    (?:-(?P<region>[a-z]{2}|[0-9]{3}))?
    (?:-(?:[a-z0-9]{5,8}|[0-9][a-z0-9]{3}))*
    (?:-[0-9a-wy-z](?:-[a-z0-9]{2,8})+)*
    (?:-x(?:-[a-z0-9]{1,8})+)?
    """,
    re.VERBOSE | re.ASCII,
)

TAG_PATTERN = _TAG.pattern
"""The pattern of a well-formed tag, in lower case (verbose: its white space is layout)."""

MAX_TAG_LENGTH = 35  # RFC 5646 asks implementations to support at least this much

# Languages written right to left in their default script.
_RTL_LANGUAGES = frozenset(
    [
        "ar",
        "arc",
        "azb",
        "ckb",
        "dv",
        "fa",
        "he",
        "iw",
        "khw",
        "ks",
        "ku",
        "lrc",
        "mzn",
        "nqo",
        "pnb",
        "ps",
        "sd",
        "syr",
        "ug",
        "ur",
        "yi",
    ]
)
_RTL_SCRIPTS = frozenset(["arab", "hebr", "thaa", "syrc", "nkoo", "adlm", "rohg", "mand", "samr"])


def is_valid_tag(tag: str) -> bool:
    """Whether `tag` is well-formed BCP 47 with an ISO 639 (2 or 3 letter) language."""
    return len(tag) <= MAX_TAG_LENGTH and _TAG.fullmatch(tag.lower()) is not None


def canonical_tag(tag: str) -> str:
    """The conventional case of a tag: `pt-br` -> `pt-BR`, `sr-latn` -> `sr-Latn`.

    Identity (GUIDs, file names) is derived from this form, so changing only the
    case of a tag in a bank never creates new notes.
    """
    parts = tag.lower().split("-")
    out = [parts[0]]
    for part in parts[1:]:
        if len(out[-1]) == 1:  # singleton: extension or private use, keep lower case
            out.append(part)
        elif len(part) == 4 and part.isalpha():
            out.append(part.title())
        elif len(part) == 2 and part.isalpha():
            out.append(part.upper())
        else:
            out.append(part)
    return "-".join(out)


# languages whose region can stand for another script (CLDR's likely subtags: zh-TW is
# written in Han Traditional, pa-PK in Arabic, sr-ME in Latin, uz-AF in Arabic): for
# them a region never names the same language as no region
_SCRIPT_BY_REGION = frozenset(
    "az bs ff ha kk ks ku ky mn ms pa sd shi sr tg tk ug uz vai yue zh".split()
)


def but_for_region(one: str, other: str) -> bool:
    """Whether two well-formed tags name one language written one way, one with a region
    and the other without: `de` and `de-DE`, `pt-BR` and `pt`; not `pt-BR` and `pt-PT`
    (two variants), `sr` and `sr-Latn`, nor `zh` and `zh-TW` (see `_SCRIPT_BY_REGION`).
    A translator's tool writes the region it was set to (Poedit: `de_DE`) where the
    team's bank says `de`."""
    first, second = _TAG.fullmatch(one.lower()), _TAG.fullmatch(other.lower())
    if first is None or second is None:
        return False
    if (
        first["language"] != second["language"]
        or first["script"] != second["script"]
        or (first["region"] is None) == (second["region"] is None)
    ):
        return False
    if first["script"] is None and first["language"] in _SCRIPT_BY_REGION:
        return False
    return _without_region(first) == _without_region(second)


def _without_region(found: re.Match[str]) -> str:
    if found["region"] is None:
        return found.string
    return found.string[: found.start("region") - 1] + found.string[found.end("region") :]


def primary_language(tag: str) -> str:
    return tag.lower().split("-")[0]


@functools.cache  # asked once per note: a tenth of a deck's plan, for a handful of tags
def direction(tag: str) -> str:
    """`rtl` or `ltr` for the text of a language tag; an explicit script wins."""
    match = _TAG.fullmatch(tag.lower())
    if match and match["script"]:
        return "rtl" if match["script"] in _RTL_SCRIPTS else "ltr"
    return "rtl" if primary_language(tag) in _RTL_LANGUAGES else "ltr"
