"""Safe YAML reading that keeps line numbers.

libyaml composes the document into nodes that carry their source marks; we
never construct arbitrary Python objects from them. Tags other than the
standard scalar and collection tags, anchors and aliases are refused.
"""

from __future__ import annotations

import re
from collections.abc import Container, Iterator
from dataclasses import dataclass
from typing import Any, cast

import yaml

from ankigen.core.errors import Diagnostic

MAX_FILE_BYTES = 16 * 1024 * 1024

STR = "tag:yaml.org,2002:str"
SEQ = "tag:yaml.org,2002:seq"
MAP = "tag:yaml.org,2002:map"
NULL = "tag:yaml.org,2002:null"
BOOL = "tag:yaml.org,2002:bool"
INT = "tag:yaml.org,2002:int"
FLOAT = "tag:yaml.org,2002:float"
_DEFAULT_TAG: dict[type, str] = {
    yaml.ScalarNode: STR,
    yaml.SequenceNode: SEQ,
    yaml.MappingNode: MAP,
}


def _make_loader() -> Any:
    try:
        from yaml._yaml import CParser
    except ImportError:  # pragma: no cover - PyYAML built without libyaml: slower, same result
        return yaml.SafeLoader

    class Loader(CParser):
        """libyaml's parser and composer, with no implicit typing: every plain scalar
        stays a string until `scalar_type` is asked, and only for the values that need
        a type (answers, flags). Resolving every scalar in Python makes PyYAML slow."""

        def resolve(self, kind: type, value: object, implicit: object) -> str:
            return _DEFAULT_TAG[kind]

        def descend_resolver(self, current_node: object, current_index: object) -> None:
            pass

        def ascend_resolver(self) -> None:
            pass

    return Loader


_Loader = _make_loader()


# YAML 1.1 plain scalars, as PyYAML's resolver reads them
_PLAIN_TYPES = (
    (NULL, re.compile(r"~|null|Null|NULL|")),
    (
        BOOL,
        re.compile(r"yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF"),
    ),
    (
        INT,
        re.compile(
            r"[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+"
            r"|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+"
        ),
    ),
    (
        FLOAT,
        re.compile(
            r"[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?"
            r"|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)"
        ),
    ),
)


def scalar_type(node: yaml.Node) -> str:
    """The YAML type of a scalar: an explicit standard tag, or what a plain scalar spells."""
    if node.tag != STR or getattr(node, "style", None):  # libyaml gives '' for plain
        return str(node.tag)
    for tag, pattern in _PLAIN_TYPES:
        if pattern.fullmatch(node.value):
            return tag
    return STR


_STANDARD_TAGS = frozenset(
    "tag:yaml.org,2002:" + name
    for name in ("str", "int", "float", "bool", "null", "seq", "map", "timestamp")
)


@dataclass(frozen=True)
class YamlProblem(Exception):
    """The file could not be read as a safe YAML document."""

    diagnostic: Diagnostic


def _problem(path: str, line: int, message: str, column: int = 0) -> YamlProblem:
    return YamlProblem(Diagnostic(path, line, "error", message, column))


def line_of(node: yaml.Node) -> int:
    return int(node.start_mark.line) + 1


def compose_file(path: str, data: bytes) -> yaml.Node | None:
    """Compose the single YAML document in `data`; raise YamlProblem if unsafe or invalid."""
    return compose_text(path, decode(path, data))


