"""A bank's texts by context, and a bank file's text with some of them replaced in place.

A context names one text the way a PO file's `msgctxt` does: `|title` for a bank's own
texts, `ITEM|question`, `ITEM|choice 2`, `ITEM|why 2`, `ITEM|explanation`,
`ITEM|image_alt`. `translate --po`, its import and `pull` all speak of texts this way.
"""

from __future__ import annotations

import yaml

from ankigen.bank.model import Bank, Item
from ankigen.bank.yamltree import compose_file
from ankigen.formats.bankyaml import yaml_string

ITEM_TEXTS = ("question", "explanation", "image_alt", "explanation_image_alt")
BANK_TEXTS = ("title", "description", "level")


def bank_contexts(bank: Bank) -> dict[str, str]:
    """Every translatable text of a bank by its msgctxt, in file order."""
    out = {f"|{key}": getattr(bank, key) for key in BANK_TEXTS if getattr(bank, key)}
    for item in bank.items:
        out.update(item_contexts(item))
    return out


def item_contexts(item: Item) -> dict[str, str]:
    """Every text of one item by its context, in file order."""
    out = {f"{item.id}|question": item.question}
    for number, choice in enumerate(item.choices, start=1):
        out[f"{item.id}|choice {number}"] = choice
        if item.why(number):
            out[f"{item.id}|why {number}"] = item.why(number)
    out[f"{item.id}|explanation"] = item.explanation
    for key in ("image_alt", "explanation_image_alt"):
        if getattr(item, key):
            out[f"{item.id}|{key}"] = getattr(item, key)
    return out


def replace_texts(text: str, path: str, wanted: dict[str, str]) -> tuple[str, int]:
    """`text` with the scalars named by msgctxt replaced where they differ, and how many
    texts changed; nothing else moves. A choice's `why` the bank lacks is added to it."""
    root = compose_file(path, text.encode("utf-8"))
    if not isinstance(root, yaml.MappingNode):
        return text, 0
    line_starts = [0]
    for line in text.splitlines(keepends=True):
        line_starts.append(line_starts[-1] + len(line))
    spans: list[tuple[int, int, str]] = []
    changed = 0
    q = yaml_string

    def span(node: yaml.Node) -> tuple[int, int]:
        start = line_starts[node.start_mark.line] + node.start_mark.column
        end = line_starts[node.end_mark.line] + node.end_mark.column
        # a block scalar's span runs to the next key: keep its line breaks
        return start, start + len(text[start:end].rstrip())

    def differs(context: str, node: yaml.ScalarNode) -> bool:
        return context in wanted and str(node.value).strip() != wanted[context]

    def visit(context: str, node: yaml.Node | None) -> None:
        nonlocal changed
        if isinstance(node, yaml.ScalarNode) and differs(context, node):
            spans.append((*span(node), q(wanted[context])))
            changed += 1

    def visit_choice(item_id: str, number: int, node: yaml.Node) -> None:
        nonlocal changed
        choice, why = f"{item_id}|choice {number}", f"{item_id}|why {number}"
        if isinstance(node, yaml.ScalarNode):
            if why not in wanted:
                visit(choice, node)
                return
            # a plain choice given a why becomes `{text: ..., why: ...}`
            now = wanted.get(choice, str(node.value).strip())
            spans.append((*span(node), f"{{text: {q(now)}, why: {q(wanted[why])}}}"))
            changed += 1 + differs(choice, node)
            return
        if not isinstance(node, yaml.MappingNode):
            return
        keys = {k.value: (k, v) for k, v in node.value if isinstance(k, yaml.ScalarNode)}
        visit(choice, keys.get("text", (None, None))[1])
        if "why" in keys:
            visit(why, keys["why"][1])
        elif why in wanted and "text" in keys:
            key, value = keys["text"]
            end = span(value)[1]
            # after the text, as the mapping's next key: in its flow or at its column
            before = ", " if node.flow_style else "\n" + " " * key.start_mark.column
            spans.append((end, end, f"{before}why: {q(wanted[why])}"))
            changed += 1

    for key, value in root.value:
        if key.value in BANK_TEXTS:
            visit(f"|{key.value}", value)
        if key.value == "items" and isinstance(value, yaml.SequenceNode):
            for item in value.value:
                if not isinstance(item, yaml.MappingNode):
                    continue
                fields = {k.value: v for k, v in item.value}
                item_id = fields.get("id")
                if not isinstance(item_id, yaml.ScalarNode):
                    continue
                for name in ITEM_TEXTS:
                    if name in fields:
                        visit(f"{item_id.value}|{name}", fields[name])
                choices = fields.get("choices")
                if isinstance(choices, yaml.SequenceNode):
                    for n, choice in enumerate(choices.value, start=1):
                        visit_choice(item_id.value, n, choice)
    for start, end, new in sorted(spans, reverse=True):
        text = text[:start] + new + text[end:]
    return text, changed
