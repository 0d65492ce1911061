"""The texts of a translation's reference, found beside it, for the untranslated check.

A bank is checked alone, in a worker process, without the other banks. Its texts still
in the reference's language but no longer the reference's (the reference edited after
they were copied) went each to the language identifier, on every cold build and again
after an edit: most of a build's time on a project whose reference changes every week.
With the same item's texts in the reference at hand, such a text is known by the words
it shares with them (`text.langid.shares_most`). The reference is read from the folder
of the translation, as a project lays its banks out (`TOPIC/LANGUAGE.yaml`); where it is
not there, or its topic is another, the identifier decides as before.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Mapping, Sequence

import yaml

from ankigen.bank.folder import BANK_SUFFIXES
from ankigen.bank.model import Bank
from ankigen.bank.reader import parse_bank
from ankigen.checks.translation import unit_texts

Texts = tuple[str, Mapping[str, tuple[str, ...]]]
"""The reference's language, and its items' `unit_texts` by id."""

HELD = 2
"""References kept per process: a process checks the banks of a topic or two in turn."""

_read: dict[tuple[str, int, int], Texts | None] = {}
"""By path, modification time and size: a reference edited since is read again."""


FEW = 16
"""Items to judge up to which only they are looked for in the reference, not the whole
of it read: parsing 10,000 items takes half a second, more than an edit's check."""


def beside(bank: Bank, sources: Sequence[str], ids: Collection[str]) -> Texts | None:
    """The texts of `bank`'s reference for the items `ids`, if it lies beside it: the
    project's reference language first, then English (`translation.sources_for`)."""
    folder = os.path.dirname(bank.path)
    for language in reversed(tuple(sources)):
        if language == bank.language:
            return None  # the reference itself: nothing to compare with
        for suffix in BANK_SUFFIXES:
            path = os.path.join(folder, language + suffix)
            if len(ids) <= FEW:
                found = _some(path, bank.topic, language, ids)
            else:
                found = _texts(path, bank.topic, language)
            if found is not None:
                return found
    return None


def _some(path: str, topic: str, language: str, ids: Collection[str]) -> Texts | None:
    """`_texts` for a few items, each found by its `- id:` line and read alone; an item
    laid out otherwise is left to the identifier."""
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read()
    except (OSError, UnicodeError):
        return None
    head = text[: text.find("\nitems:") + 1]
    if _setting(head, "topic") != topic or _setting(head, "language") != language:
        return None
    found = {}
    for wanted in ids:
        start = re.search(rf"^( *)- id: {re.escape(wanted)}[ \t]*$", text, re.M)
        if start is None:
            continue
        indent = start.group(1)
        end = re.compile(rf"^{indent}- |^ {{0,{len(indent)}}}\S", re.M).search(text, start.end())
        # with its indentation: an item of an indented list (`  - id:`, as the shipped
        # banks are laid out) read from its dash alone had its fields deeper than its id
        chunk = text[start.start() : end.start() if end else len(text)]
        texts = _item_texts(chunk)
        if texts is not None:
            found[wanted] = texts
    return language, found


def _setting(head: str, key: str) -> str | None:
    found = re.search(rf"^{key}:[ \t]*['\"]?([\w-]+)['\"]?[ \t]*$", head, re.M)
    return found.group(1) if found else None


def _item_texts(chunk: str) -> tuple[str, ...] | None:
    try:
        read = yaml.load(chunk, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        return None
    if not isinstance(read, list) or len(read) != 1 or not isinstance(read[0], dict):
        return None
    item = read[0]
    question, choices, explanation = (item.get(k) for k in ("question", "choices", "explanation"))
    if not isinstance(choices, list) or not all(isinstance(c, str) for c in choices):
        return None  # whys, or a shape the bank reader alone reads: the identifier decides
    if not (isinstance(question, str) and isinstance(explanation, str)):
        return None
    return unit_texts(question, tuple(choices), explanation)


def _texts(path: str, topic: str, language: str) -> Texts | None:
    try:
        status = os.stat(path)
        key = (path, status.st_mtime_ns, status.st_size)
        if key in _read:
            return _read[key]
        with open(path, "rb") as file:
            data = file.read()
    except OSError:
        return None
    reference, _ = parse_bank(path, data)
    texts = None
    if reference is not None and reference.topic == topic and reference.language == language:
        texts = (
            language,
            {
                i.id: unit_texts(i.question, i.choices, i.explanation, i.whys)
                for i in reference.items
            },
        )
    while len(_read) >= HELD:
        del _read[next(iter(_read))]
    _read[key] = texts
    return texts


def forget() -> None:
    """Let go of the references read (tests, and a process done with its banks)."""
    _read.clear()