def decode(path: str, data: bytes) -> str:
    """The text of a YAML file: UTF-8 within the size limit, without NUL or byte order mark."""
    if len(data) > MAX_FILE_BYTES:
        raise _problem(
            path, 1, f"file is {len(data)} bytes; banks are limited to {MAX_FILE_BYTES} bytes"
        )
    encoding = other_encoding(data)
    if encoding:
        raise _problem(
            path,
            1,
            f"this file looks like {encoding}, not UTF-8: save it as UTF-8 "
            f"(for example `iconv -f {encoding} -t UTF-8 FILE > NEW`)",
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        guess = "WINDOWS-1252" if _looks_like_cp1252(data) else None
        hint = (
            f"; it looks like {guess}: convert it with `iconv -f {guess} -t UTF-8 FILE > NEW`"
            if guess
            else ": save it as UTF-8"
        )
        raise _problem(path, line, f"not UTF-8 text (byte {exc.start}){hint}") from None
    if "\x00" in text:
        raise _problem(path, text[: text.index("\x00")].count("\n") + 1, "file contains NUL bytes")
    return text.removeprefix("\ufeff")


def compose_text(path: str, text: str) -> yaml.Node | None:
    """Compose the single YAML document in `text`; raise YamlProblem if unsafe or invalid."""
    if "&" in text or "*" in text:
        _refuse_anchors(path, text)
    try:
        loader = _Loader(text)
        try:
            node = loader.get_single_node()
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        column = mark.column + 1 if mark is not None else 0
        message = f"YAML syntax: {exc.problem or exc.context}"
        if "unknown escape" in message:
            # the usual cause is math such as "\(x\)" written in double quotes
            message += "; in double quotes write a backslash as \\\\, or use single quotes"
        if exc.context and exc.context_mark is not None and exc.context_mark.line + 1 != line:
            message += f" ({exc.context} started at line {exc.context_mark.line + 1})"
        raise _problem(path, line, message, column) from None
    except yaml.reader.ReaderError as exc:
        line = text[: exc.position].count("\n") + 1
        code = exc.character if isinstance(exc.character, int) else ord(exc.character)
        raise _problem(
            path, line, f"YAML: the control character U+{code:04X} is not allowed"
        ) from None
    except yaml.YAMLError as exc:
        raise _problem(path, 1, f"YAML: {exc}") from None
    if node is not None and "!" in text:  # a tag needs a '!' in the source
        _check_tags(path, node)
    return cast(yaml.Node | None, node)


# Items are composed a slice of the file at a time: libyaml's node tree for a whole
# 10,000-item bank takes about 100 MiB, and what it leaves in the allocator stays.
BATCH_BYTES = 128 * 1024

# Each pattern starts at a line's "\n": the engine then skips to the next one at
# once, where "^" with re.M had it try every character (a third of the split).
_ITEMS_KEY = re.compile(r"\nitems:[ \t]*(?:#[^\n]*)?\r?(?=\n|$)")
_DOCUMENT_MARK = re.compile(r"\n(?:---|\.\.\.)(?:[ \t\r\n]|$)")
_DASH = re.compile(r"-(?:[ \t\r\n]|$)")
_CONTENT_LINE = re.compile(r"\n( *)([^ \r\n])")


class Unsplit(Exception):
    """The items could not be composed apart from the document: compose it whole."""


@dataclass(frozen=True)
class ItemsLayout:
    """Where a bank's top-level block list `items:` lies, found from its lines alone.

    Every item starts with a dash at the list's indentation; nothing less indented
    but comments lies inside the list. The split is trusted only as far as libyaml
    confirms it: each slice must compose on its own into exactly its items, else
    the document is composed whole. A wrong split cuts a quoted scalar or a flow
    collection open, which no slice composes.
    """

    text: str
    head: str  # the document with `items: []` and the list's lines blank
    starts: tuple[int, ...]  # offset of each item's first line
    lines: tuple[int, ...]  # its line number
    end: int  # offset just past the list


def _other_breaks(text: str) -> bool:
    """Line breaks YAML counts that `\n` does not: the lines would be miscounted."""
    if "\x85" in text or "\u2028" in text or "\u2029" in text:
        return True
    return "\r" in text and text.count("\r") != text.count("\r\n")


def items_layout(text: str) -> ItemsLayout | None:
    """The items' layout, or None where the text is not plainly laid out."""
    if _other_breaks(text):
        return None
    keys = list(_ITEMS_KEY.finditer(text))
    if len(keys) != 1 or text.startswith("items:"):
        return None  # a bank that starts with its items is composed whole
    found = keys[0]
    key = found.start() + 1  # where the line starts
    body = text.find("\n", found.end()) + 1
    if body == 0 or _DOCUMENT_MARK.search(text, body - 1):
        return None
    first = _CONTENT_LINE.search(text, body - 1)
    while first is not None and first.group(2) == "#":
        first = _CONTENT_LINE.search(text, first.end())
    if first is None or not _DASH.match(text, first.start(2)):
        return None
    indent = len(first.group(1))
    # lines no deeper than the items' dashes, other than blank lines and comments
    shallow = re.compile(rf"\n {{0,{indent}}}(?=[^ \r\n#])")
    starts: list[int] = []
    lines: list[int] = []
    end = len(text)
    line, counted = text.count("\n", 0, first.start() + 1) + 1, first.start() + 1
    for match in shallow.finditer(text, first.start()):
        start, at = match.start() + 1, match.end()
        if text[at] == "\t":
            return None
        if at - start != indent or not _DASH.match(text, at):
            end = start
            break
        line += text.count("\n", counted, at)
        counted = at
        starts.append(start)
        lines.append(line)
    blank = "\n" * text.count("\n", body, end)
    head = text[:key] + "items: []" + text[key + 6 : body] + blank + text[end:]
    return ItemsLayout(text, head, tuple(starts), tuple(lines), end)


def compose_items(
    path: str, layout: ItemsLayout, skip: Container[int] = ()
) -> Iterator[list[tuple[int, yaml.Node]]]:
    """The item nodes of a laid-out bank with their numbers (but those in `skip`), a
    slice of the file at a time, each node marked with its line in the file; raise
    Unsplit where a slice does not compose into just its own items."""
    starts, count = layout.starts, len(layout.starts)
    # each slice is padded with the lines above it: a file of mostly blank lines
    # would have libyaml read them once per slice, so past a budget it is read whole
    budget = len(layout.text) + (1 << 20)
    first = 0
    while first < count:
        if first in skip:
            first += 1
            continue
        budget -= layout.lines[first]
        if budget < 0:
            raise Unsplit
        last = first + 1
        limit = starts[first] + BATCH_BYTES
        while last < count and starts[last] < limit and last not in skip:
            last += 1
        stop = starts[last] if last < count else layout.end
        # padded so that libyaml's marks are the lines of the file
        padded = "\n" * (layout.lines[first] - 2) + "items:\n" + layout.text[starts[first] : stop]
        try:
            root = compose_text(path, padded)
        except YamlProblem:
            raise Unsplit from None
        nodes = _only_items(root)
        if nodes is None or len(nodes) != last - first:
            raise Unsplit
        bounds = (*layout.lines[first + 1 : last], 1 << 62)
        for node, line, below in zip(nodes, layout.lines[first:last], bounds, strict=True):
            if not line <= line_of(node) < below:
                raise Unsplit
        yield list(zip(range(first, last), nodes, strict=True))
        first = last


def item_text(layout: ItemsLayout, number: int) -> str:
    """The lines of item `number`, as they are in the file."""
    stop = layout.starts[number + 1] if number + 1 < len(layout.starts) else layout.end
    return layout.text[layout.starts[number] : stop]


def _only_items(root: yaml.Node | None) -> list[yaml.Node] | None:
    if not isinstance(root, yaml.MappingNode) or len(root.value) != 1:
        return None
    value = root.value[0][1]
    return list(value.value) if isinstance(value, yaml.SequenceNode) else None


def other_encoding(data: bytes) -> str | None:
    """UTF-16 and UTF-32, by byte order mark or by the NUL bytes ASCII text gets in them."""
    if data.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        return "UTF-32"
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "UTF-16"
    head = data[:200]
    if len(head) >= 4 and head.count(0) * 3 >= len(head):
        even, odd = head[0::2].count(0), head[1::2].count(0)
        if max(even, odd) * 4 >= len(head) and min(even, odd) * 10 <= len(head):
            return "UTF-16LE" if odd > even else "UTF-16BE"
    return None


def _looks_like_cp1252(data: bytes) -> bool:
    try:
        data.decode("cp1252")
    except UnicodeDecodeError:
        return False
    return True


def _refuse_anchors(path: str, text: str) -> None:
    loader = _Loader(text)
    try:
        while loader.check_event():
            event = loader.get_event()
            line = event.start_mark.line + 1 if event.start_mark is not None else 1
            if isinstance(event, yaml.AliasEvent):
                raise _problem(path, line, "YAML aliases are not allowed")
            if getattr(event, "anchor", None):
                raise _problem(path, line, "YAML anchors are not allowed")
    except yaml.YAMLError:
        return  # compose reports syntax errors with the same marks
    finally:
        loader.dispose()


def _check_tags(path: str, root: yaml.Node) -> None:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.tag not in _STANDARD_TAGS:
            raise _problem(path, line_of(node), f"YAML tag {node.tag!r} is not allowed")
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack.append(key)
                stack.append(value)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
