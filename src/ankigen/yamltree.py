"""Safe YAML reading that keeps line numbers.

libyaml composes the document into nodes that carry their source marks; we
never construct arbitrary Python objects from them. Tags other than the
standard scalar and collection tags, anchors and aliases are refused.
"""

from __future__ import annotations

from dataclasses import dataclass

import yaml

try:
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

from ankigen.errors import Diagnostic

MAX_FILE_BYTES = 16 * 1024 * 1024

_STANDARD_TAGS = frozenset(
    "tag:yaml.org,2002:" + name
    for name in ("str", "int", "float", "bool", "null", "seq", "map", "timestamp")
)


@dataclass(frozen=True)
class YamlProblem(Exception):
    """The file could not be read as a safe YAML document."""

    diagnostic: Diagnostic


def _problem(path: str, line: int, message: str) -> YamlProblem:
    return YamlProblem(Diagnostic(path, line, "error", message))


def line_of(node: yaml.Node) -> int:
    return int(node.start_mark.line) + 1


def compose_file(path: str, data: bytes) -> yaml.Node | None:
    """Compose the single YAML document in `data`; raise YamlProblem if unsafe or invalid."""
    if len(data) > MAX_FILE_BYTES:
        raise _problem(
            path, 1, f"file is {len(data)} bytes; banks are limited to {MAX_FILE_BYTES} bytes"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise _problem(path, line, f"not UTF-8 text (byte {exc.start}): save it as UTF-8") from None
    if "\x00" in text:
        raise _problem(path, text[: text.index("\x00")].count("\n") + 1, "file contains NUL bytes")
    text = text.removeprefix("\ufeff")
    if "&" in text or "*" in text:
        _refuse_anchors(path, text)
    try:
        node = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        message = f"YAML syntax: {exc.problem or exc.context}"
        if exc.context and exc.context_mark is not None and exc.context_mark.line + 1 != line:
            message += f" ({exc.context} started at line {exc.context_mark.line + 1})"
        raise _problem(path, line, message) from None
    except yaml.YAMLError as exc:
        raise _problem(path, 1, f"YAML: {exc}") from None
    if node is not None:
        _check_tags(path, node)
    return node


def _refuse_anchors(path: str, text: str) -> None:
    try:
        for event in yaml.parse(text, Loader=_Loader):
            line = event.start_mark.line + 1 if event.start_mark is not None else 1
            if isinstance(event, yaml.AliasEvent):
                raise _problem(path, line, "YAML aliases are not allowed")
            if getattr(event, "anchor", None):
                raise _problem(path, line, "YAML anchors are not allowed")
    except yaml.MarkedYAMLError:
        return  # compose reports syntax errors with the same marks


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
