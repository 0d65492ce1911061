"""Items the reference renamed (`formerly:`) after a translation was made.

The translation's item takes the new id and keeps its own old one in `formerly`, so that
its learners' notes keep their GUID (a translation deck's notes were made under the id
the translation had); a PO file's entries made under the old id are the new id's. Before,
`translate --update` and a PO import added the renamed item beside the old one, which
then held an id the reference lists in `formerly`, and every build failed.
"""

from __future__ import annotations

import yaml

from ankigen.bank.model import Bank
from ankigen.core.errors import AnkigenError


def new_ids(reference: Bank) -> dict[str, str]:
    """Each id an item of the reference was once known by, and no item is now: its id."""
    live = {item.id for item in reference.items}
    return {old: item.id for item in reference.items for old in item.formerly if old not in live}


def with_new_id(context: str, renamed: dict[str, str]) -> str:
    """A PO context (`ITEM|field`) under the item's new id, if it was renamed."""
    item_id, bar, field = context.partition("|")
    return f"{renamed[item_id]}{bar}{field}" if bar and item_id in renamed else context


def renames(reference: Bank, target: Bank) -> dict[str, str]:
    """The target's ids the reference renamed, whose new id the target does not have yet."""
    have = {item.id for item in target.items}
    return {old: new for old, new in new_ids(reference).items() if old in have and new not in have}


def rename_items(
    text: str, items: yaml.SequenceNode, reference: Bank, renamed: dict[str, str]
) -> str:
    """`text`, whose `items` node is given, with each renamed item's id replaced and its
    older ids (the reference's `formerly` from its own id on) added after it; nothing
    else moves."""
    formerly = {item.id: item.formerly for item in reference.items}
    edits: list[tuple[int, int, str]] = []
    for node in items.value:
        found = _id_node(node)
        if found is None or found[1].value not in renamed:
            continue
        key, value = found
        old = str(value.value)
        new = renamed[old]
        if node.flow_style or any(k.value == "formerly" for k, _ in node.value):
            raise AnkigenError(
                f"item {old!r} was renamed {new!r} in the reference: give it that id and "
                f"`formerly: [{old}]` by hand (its layout is not one ankigen edits)"
            )
        chain = formerly[new][formerly[new].index(old) :]
        line_end = text.find("\n", value.end_mark.index)
        line_end = len(text) if line_end < 0 else line_end
        added = "\n" + " " * key.start_mark.column + f"formerly: [{', '.join(chain)}]"
        edits.append((value.start_mark.index, value.end_mark.index, new))
        edits.append((line_end, line_end, added))
    for start, end, new_text in sorted(edits, reverse=True):
        text = text[:start] + new_text + text[end:]
    return text


def _id_node(node: yaml.Node) -> tuple[yaml.ScalarNode, yaml.ScalarNode] | None:
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if key.value == "id" and isinstance(value, yaml.ScalarNode):
                return key, value
    return None
