"""`ankigen translate`: start a language from the topic's reference bank, or add what it lacks.

A new translation gets every item of the reference: the same ids, answers,
shuffle settings, tags and images, with every text still in the reference
language. It builds (a deck in the reference language is better than none),
and lint, status and the preview count each such item as untranslated until
its text changes, because it is the reference's text (see
`lint.same_as_reference`). With `update`, only the items the translation
lacks are inserted, in the reference's order, and nothing else in the file
changes: not a comment, not a quote.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from ankigen import lang
from ankigen.bank import Bank, Item, parse_bank
from ankigen.errors import AnkigenError, InvalidBanks
from ankigen.formats.bankyaml import yaml_string
from ankigen.lint import check_paths, reference_language
from ankigen.yamltree import YamlProblem, compose_file


class TranslationError(AnkigenError):
    """A translation cannot be started or updated as asked."""


@dataclass(frozen=True)
class Started:
    path: Path
    text: str
    """The bank file's new content."""
    added: tuple[str, ...]
    """Ids of the items added."""
    reference: Bank


def reference_bank(
    paths: Sequence[Path], topic: str, reference: str | None = None
) -> tuple[Bank, list[Bank]]:
    """The topic's reference bank and all its banks; InvalidBanks if the reference has errors."""
    checked = check_paths(paths)
    group = [b for b in checked.banks if b.topic == topic]
    # a broken bank of the topic could be its reference: never guess another one
    broken = [
        d
        for d in checked.diagnostics
        if d.severity == "error" and Path(d.path).parent.name == topic
    ]
    if broken:
        raise InvalidBanks(broken)
    if reference is not None:
        wanted = lang.canonical_tag(reference)
        chosen = [b for b in group if b.language == wanted]
        if not chosen:
            raise TranslationError(
                f"topic {topic!r} has no bank in the reference language {wanted!r}"
            )
        return chosen[0], group
    if not group:
        raise TranslationError(f"no bank has the topic {topic!r}")
    return reference_language(group), group


def start(
    banks_dir: Path,
    paths: Sequence[Path],
    topic: str,
    language: str,
    *,
    update: bool = False,
    reference: str | None = None,
) -> Started:
    """The new or updated bank for `language`; nothing is written here."""
    ref, _ = reference_bank(paths, topic, reference)
    language = lang.canonical_tag(language)
    if language == ref.language:
        raise TranslationError(f"{language!r} is the reference language of {topic!r}")
    path = banks_dir / topic / f"{language}.yaml"
    if not path.exists():
        return Started(path, new_bank_text(ref, language), tuple(i.id for i in ref.items), ref)
    if not update:
        raise TranslationError(
            f"{path} exists: --update adds the items it lacks and changes nothing else"
        )
    text = path.read_bytes().decode("utf-8", errors="replace")
    target = load_target(path)
    new_text, added = add_missing(text, str(path), ref, target)
    return Started(path, new_text, added, ref)


def load_target(path: Path) -> Bank:
    bank, found = parse_bank(str(path), path.read_bytes())
    if bank is None:
        raise InvalidBanks(found)
    return bank


def new_bank_text(ref: Bank, language: str) -> str:
    q = yaml_string
    out = [
        f"# Translation of {ref.path} into {language}: every text below is still the",
        f"# {ref.language!r} text; lint and status count an item untranslated until it changes.",
        f"topic: {ref.topic}",
        f"language: {language}",
        f"title: {q(ref.title)}",
    ]
    for key in ("description", "level", "source", "license"):
        value = getattr(ref, key)
        if value:
            out.append(f"{key}: {q(value)}")
    if ref.tags:
        out.append(f"tags: {_flow(ref.tags)}")
    if not ref.shuffle:
        out.append("shuffle: false")
    out.append("items:")
    for item in ref.items:
        out.extend(item_lines(item, ref.shuffle, indent=2))
    return "\n".join(out) + "\n"


