"""A bank's texts by context, and a bank file's text with some of them replaced in place.

A context names one text the way a PO file's `msgctxt` does: `|title` for a bank's own
texts, `ITEM|question`, `ITEM|choice 2`, `ITEM|why 2`, `ITEM|explanation`,
`ITEM|image_alt`. `translate --po`, its import and `pull` all speak of texts this way.
"""

from __future__ import annotations

import re

import yaml

from ankigen.bank.model import Bank, Item
from ankigen.bank.yamltext import yaml_string
from ankigen.bank.yamltree import compose_file

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
    texts changed; nothing else moves. A choice's `why` the bank lacks is added to it.

    A text of several lines is written as a literal block (`|`), its lines as they are, as
    an author writes one; so is any text whose scalar already was a block. Where a block
    cannot hold it (inside a flow `[...]` or `{...}`, or a character YAML only spells
    escaped) it is double-quoted."""
    root = compose_file(path, text.encode("utf-8"))
    if not isinstance(root, yaml.MappingNode):
        return text, 0
    replacer = _Replacer(text, wanted)
    for key, value in root.value:
        if key.value in BANK_TEXTS:
            indent = None if root.flow_style else key.start_mark.column + 2
            replacer.visit(f"|{key.value}", value, indent)
        if key.value == "items" and isinstance(value, yaml.SequenceNode):
            for item in value.value:
                replacer.visit_item(item, bool(value.flow_style))
    for start, end, new in sorted(replacer.spans, reverse=True):
        text = text[:start] + new + text[end:]
    return text, replacer.changed


class _Replacer:
    """The spans of a bank file's text to replace, and what replaces each, found while
    `replace_texts` walks the file's nodes."""

    def __init__(self, text: str, wanted: dict[str, str]) -> None:
        self.text = text
        self.wanted = wanted
        self.line_starts = [0]
        for line in text.splitlines(keepends=True):
            self.line_starts.append(self.line_starts[-1] + len(line))
        self.spans: list[tuple[int, int, str]] = []
        self.changed = 0

    def offset(self, mark: yaml.Mark) -> int:
        return self.line_starts[mark.line] + mark.column

    def span(self, node: yaml.Node) -> tuple[int, int]:
        start, end = self.offset(node.start_mark), self.offset(node.end_mark)
        # a block scalar's span runs to the next key: keep its line breaks
        return start, start + len(self.text[start:end].rstrip())

    def line_end(self, at: int) -> int:
        found = self.text.find("\n", at)
        return len(self.text) if found < 0 else found

    def written(self, node: yaml.ScalarNode, new: str, indent: int | None) -> tuple[int, int, str]:
        """The span of `node` and what replaces it: `new` as a block at `indent` (None: in
        a flow, where none can be), keeping a comment after it, or double-quoted."""
        text, line_end = self.text, self.line_end
        start, end = self.span(node)
        block = node.style in ("|", ">") or "\n" in new
        if indent is None or not block or not _fits_block(new):
            return start, end, yaml_string(new)
        if node.style in ("|", ">"):
            # its indicator line keeps its comment; its lines keep their indentation
            header = _INDICATOR.sub("", text[start : line_end(start)], count=1)
            body = text[line_end(start) : end].lstrip("\n")
            indent = len(body) - len(body.lstrip(" ")) or indent
        else:  # a comment after it on its line goes on the block's first line
            header, end = text[end : line_end(end)], line_end(end)
        return start, end, f"|{header}\n{_block_lines(new, indent)}"

    def differs(self, context: str, node: yaml.ScalarNode) -> bool:
        return context in self.wanted and str(node.value).strip() != self.wanted[context]

    def visit(self, context: str, node: yaml.Node | None, indent: int | None) -> None:
        if isinstance(node, yaml.ScalarNode) and self.differs(context, node):
            self.spans.append(self.written(node, self.wanted[context], indent))
            self.changed += 1

    def visit_item(self, item: yaml.Node, in_flow: bool) -> None:
        if not isinstance(item, yaml.MappingNode):
            return
        fields = {k.value: (k, v) for k, v in item.value}
        item_id = fields.get("id", (None, None))[1]
        if not isinstance(item_id, yaml.ScalarNode):
            return
        flow = in_flow or bool(item.flow_style)
        for name in ITEM_TEXTS:
            if name in fields:
                key_node, node = fields[name]
                indent = None if flow else key_node.start_mark.column + 2
                self.visit(f"{item_id.value}|{name}", node, indent)
        choices = fields.get("choices", (None, None))[1]
        if isinstance(choices, yaml.SequenceNode):
            for n, choice in enumerate(choices.value, start=1):
                self.visit_choice(item_id.value, n, choice, flow or bool(choices.flow_style))

    def visit_choice(self, item_id: str, number: int, node: yaml.Node, flow: bool) -> None:
        choice, why = f"{item_id}|choice {number}", f"{item_id}|why {number}"
        if isinstance(node, yaml.ScalarNode):
            if why not in self.wanted:
                self.visit(choice, node, None if flow else node.start_mark.column)
            else:
                self.give_why(choice, why, node, flow)
        elif isinstance(node, yaml.MappingNode):
            self.visit_choice_mapping(choice, why, node, flow)

    def give_why(self, choice: str, why: str, node: yaml.ScalarNode, flow: bool) -> None:
        """A plain choice given a why: `{text: ..., why: ...}`, or a block mapping."""
        text, wanted, q = self.text, self.wanted, yaml_string
        column = node.start_mark.column
        now = wanted.get(choice, str(node.value).strip())
        self.changed += 1 + self.differs(choice, node)
        start, end = self.span(node)
        if flow or "\n" not in now + wanted[why]:
            self.spans.append((start, end, f"{{text: {q(now)}, why: {q(wanted[why])}}}"))
            return
        # one of several lines: a block mapping, each text a block where it can be
        comment, end, was = text[end : self.line_end(end)], self.line_end(end), text[start:end]
        if self.differs(choice, node) or "\n" in was:
            text_part = _scalar(now, column + 2, comment)
        else:  # as the author wrote it
            text_part = was + comment
        why_part = _scalar(wanted[why], column + 2, "")
        self.spans.append((start, end, f"text: {text_part}\n{' ' * column}why: {why_part}"))

    def visit_choice_mapping(
        self, choice: str, why: str, node: yaml.MappingNode, flow: bool
    ) -> None:
        flow = flow or bool(node.flow_style)
        keys = {k.value: (k, v) for k, v in node.value if isinstance(k, yaml.ScalarNode)}
        for name, context in (("text", choice), ("why", why)):
            if name in keys:
                key, value = keys[name]
                self.visit(context, value, None if flow else key.start_mark.column + 2)
        if why in self.wanted and "why" not in keys and "text" in keys:
            key, value = keys["text"]
            if flow:  # after the text, as the mapping's next key
                end = self.span(value)[1]
                self.spans.append((end, end, f", why: {yaml_string(self.wanted[why])}"))
            else:  # on the line after the text's, at its column
                end = self.line_end(self.span(value)[1])
                column = key.start_mark.column
                new = _scalar(self.wanted[why], column + 2, "")
                self.spans.append((end, end, f"\n{' ' * column}why: {new}"))
            self.changed += 1


_INDICATOR = re.compile(r"^[|>][-+0-9]*")

# what a block scalar cannot hold as written: controls but tab and line feed, YAML's
# other line breaks, a byte order mark, noncharacters and surrogates
_UNBLOCKABLE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]"
)


def _fits_block(text: str) -> bool:
    """Whether a literal block reads back exactly `text` (the reader strips a text, so
    white space around it would need indicators a block here does not have)."""
    return bool(text) and text == text.strip() and not _UNBLOCKABLE.search(text)


def _block_lines(text: str, indent: int) -> str:
    pad = " " * indent
    return "\n".join(pad + line if line else "" for line in text.split("\n"))


def _scalar(text: str, indent: int, comment: str) -> str:
    """A new value in block context: a block if it has several lines and one holds it,
    else double-quoted; `comment` (what followed on its line) after its first line."""
    if "\n" in text and _fits_block(text):
        return f"|{comment}\n{_block_lines(text, indent)}"
    return yaml_string(text) + comment
