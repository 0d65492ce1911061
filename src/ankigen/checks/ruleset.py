"""Every problem's stable rule id, for `lint --format json|github|sarif`.

A rule is named by the message templates it words, not by a field of `Diagnostic`: the
diagnostics are made at some seventy places over the reader, the checks and the project
file, kept by the thousand in the bank cache and pickled between processes, and a
field would change all of those for a name only the machine-readable output prints.
Here one table holds each id, what it means (the table in docs/commands.md, tested
against this one) and the messages it covers; `tests/checks/test_ruleset.py` makes
every kind of problem and holds each to its id, so a new message without a rule fails
there instead of reading as `ankigen/other`."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from ankigen.core.errors import Diagnostic


@dataclass(frozen=True)
class Rule:
    id: str
    summary: str
    pattern: str
    """A regular expression searched in the message; the first rule that matches wins."""


RULES: tuple[Rule, ...] = (
    Rule(
        "ankigen/file-unreadable",
        "a bank or the project file cannot be read, or a path that looks like a bank is no "
        "regular file or has a name that is not UTF-8",
        r"^cannot read: |symbolic link to nothing|a folder named like a bank|"
        r"not a regular file|file name is not valid UTF-8",
    ),
    Rule(
        "ankigen/file-encoding",
        "a file that is not UTF-8 text, or holds NUL bytes",
        r"not UTF-8|^file contains NUL bytes",
    ),
    Rule(
        "ankigen/file-too-large",
        "a bank or project file over the size limit",
        r"^file is \d+ bytes; banks are limited|^the project file is over",
    ),
    Rule(
        "ankigen/yaml-syntax",
        "YAML that does not parse",
        r"^YAML syntax: |^YAML: (?!the control)",
    ),
    Rule(
        "ankigen/yaml-feature",
        "YAML anchors, aliases and tags, which a bank does not use",
        r"^YAML (anchors|aliases|tag)",
    ),
    Rule("ankigen/toml-syntax", "a project file that is not valid TOML", r"^TOML"),
    Rule(
        "ankigen/empty-bank",
        "an empty file, or a bank without items",
        r"^empty file: |the bank has no items",
    ),
    Rule("ankigen/missing-key", "a required key is missing", r"missing key"),
    Rule(
        "ankigen/unknown-key", "a key ankigen does not know (with a did-you-mean)", r"unknown key"
    ),
    Rule("ankigen/duplicate-key", "the same key twice in one mapping", r"duplicate key"),
    Rule(
        "ankigen/answer-missing",
        "an item without an answer, or with an empty list of answers",
        r"answer is missing|answer is an empty list",
    ),
    Rule(
        "ankigen/answer-out-of-range",
        "an answer that names no choice",
        r"answer -?\d+ is out of range",
    ),
    Rule(
        "ankigen/answer-not-plain",
        "an answer YAML would read otherwise than written (010, 0x2)",
        r"must be written as a plain number",
    ),
    Rule("ankigen/answer-repeated", "the same answer listed twice", r"answer \d+ is listed twice"),
    Rule("ankigen/answer-type", "an answer that is no choice number", r"answer must be a choice"),
    Rule(
        "ankigen/kept-notetype",
        "a kept note type (anki_notetype:) or its carried fields (anki_fields:) that Anki "
        "cannot hold as written",
        r"anki_notetype|anki_fields|the kept note type",
    ),
    Rule(
        "ankigen/choice-count",
        "fewer than 2 or more than 8 choices",
        r"choices; an item needs",
    ),
    Rule(
        "ankigen/duplicate-choice",
        "two choices equal, or equal once normalized as Anki does",
        r"choice \d+ .* choice \d+ at line",
    ),
    Rule("ankigen/duplicate-id", "two items with the same id", r"^duplicate item id"),
    Rule(
        "ankigen/empty-text",
        "a text that is empty or only looks like something (tags, invisible characters)",
        r"is empty$|is visually empty",
    ),
    Rule(
        "ankigen/control-character",
        "a control character or noncharacter in a text or the YAML",
        r"control character or noncharacter|^YAML: the control character",
    ),
    Rule(
        "ankigen/bidi-control",
        "a bidirectional control character, which reorders text invisibly",
        r"bidirectional control character",
    ),
    Rule(
        "ankigen/backup-topic",
        "a topic whose package Anki would take for a collection backup",
        r"Anki treats files named 'backup-\*'",
    ),
    Rule(
        "ankigen/bad-slug",
        "a topic or item id that is not a slug, or is too long",
        r"is not a (topic )?slug|(id|topic) is longer than",
    ),
    Rule(
        "ankigen/bad-language",
        "a language or reference that is not a BCP 47 tag",
        r"is not a BCP 47 tag",
    ),
    Rule(
        "ankigen/duplicate-bank",
        "the same topic and language in two banks",
        r"^topic .* in language .* is already defined",
    ),
    Rule(
        "ankigen/deck-merge",
        "two banks whose decks get the same name (Anki would merge them)",
        r"Anki would merge both",
    ),
    Rule(
        "ankigen/deck-name",
        "a deck name or deck template Anki cannot use as written",
        r"deck name|^deck |^deck:|^deck template",
    ),
    Rule("ankigen/formerly", "a `formerly` that clashes", r"formerly"),
    Rule(
        "ankigen/parity-missing-item",
        "an item id of the topic missing in a language",
        r"is missing in '|whether items of the other languages are missing",
    ),
    Rule(
        "ankigen/parity-not-checked",
        "a translation's item whose reference item has an error",
        r"parity with .* not checked",
    ),
    Rule(
        "ankigen/parity-choices",
        "another number of choices than in the reference language",
        r"choices; in '",
    ),
    Rule(
        "ankigen/parity-answer",
        "another answer than in the reference language",
        r": answer .* differs from .* in '",
    ),
    Rule(
        "ankigen/parity-recall",
        "another `recall` than in the reference language",
        r": recall is (true|false) here",
    ),
    Rule(
        "ankigen/parity-why",
        "a choice without the `why` the reference language gives it",
        r"no 'why'; in '",
    ),
    Rule("ankigen/untranslated", "text most likely left untranslated", r": untranslated\? "),
    Rule(
        "ankigen/placeholder",
        "a translation tool's placeholder left in a text",
        r"looks like a translation tool's placeholder",
    ),
    Rule("ankigen/same-question", "the same question twice in a bank", r"the same question as"),
    Rule(
        "ankigen/position-bias",
        "most unshuffled items have the answer at the same position",
        r"unshuffled items have choice",
    ),
    Rule(
        "ankigen/amp-entity",
        "a text written before `&amp;` became the entity for `&`",
        r"since &amp; became the entity",
    ),
    Rule(
        "ankigen/math",
        "unbalanced or disallowed math (MathJax) in a text",
        r"math: ",
    ),
    Rule(
        "ankigen/code-block",
        "a code block never closed, or in a language Pygments does not know",
        r"code block",
    ),
    Rule(
        "ankigen/project-file",
        "a setting of ankigen.toml that cannot be used",
        r"^(media|topics|tags|reference) ",
    ),
    Rule(
        "ankigen/lock-file",
        "a lock file build refuses: damaged, with merge conflict markers, another version's, "
        "or holding an impossible time",
        r"the lock file|^lock file version",
    ),
    Rule(
        "ankigen/image-alt",
        "an image without alternative text for screen readers",
        r"describe it for screen readers",
    ),
    Rule(
        "ankigen/image",
        "an image that is missing, outside the media folder, too large or unreadable",
        r"image|not an image Pillow can read",
    ),
    Rule(
        "ankigen/type",
        "a value of the wrong type (a list, a mapping, text, true or false)",
        r"must be |keys must be plain names|is a list of",
    ),
    Rule(
        "ankigen/limit",
        "more items, tags or characters than a bank allows",
        r"limit|at most",
    ),
)

OTHER = Rule("ankigen/other", "a problem no other rule names (a bug: report it)", r"")


@functools.cache
def _compiled() -> tuple[tuple[re.Pattern[str], Rule], ...]:
    return tuple((re.compile(rule.pattern), rule) for rule in RULES)


def rule_of(diagnostic: Diagnostic) -> Rule:
    """The rule a diagnostic's message belongs to."""
    for pattern, rule in _compiled():
        if pattern.search(diagnostic.message):
            return rule
    return OTHER