def _flow(tags: Sequence[str]) -> str:
    return "[" + ", ".join(yaml_string(t) for t in tags) + "]"


def item_lines(item: Item, default_shuffle: bool, indent: int) -> list[str]:
    """One item as block YAML, its dash at column `indent`."""
    q = yaml_string
    pad = " " * (indent + 2)
    answer = (
        str(item.answer[0])
        if len(item.answer) == 1
        else "[" + ", ".join(map(str, item.answer)) + "]"
    )
    out = [
        " " * indent + f"- id: {item.id}",
        f"{pad}question: {q(item.question)}",
        f"{pad}choices:",
        *(f"{pad}  - {q(choice)}" for choice in item.choices),
        f"{pad}answer: {answer}",
        f"{pad}explanation: {q(item.explanation)}",
    ]
    if item.shuffle != default_shuffle:
        out.append(f"{pad}shuffle: {'true' if item.shuffle else 'false'}")
    if item.tags:
        out.append(f"{pad}tags: {_flow(item.tags)}")
    if item.retired:
        out.append(f"{pad}retired: true")
    for key in ("image", "image_alt", "explanation_image", "explanation_image_alt"):
        value = getattr(item, key)
        if value:
            out.append(f"{pad}{key}: {q(value)}")
    return out


def add_missing(text: str, path: str, ref: Bank, target: Bank) -> tuple[str, tuple[str, ...]]:
    """`text` (the target bank) with the reference's items it lacks inserted in order."""
    have = {i.id for i in target.items}
    missing = [i for i in ref.items if i.id not in have]
    if not missing:
        return text, ()
    items_node = _items_node(text, path)
    lines = text.splitlines(keepends=True)
    starts = {}  # item id -> (line index of its dash, dash column)
    for node in items_node.value:
        item_id = _scalar(node, "id")
        if item_id is not None:
            starts[item_id] = (node.start_mark.line, max(node.start_mark.column - 2, 0))
    indent = next(iter(starts.values()))[1] if starts else 2
    ref_order = [i.id for i in ref.items]
    inserts: dict[int, list[str]] = {}
    end_line = _end_line(items_node, lines)
    for item in missing:
        later = [i for i in ref_order[ref_order.index(item.id) + 1 :] if i in starts]
        at = starts[later[0]][0] if later else end_line
        inserts.setdefault(at, []).extend(
            line + "\n" for line in item_lines(item, target.shuffle, indent)
        )
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    out: list[str] = []
    for number, line in enumerate(lines):
        out.extend(inserts.pop(number, []))
        out.append(line)
    for at in sorted(inserts):
        out.extend(inserts[at])
    return "".join(out), tuple(i.id for i in missing)


def _items_node(text: str, path: str) -> yaml.SequenceNode:
    try:
        root = compose_file(path, text.encode("utf-8"))
    except YamlProblem as problem:
        raise InvalidBanks([problem.diagnostic]) from None
    assert isinstance(root, yaml.MappingNode)  # the bank loaded, so it is a mapping
    for key, value in root.value:
        if key.value == "items" and isinstance(value, yaml.SequenceNode):
            if value.flow_style:
                raise TranslationError(
                    f"{path}: items is a [flow] list; write it as a block list to --update it"
                )
            return value
    raise TranslationError(f"{path}: no items list")


def _end_line(items: yaml.SequenceNode, lines: list[str]) -> int:
    """The line before which items appended to the list go: after its last item."""
    if not items.value:
        return int(items.end_mark.line) + (1 if items.end_mark.column else 0)
    last = items.value[-1].end_mark
    line = int(last.line) + (1 if last.column else 0)
    # keep comments and blank lines that follow the list where they are
    while line > 0 and line - 1 < len(lines) and not lines[line - 1].strip():
        line -= 1
    return line


def _scalar(node: yaml.Node, key: str) -> str | None:
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if k.value == key and isinstance(v, yaml.ScalarNode):
                return str(v.value)
    return None
