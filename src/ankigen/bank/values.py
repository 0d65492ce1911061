"""One YAML value read into one field of the bank format, each problem at its line
(`Reader`); the small rules every reader shares (slugs, tags, answers, choices)."""

from __future__ import annotations

import re
import sys
import unicodedata
from collections.abc import Callable, Sequence

import yaml

from ankigen.bank import keys, yamltree
from ankigen.bank.model import (
    MAX_CHOICES,
    MAX_ID,
    MAX_SHORT_TEXT,
    MAX_TAGS,
    MIN_CHOICES,
    SLUG,
    UNCARRIED_BMP,
)
from ankigen.bank.yamltree import line_of
from ankigen.core.errors import Diagnostic, Severity
from ankigen.text import lang, markup
from ankigen.text.html import INVISIBLE, visible_text

_NULL = yamltree.NULL
_INT = yamltree.INT
_BOOL = yamltree.BOOL
scalar_type = yamltree.scalar_type


_UNCARRIED = re.compile(
    "["
    + UNCARRIED_BMP
    + "\ud800-\udfff"
    + "".join(f"\\U{plane:04x}fffe\\U{plane:04x}ffff" for plane in range(1, 17))
    + "]"
)
"""Characters no card, XML file, GIFT or CSV carries: controls but tab and line breaks,
surrogates and noncharacters (a double-quoted YAML string can spell them all)."""


def uncarried(value: str) -> str | None:
    """The first such character in `value`, as U+XXXX, or None."""
    if value.isprintable():
        return None
    found = _UNCARRIED.search(value)
    return f"U+{ord(found[0]):04X}" if found else None


