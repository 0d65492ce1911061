"""An imported Source written as a bank (YAML), text kept exactly.

What the source does not say is left for the author: a missing answer is
`answer: ~  # TODO`, a missing explanation `explanation: ""  # TODO`, and
`ankigen build` refuses both at their lines until they are filled in.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import yaml

from ankigen.bank import yamltree
from ankigen.bank.model import KeptNotetype
from ankigen.bank.yamltext import yaml_string
from ankigen.bank.yamltree import YamlProblem
from ankigen.core.errors import Diagnostic, InvalidBanks
from ankigen.formats.model import Choice, Question, Source

TODO = "# TODO"


_PLAIN_KEY = re.compile(r"[A-Za-z_](?:[A-Za-z0-9_.()=-]| (?! ))*[A-Za-z0-9_.)]|[A-Za-z_]")


def _key(name: str) -> str:
    """A field's name as a mapping key: plain where YAML reads it as written (not as a
    null, as `null` would be)."""
    plain = _PLAIN_KEY.fullmatch(name) and name.lower() != "null"
    return name if plain else yaml_string(name)


def _flow(texts: Sequence[str]) -> str:
    return "[" + ", ".join(map(yaml_string, texts)) + "]"


def _bool(value: bool) -> str:
    return "true" if value else "false"


def _choice(choice: Choice) -> list[str]:
    if choice.why:
        return [f"  - text: {yaml_string(choice.text)}", f"    why: {yaml_string(choice.why)}"]
    return [f"  - {yaml_string(choice.text)}"]


def _answer_lines(question: Question, kept: KeptNotetype | None) -> list[str]:
    """The answer and the explanation, each a TODO where the source says none (but an
    explanation where the kept note type has nowhere to show one)."""
    picks = question.answer
    if question.answered and picks:
        value = str(picks[0]) if len(picks) == 1 else "[" + ", ".join(map(str, picks)) + "]"
        out = [f"  answer: {value}"]
    else:
        count = len(question.choices)
        out = [f"  answer: ~  {TODO}: the number of the correct choice (1-{count})"]
    if question.explanation:
        out.append(f"  explanation: {yaml_string(question.explanation)}")
    elif kept is None or kept.explanation:
        out.append(f'  explanation: ""  {TODO}: why the answer is right')
    return out


def item_lines(question: Question, item_id: str, source: Source, indent: int = 2) -> list[str]:
    """One item as block YAML, its dash at column `indent`; `source` holds the bank's
    defaults, which the item states only where it differs from them."""
    q = yaml_string
    out = [f"- id: {item_id}", f"  question: {q(question.question)}", "  choices:"]
    for choice in question.choices:
        out.extend("  " + line for line in _choice(choice))
    out += _answer_lines(question, source.anki_notetype)
    if question.tags:
        out.append(f"  tags: {_flow(question.tags)}")
    if question.shuffle is not None and question.shuffle != source.shuffle:
        out.append(f"  shuffle: {_bool(question.shuffle)}")
    if question.retired:
        out.append("  retired: true")
    for key in ("image", "image_alt", "explanation_image", "explanation_image_alt"):
        value = getattr(question, key)
        if value:
            out.append(f"  {key}: {q(value)}")
    if question.formerly:
        out.append(f"  formerly: {_flow(question.formerly)}")
    if question.recall is not None and question.recall != source.recall:
        out.append(f"  recall: {_bool(question.recall)}")
    if question.anki_fields and source.anki_notetype is not None:
        # only where the note type is kept: a translation's is ankigen's, with no such fields
        out.append("  anki_fields:")
        out.extend(f"    {_key(name)}: {q(value)}" for name, value in question.anki_fields)
    pad = " " * indent
    return [pad + line for line in out]


def bank_yaml(
    source: Source, ids: Sequence[str], topic: str, language: str, comments: Sequence[str] = ()
) -> str:
    """The source as a bank file, after `comments` (one `# ` line each)."""
    q = yaml_string
    out = [f"# {comment}" for comment in comments]
    out += [f"topic: {topic}", f"language: {language}", f"title: {q(source.title)}"]
    for key, value in (
        ("description", source.description),
        ("level", source.level),
        ("deck", source.deck),
        ("source", source.origin),
        ("license", source.license),
    ):
        if value:
            out.append(f"{key}: {q(value)}")
    if source.tags:
        out.append(f"tags: {_flow(source.tags)}")
    if not source.shuffle:
        out.append("shuffle: false")
    if source.recall:
        out.append("recall: true")
    topics, languages = source.formerly
    if topics or languages:
        older = [f"topic: {_flow(topics)}"] if topics else []
        older += [f"language: {_flow(languages)}"] if languages else []
        out.append("formerly: {" + ", ".join(older) + "}")
    if source.anki_notetype is not None:
        out += kept_lines(source.anki_notetype)
    out.append("items:")
    for item_id, question in zip(ids, source.questions, strict=True):
        out.extend(item_lines(question, item_id, source))
    return "\n".join(out) + "\n"


def kept_lines(kept: KeptNotetype) -> list[str]:
    """The bank's `anki_notetype:`, as `bank.kept` reads it."""
    q = yaml_string
    out = [
        "# The adopted deck's own Anki note type, kept so its learners keep their cards and",
        "# history: ankigen's card is drawn from these fields. See docs/round-trip.md.",
        "anki_notetype:",
        f"  id: {kept.id}",
        f"  name: {q(kept.name)}",
        f"  fields: {_flow(kept.fields)}",
        f"  template: {q(kept.template)}",
        f"  question: {q(kept.question)}",
        f"  choices: {_flow(kept.choices)}",
        f"  answer: {q(kept.answer)}",
        f"  answer_format: {kept.answer_format}",
    ]
    out += [
        f"  {key}: {q(getattr(kept, key))}"
        for key in ("explanation", "kind", "sort_field")
        if getattr(kept, key)
    ]
    out.append(f"  adopted: {kept.adopted}")
    return out


# the places `item_lines` leaves to the author, and a value that fills each
_LEFT_TO_AUTHOR = (
    (re.compile(rf"^(\s*)answer: ~  {TODO}.*$", re.MULTILINE), r"\1answer: 1"),
    (re.compile(rf'^(\s*)explanation: ""  {TODO}.*$', re.MULTILINE), r'\1explanation: "-"'),
)


def filled_in(text: str) -> str:
    """A written bank with its TODO places filled in, so that it can be checked as the
    author's bank will be: a first choice as the answer, an explanation of one dash."""
    for pattern, value in _LEFT_TO_AUTHOR:
        text = pattern.sub(value, text)
    return text


def reads_as_yaml(shown: str) -> Callable[[bytes], None]:
    """A check for `userfile.Target`, for an imported bank, whose problems (its TODOs
    first) the import has reported: the text must read as YAML, a bank's mapping."""

    def check(data: bytes) -> None:
        try:
            root = yamltree.compose_text(shown, yamltree.decode(shown, data))
        except YamlProblem as problem:
            raise InvalidBanks([problem.diagnostic]) from None
        if not isinstance(root, yaml.MappingNode):
            raise InvalidBanks([Diagnostic(shown, 1, "error", "the bank is not a mapping")])

    return check