class Reader:
    """Walks the composed YAML and collects diagnostics."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.diagnostics: list[Diagnostic] = []
        self.key_lines: dict[int, int] = {}

    def key_line(self, value: yaml.Node) -> int:
        """The line of the key that `value` belongs to (a block list starts a line later)."""
        line = self.key_lines.get(id(value))
        return line_of(value) if line is None else line

    def report(
        self, node_or_line: yaml.Node | int, message: str, severity: Severity = "error"
    ) -> None:
        if isinstance(node_or_line, int):
            line, column = node_or_line, 0
        else:
            line, column = line_of(node_or_line), node_or_line.start_mark.column + 1
        self.diagnostics.append(Diagnostic(self.path, line, severity, message, column))

    def mapping(
        self, node: yaml.Node, known: Sequence[str], what: str
    ) -> dict[str, yaml.Node] | None:
        if not isinstance(node, yaml.MappingNode):
            self.report(node, f"{what} must be a mapping of keys to values")
            return None
        out: dict[str, yaml.Node] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                self.report(key_node, f"{what}: keys must be plain names")
                continue
            key = key_node.value
            if key in out:
                self.report(key_node, f"{what}: duplicate key {key!r}")
                continue
            if key not in known:
                import difflib  # only for a key misspelt: 5 ms of every edit's build

                hint = difflib.get_close_matches(key, known, n=1)
                suggestion = f"; did you mean {hint[0]!r}?" if hint else ""
                self.report(key_node, f"{what}: unknown key {key!r}{suggestion}")
                continue
            out[key] = value_node
            self.key_lines[id(value_node)] = line_of(key_node)
        return out

    def text(
        self, node: yaml.Node, what: str, *, required: bool = True, limit: int = MAX_SHORT_TEXT
    ) -> str | None:
        if not isinstance(node, yaml.ScalarNode):
            self.report(node, f"{what} must be text")
            return None
        # numbers and yes/no keep the author's spelling: `0.10` stays `0.10`
        value = "" if is_null(node) else str(node.value).strip()
        if required and not value:
            self.report(node, f"{what} is empty")
            return None
        if required and visually_empty(value):
            self.report(
                node, f"{what} is visually empty (only tags, spaces or invisible characters)"
            )
            return None
        if len(value) > limit:
            self.report(node, f"{what} is {len(value)} characters long; the limit is {limit}")
            return None
        bad = uncarried(value)
        if bad:
            self.report(
                node, f"{what} contains {bad}, a control character or noncharacter: remove it"
            )
            return None
        return value

    def rich_text(
        self, node: yaml.Node, what: str, *, required: bool = True, limit: int = MAX_SHORT_TEXT
    ) -> str | None:
        """Item text, which may hold code blocks and math: checked at the line of each problem."""
        value = self.text(node, what, required=required, limit=limit)
        if value and ("`" in value or "\\" in value):
            for problem in markup.problems(value):
                line = text_line(node, value, problem.line)
                self.report(line, f"{what}: {problem.message}", problem.severity)
        return value

    def boolean(self, node: yaml.Node, what: str) -> bool | None:
        if isinstance(node, yaml.ScalarNode) and scalar_type(node) == _BOOL:
            return str(node.value).lower() in ("true", "yes", "on", "y")
        self.report(node, f"{what} must be true or false")
        return None

    def tag_list(self, node: yaml.Node, what: str) -> tuple[str, ...] | None:
        if not isinstance(node, yaml.SequenceNode):
            self.report(node, f"{what} must be a list of tags")
            return None
        tags: list[str] = []
        if len(node.value) > MAX_TAGS:
            self.report(node, f"{what}: {len(node.value)} tags; the limit is {MAX_TAGS}")
            return None
        for tag_node in node.value:
            tag = self.text(tag_node, f"{what}: tag")
            if tag is None:
                continue
            if any(ch.isspace() for ch in tag):
                self.report(tag_node, f"{what}: tag {tag!r} contains white space")
                continue
            tags.append(tag)
        return tuple(tags)


NULL_SPELLINGS = frozenset(("", "~", "null", "Null", "NULL"))


def visually_empty(value: str) -> bool:
    """Only tags, spaces or invisible characters: a reader sees nothing."""
    # the usual text is printable and has a letter or digit outside any tag: seen at once,
    # unless its letters may be fillers that draw nothing (Hangul's are letters)
    if (
        "<" not in value
        and value.isprintable()
        and any(map(str.isalnum, value))
        and _BLANK_LETTERS.isdisjoint(value)
    ):
        return False
    return not visible_text(value)


_BLANK_LETTERS = frozenset(c for c in INVISIBLE if c.isalnum())


def is_null(node: yaml.Node) -> bool:
    # cheaper than scalar_type for the common case: most text is not a null spelling
    return node.value in NULL_SPELLINGS and scalar_type(node) == _NULL


def typed_null(node: yaml.Node) -> bool:
    """`scalar_type(node) == NULL`, without trying every plain type's pattern on the
    usual text: a plain or quoted string that is no null spelling is a string."""
    if node.value not in NULL_SPELLINGS and node.tag == yamltree.STR:
        return False
    return scalar_type(node) == _NULL


_SHARED_KEYS: dict[tuple[str, ...], tuple[str, ...]] = {}


def shared_keys(keys: tuple[str, ...]) -> tuple[str, ...]:
    """One tuple for every item with these keys in this order, its names interned."""
    shared = _SHARED_KEYS.get(keys)
    if shared is None:
        shared = _SHARED_KEYS.setdefault(keys, tuple(map(sys.intern, keys)))
    return shared


def lookalike_key(text: str) -> str:
    """Text as a reader sees it: Unicode-normalized (Anki stores NFC), invisible
    characters dropped, runs of white space within a line made one space, and its line
    breaks kept (`20 40 60` and the same numbers a line each are two answers to "what
    does it print?"; empty lines do not count)."""
    if not text.isascii():  # ASCII is already NFC and has no invisible characters
        text = unicodedata.normalize("NFC", text)
        if _INVISIBLE.search(text):
            text = _INVISIBLE.sub("", text)
    if "<" in text:  # an empty pair of inline tags shows nothing: `yes<b></b>` is `yes`
        text = _EMPTY_TAGS.sub("", text)
    if "\n" not in text:
        return " ".join(text.split())
    return "\n".join(filter(None, (" ".join(line.split()) for line in text.split("\n"))))


_EMPTY_TAGS = re.compile(r"<(b|i|u|sub|sup|code)>\s*</\1>", re.IGNORECASE)


_INVISIBLE = re.compile("[" + re.escape("".join(sorted(INVISIBLE))) + "]")


def check_slug(value: str) -> str | None:
    if not SLUG.fullmatch(value) or len(value) > MAX_ID:
        return f"{value!r} is not a slug (a-z, 0-9 and '-')"
    return None


def check_tag(value: str) -> str | None:
    if not lang.is_valid_tag(value):
        return f"{value!r} is not a BCP 47 tag such as en or pt-BR"
    return None


def read_names(
    r: Reader, node: yaml.Node, what: str, check: Callable[[str], str | None]
) -> tuple[str, ...] | None:
    """One name or a list of names, each checked; older names, oldest first."""
    nodes = node.value if isinstance(node, yaml.SequenceNode) else [node]
    names: list[str] = []
    ok = True
    for name_node in nodes:
        name = r.text(name_node, what)
        problem = check(name) if name is not None else "empty"
        if name is None or problem:
            if name is not None:
                r.report(name_node, f"{what}: {problem}")
            ok = False
            continue
        if name in names:
            r.report(name_node, f"{what}: {name!r} is listed twice")
            ok = False
            continue
        names.append(name)
    if not names and ok:
        r.report(node, f"{what} is empty")
        return None
    return tuple(names) if ok else None


def read_bank_formerly(
    r: Reader, node: yaml.Node
) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    found = r.mapping(node, keys.names(keys.FORMERLY_KEYS), "formerly")
    if found is None:
        return None
    if not found:
        r.report(node, "formerly: name the older topic and/or language")
        return None
    topics = (
        read_names(r, found["topic"], "formerly: topic", check_slug) if "topic" in found else ()
    )
    languages = (
        read_names(r, found["language"], "formerly: language", check_tag)
        if "language" in found
        else ()
    )
    if topics is None or languages is None:
        return None
    return topics, tuple(lang.canonical_tag(tag) for tag in languages)


CHOICE_KEYS = keys.names(keys.CHOICE_KEYS)


def read_choice(
    r: Reader, node: yaml.Node, what: str, whys: list[str]
) -> tuple[str | None, yaml.Node]:
    """A choice is text, or a mapping with its `text` and a `why`; returns the text and its node."""
    if not isinstance(node, yaml.MappingNode):
        whys.append("")
        return r.rich_text(node, what), node
    keys = r.mapping(node, CHOICE_KEYS, what)
    if keys is None:
        return None, node
    why = r.rich_text(keys["why"], f"{what}: why", required=False) if "why" in keys else ""
    whys.append(why or "")
    if "text" not in keys:
        r.report(node, f"{what}: missing key 'text'")
        return None, node
    return r.rich_text(keys["text"], what), keys["text"]


def read_choices(
    r: Reader,
    node: yaml.Node,
    what: str,
    whys: list[str] | None = None,
    lines: dict[str, int] | None = None,
) -> tuple[str, ...] | None:
    if not isinstance(node, yaml.SequenceNode):
        r.report(node, f"{what}: choices must be a list")
        return None
    whys = [] if whys is None else whys
    choices: list[str] = []
    ok = True
    first: dict[str, tuple[int, yaml.Node, str]] = {}
    for number, item_node in enumerate(node.value, start=1):
        choice, choice_node = read_choice(r, item_node, f"{what}: choice {number}", whys)
        if lines is not None:
            lines[f"choice {number}"] = line_of(item_node)
        if choice is None:
            ok = False
            continue
        key = lookalike_key(choice)
        if key in first:
            other, other_node, text = first[key]
            how = "repeats" if text == choice else "looks the same as"
            r.report(
                choice_node,
                f"{what}: choice {number} {how} choice {other} at line {line_of(other_node)}"
                + ("" if text == choice else f" ({choice!r} and {text!r})"),
            )
            ok = False
        first.setdefault(key, (number, choice_node, choice))
        choices.append(choice)
    count = len(node.value)
    if count < MIN_CHOICES or count > MAX_CHOICES:
        r.report(node, f"{what}: has {count} choices; an item needs {MIN_CHOICES} to {MAX_CHOICES}")
        ok = False
    return tuple(choices) if ok else None


def read_answer(
    r: Reader, node: yaml.Node, what: str, choice_count: int | None
) -> tuple[int, ...] | None:
    kind = scalar_type(node) if isinstance(node, yaml.ScalarNode) else None
    if kind == _NULL:
        r.report(node, f"{what}: answer is missing: set the number of the correct choice")
        return None
    numbers = node.value if isinstance(node, yaml.SequenceNode) else [node]
    if isinstance(node, yaml.SequenceNode) and not numbers:
        r.report(node, f"{what}: answer is an empty list")
        return None
    answer: list[int] = []
    for number_node in numbers:
        if number_node is not node:  # a list's numbers; the answer itself is typed above
            kind = scalar_type(number_node) if isinstance(number_node, yaml.ScalarNode) else None
        if kind != _INT:
            r.report(number_node, f"{what}: answer must be a choice number or a list of them")
            return None
        spelled = str(number_node.value)
        if not PLAIN_NUMBER.fullmatch(spelled):
            r.report(
                number_node,
                f"{what}: answer {spelled!r} must be written as a plain number such as 2 "
                "(YAML reads a leading zero as octal, 0x as hexadecimal)",
            )
            return None
        number = parse_int(spelled)
        if number is None:
            r.report(number_node, f"{what}: answer must be a choice number or a list of them")
            return None
        if choice_count is not None and not 1 <= number <= choice_count:
            r.report(
                number_node,
                f"{what}: answer {number} is out of range; "
                f"choices are numbered 1 to {choice_count}",
            )
            return None
        if number in answer:
            r.report(number_node, f"{what}: answer {number} is listed twice")
            return None
        answer.append(number)
    return tuple(sorted(answer))


def text_line(node: yaml.Node, value: str, offset: int) -> int:
    """The file line of line `offset` (0-based) of a stripped text read from `node`."""
    line = line_of(node)
    style = getattr(node, "style", None)
    if style in ("|", ">"):
        # a block scalar starts on the line after its indicator; stripped blank lines count too
        raw = str(node.value)
        line += 1 + raw.count("\n", 0, len(raw) - len(raw.lstrip()))
        return line + offset
    # a quoted or plain text's lines are not the file's (`"a\nb"` is one line, a blank
    # line folds into one line break): a line within the text, never past its end
    return min(line + offset, int(node.end_mark.line) + 1)


PLAIN_NUMBER = re.compile(r"[1-9][0-9]*|0")


def parse_int(text: str) -> int | None:
    try:
        return int(text.replace("_", ""), 0)
    except ValueError:
        try:
            return int(text.replace("_", ""))
        except ValueError:
            return None


def read_card(
    r: Reader,
    found: dict[str, yaml.Node],
    what: str,
    whys: list[str],
    inner_lines: dict[str, int],
    explained: bool = True,
) -> tuple[str, str, tuple[str, ...], tuple[int, ...]] | None:
    """An item's question, explanation, choices and answer, if all are valid; with
    `explained` false, an explanation may be missing or empty (`bank.kept.asks_explanations`)."""
    question = (
        r.rich_text(found["question"], f"{what}: question", limit=keys.ITEM_TEXT_LIMITS["question"])
        if "question" in found
        else None
    )
    explanation = (
        r.rich_text(
            found["explanation"],
            f"{what}: explanation",
            required=explained,
            limit=keys.ITEM_TEXT_LIMITS["explanation"],
        )
        if "explanation" in found
        else (None if explained else "")
    )
    choices = (
        read_choices(r, found["choices"], what, whys, inner_lines) if "choices" in found else None
    )
    choice_count = (
        len(found["choices"].value) if isinstance(found.get("choices"), yaml.SequenceNode) else None
    )
    answer = read_answer(r, found["answer"], what, choice_count) if "answer" in found else None
    if explanation is None and _left_empty(found.get("explanation")):
        # an error, said above; the item is still read for the checks of what it holds,
        # as an import leaves every explanation its source lacked (`# TODO`), and lint
        # said nothing of those items' other problems until each had one
        explanation = ""
    if question is None or explanation is None or choices is None or answer is None:
        return None
    assert question and choices
    return question, explanation, choices, answer


def _left_empty(node: yaml.Node | None) -> bool:
    """No explanation, or one with no text at all (not one that is wrong)."""
    return node is None or (
        isinstance(node, yaml.ScalarNode) and (is_null(node) or not str(node.value).strip())
    )
