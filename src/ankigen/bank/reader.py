"""Reading a bank file (`parse_bank`, `load_bank`): every problem in it collected as a
Diagnostic at its line, and items whose lines are unchanged reused as they were read."""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import yaml

from ankigen.bank import yamltree
from ankigen.bank.fastread import (
    item_seal,
    read_plain_item,
    read_text_item,
)
from ankigen.bank.kept import (
    asks_explanations,
    check_items,
    check_uncarried,
    read_carried,
    read_kept,
)
from ankigen.bank.keys import (
    BANK_KEYS,
    BANK_TEXT_LIMITS,
    ITEM_KEYS,
    REQUIRED_BANK_KEYS,
    REQUIRED_ITEM_KEYS,
)
from ankigen.bank.model import (
    MAX_DECK_PART,
    MAX_ID,
    MAX_ITEMS,
    SLUG,
    Bank,
    Item,
    KeptNotetype,
)
from ankigen.bank.values import (
    Reader,
    check_slug,
    read_bank_formerly,
    read_card,
    read_names,
    shared_keys,
    typed_null,
)
from ankigen.bank.yamltree import YamlProblem, line_of
from ankigen.core.errors import Diagnostic
from ankigen.text import lang


def load_bank(path: Path) -> tuple[Bank | None, list[Diagnostic]]:
    """Read and check one bank file. Returns the bank (None if it has errors) and all problems."""
    shown = str(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        return None, [Diagnostic(shown, 1, "error", f"cannot read: {exc.strerror}")]
    return parse_bank(shown, data)


def parse_bank(
    path: str, data: bytes, previous: Iterable[Item] = ()
) -> tuple[Bank | None, list[Diagnostic]]:
    """The bank in `data`, with every problem found in reading it. Items of `previous`
    (the same file as last read) whose lines are unchanged are taken as they are."""
    try:
        text = yamltree.decode(path, data)
    except YamlProblem as problem:
        return None, [problem.diagnostic]
    layout = yamltree.items_layout(text)
    if layout is not None:
        reuse = {item.chunk: item for item in previous if item.chunk}
        try:
            return _parse_text(path, layout.head, layout, reuse)
        except (YamlProblem, yamltree.Unsplit):
            pass  # composed whole, the document says what is wrong with it
    try:
        return _parse_text(path, text, None, {})
    except YamlProblem as problem:
        return None, [problem.diagnostic]


@dataclass(frozen=True)
class Readable:
    """What reads well of a bank that has errors (`readable_part`)."""

    bank: Bank
    """Its settings, and those of its items that read well."""
    listed: tuple[tuple[str | None, int], ...] | None
    """The id and line of every item the file lists, read well or not (None for an id
    that does not read); None if `items` is not a list."""


def readable_part(path: str, data: bytes) -> Readable | None:
    """Of a bank that has errors, what reads well, if its settings do (topic, language,
    title): enough to check it against the others for all that does not depend on the
    parts in error, such as two banks with one deck name or a translation's items."""
    try:
        root = yamltree.compose_text(path, yamltree.decode(path, data))
        bank = _read_bank(Reader(path), root, None, {}) if root is not None else None
    except YamlProblem:
        return None
    if bank is None or root is None:
        return None
    return Readable(bank, _listed(root))


def _listed(root: yaml.Node) -> tuple[tuple[str | None, int], ...] | None:
    if not isinstance(root, yaml.MappingNode):
        return None
    found = [v for k, v in root.value if isinstance(k, yaml.ScalarNode) and k.value == "items"]
    # `items` twice is an error of its own: which list holds the bank's items is not told
    if len(found) != 1 or not isinstance(found[0], yaml.SequenceNode):
        return None
    listed = []
    for node in found[0].value:
        peeked = _peek_id(node)
        valid = peeked is not None and SLUG.fullmatch(peeked) and len(peeked) <= MAX_ID
        listed.append((peeked if valid else None, line_of(node)))
    return tuple(listed)


def _parse_text(
    path: str, text: str, layout: yamltree.ItemsLayout | None, reuse: dict[int, Item]
) -> tuple[Bank | None, list[Diagnostic]]:
    reader = Reader(path)
    root = yamltree.compose_text(path, text)
    if root is None:
        reader.report(1, "empty file: a bank needs topic, language, title and items")
        return None, reader.diagnostics
    bank = _read_bank(reader, root, layout, reuse)
    has_errors = any(d.severity == "error" for d in reader.diagnostics)
    return (None if has_errors else bank), sorted(reader.diagnostics)


def _read_bank(
    r: Reader, root: yaml.Node, layout: yamltree.ItemsLayout | None, reuse: dict[int, Item]
) -> Bank | None:
    keys = r.mapping(root, BANK_KEYS, "bank")
    if keys is None:
        return None
    for key in REQUIRED_BANK_KEYS:
        if key not in keys:
            r.report(root, f"bank: missing key {key!r}")
    title, texts = _bank_texts(r, keys)
    topic = _bank_topic(r, keys["topic"]) if "topic" in keys else None
    language = _bank_language(r, keys["language"]) if "language" in keys else None
    formerly = read_bank_formerly(r, keys["formerly"]) if "formerly" in keys else ((), ())
    bank_tags = r.tag_list(keys["tags"], "tags") if "tags" in keys else ()
    shuffle = r.boolean(keys["shuffle"], "shuffle") if "shuffle" in keys else True
    recall = r.boolean(keys["recall"], "recall") if "recall" in keys else False
    _check_deck(r, keys, texts["deck"])
    shuffle = shuffle if shuffle is not None else True
    items, kept = _bank_items(r, keys, layout, reuse, shuffle, bool(recall))
    if topic is None or language is None or title is None or formerly is None:
        return None
    return Bank(
        path=r.path,
        topic=topic,
        language=language,
        title=title,
        items=tuple(items),
        description=texts["description"],
        level=texts["level"],
        tags=bank_tags or (),
        deck=texts["deck"],
        shuffle=shuffle,
        source=texts["source"],
        license=texts["license"],
        formerly_topics=formerly[0],
        formerly_languages=formerly[1],
        lines={sys.intern(key): r.key_line(node) for key, node in keys.items()},
        recall=bool(recall),
        anki_notetype=kept,
    )


def _bank_texts(r: Reader, keys: dict[str, yaml.Node]) -> tuple[str | None, dict[str, str]]:
    """The bank's title (None if missing or wrong), and its description, level, deck,
    source and license ("" if not given)."""
    limits = BANK_TEXT_LIMITS
    title = r.text(keys["title"], "title", limit=limits["title"]) if "title" in keys else None
    texts = {}
    for key in ("description", "level", "deck", "source", "license"):
        limit = limits[key]
        text = r.text(keys[key], key, required=False, limit=limit) if key in keys else None
        texts[key] = text or ""
    return title, texts


def _bank_topic(r: Reader, node: yaml.Node) -> str | None:
    topic = r.text(node, "topic")
    if topic is None:
        return None
    if not SLUG.fullmatch(topic):
        r.report(node, f"topic {topic!r} is not a slug (a-z, 0-9 and '-')")
        return None
    if len(topic) > MAX_ID:
        r.report(node, f"topic is longer than {MAX_ID} characters")
        return None
    if topic.startswith("backup-"):
        r.report(
            node,
            f"topic {topic!r}: Anki treats files named 'backup-*' as collection backups "
            "and would replace the learner's collection; choose another topic",
        )
        return None
    return topic


def _bank_language(r: Reader, node: yaml.Node) -> str | None:
    language = r.text(node, "language")
    if language is None:
        return None
    if not lang.is_valid_tag(language):
        r.report(node, f"language {language!r} is not a BCP 47 tag such as en or pt-BR")
        return None
    return lang.canonical_tag(language)


def _check_deck(r: Reader, keys: dict[str, yaml.Node], deck: str) -> None:
    if isinstance(deck, str) and deck and any(not part.strip() for part in deck.split("::")):
        r.report(keys["deck"], f"deck {deck!r} has an empty part around '::'")
    elif isinstance(deck, str) and any(len(part) > MAX_DECK_PART for part in deck.split("::")):
        r.report(
            keys["deck"], f"deck: a part between '::' is longer than {MAX_DECK_PART} characters"
        )


def _bank_items(
    r: Reader,
    keys: dict[str, yaml.Node],
    layout: yamltree.ItemsLayout | None,
    reuse: dict[int, Item],
    shuffle: bool,
    recall: bool,
) -> tuple[list[Item], KeptNotetype | None]:
    """The bank's items, and the kept note type whose fields they carry, if any."""
    items: list[Item] = []
    if "items" in keys:
        explained = asks_explanations(keys.get("anki_notetype"))
        items = list(_read_items(r, keys["items"], layout, reuse, shuffle, recall, explained))
    kept = read_kept(r, keys["anki_notetype"]) if "anki_notetype" in keys else None
    if kept is not None:
        check_items(r, kept, items)
    elif "anki_notetype" not in keys:  # (a wrong one is reported, not each item's fields)
        check_uncarried(r, items)
    return items, kept


def _read_items(
    r: Reader,
    node: yaml.Node,
    layout: yamltree.ItemsLayout | None,
    reuse: dict[int, Item],
    default_shuffle: bool,
    default_recall: bool,
    explained: bool = True,
) -> Iterator[Item]:
    defaults = (default_shuffle, default_recall)
    if layout is not None:
        count, where = len(layout.starts), layout.lines[0]
        items = _laid_out_items(r, layout, reuse, defaults, explained)
    elif isinstance(node, yaml.SequenceNode):
        count, where = len(node.value), line_of(node)
        items = (
            _read_item(r, item_node, *defaults, explained=explained) for item_node in node.value
        )
    else:
        r.report(node, "items must be a list of items")
        return
    if not count:
        r.report(where, "items: the bank has no items")
    if count > MAX_ITEMS:
        r.report(where, f"items: {count} items; a bank holds at most {MAX_ITEMS}")
        return
    seen: dict[str, int] = {}
    for item in items:
        if item is None:
            continue
        line = item.line_at("id")
        if item.id in seen:
            r.report(line, f"duplicate item id {item.id!r} (first used at line {seen[item.id]})")
            continue
        seen[item.id] = line
        yield item


def _laid_out_items(
    r: Reader,
    layout: yamltree.ItemsLayout,
    reuse: dict[int, Item],
    defaults: tuple[bool, bool],
    explained: bool = True,
) -> Iterator[Item | None]:
    """The items in order: those whose lines (and the defaults they were read with) are
    unchanged as they were, moved to their new lines; those laid out as ankigen writes
    them read from their text; the others composed a slice at a time. A slice's nodes
    are gone once the next is composed, so the key lines recorded for them go too (their
    ids will be reused)."""
    # an item read where no explanation is asked is not one where it is
    prefix = f"{defaults}{'' if explained else ' unexplained'}\0".encode()
    texts = [yamltree.item_text(layout, n) for n in range(len(layout.starts))]
    chunks = [
        int.from_bytes(hashlib.blake2b(prefix + text.encode(), digest_size=8).digest()) or 1
        for text in texts
    ]
    kept = {
        n: reuse[chunk]
        for n, chunk in enumerate(chunks)
        if chunk in reuse and reuse[chunk].seal == item_seal(reuse[chunk])
    }
    # those read from their text are not composed: libyaml's nodes cost more than reading
    for n, (text, line, chunk) in enumerate(zip(texts, layout.lines, chunks, strict=True)):
        if n not in kept:
            item = read_text_item(text, line, defaults, chunk)
            if item is not None:
                kept[n] = item
    bank_keys = dict(r.key_lines)
    batches = yamltree.compose_items(r.path, layout, skip=kept)
    batch: Iterator[tuple[int, yaml.Node]] = iter(())
    for number, line in enumerate(layout.lines):
        if number in kept:
            item = kept[number]
            yield item if item.line == line else replace(item, line=line)
            continue
        found = next(batch, None)
        if found is None:
            r.key_lines = dict(bank_keys)
            batch = iter(next(batches))
            found = next(batch)
        index, item_node = found
        assert index == number  # compose_items skips exactly the kept items
        # an item not on its dash's line is read again next time (its lines would move)
        chunk = chunks[number] if line_of(item_node) == line else 0
        yield _read_item(r, item_node, *defaults, chunk=chunk, explained=explained)


def _peek_id(node: yaml.Node) -> str | None:
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            is_id = isinstance(key, yaml.ScalarNode) and key.value == "id"
            if is_id and isinstance(value, yaml.ScalarNode) and not typed_null(value):
                return str(value.value).strip() or None
    return None


def _read_item(
    r: Reader,
    node: yaml.Node,
    default_shuffle: bool,
    default_recall: bool,
    chunk: int = 0,
    explained: bool = True,
) -> Item | None:
    plain = read_plain_item(node, default_shuffle, default_recall, chunk)
    if plain is not None:
        return plain
    problems = len(r.diagnostics)
    peeked = _peek_id(node)
    what = f"item {peeked!r}" if peeked else "item"
    line = line_of(node)
    keys = r.mapping(node, ITEM_KEYS, what)
    if keys is None:
        return None
    item_id = _item_id(r, node, keys, what, explained)
    inner_lines: dict[str, int] = {}  # of each choice, and of each carried field
    whys: list[str] = []
    card = read_card(r, keys, what, whys, inner_lines, explained)
    options = _item_options(r, keys, what, default_shuffle, default_recall, inner_lines)
    media = _item_media(r, keys, what)
    if item_id is None or card is None or options is None or media is None:
        return None
    question, explanation, choices, answer = card
    tags, shuffle, retired, recall, formerly, carried = options
    item = Item(
        id=item_id,
        question=question,
        choices=choices,
        answer=answer,
        explanation=explanation,
        tags=tags,
        shuffle=shuffle,
        retired=retired,
        image=media["image"],
        image_alt=media["image_alt"],
        explanation_image=media["explanation_image"],
        explanation_image_alt=media["explanation_image_alt"],
        formerly=formerly,
        line=line,
        line_keys=shared_keys((*keys, *inner_lines)),
        line_offsets=(
            *(r.key_line(value) - line for value in keys.values()),
            *(n - line for n in inner_lines.values()),
        ),
        whys=tuple(whys) if any(whys) else (),
        recall=recall,
        anki_fields=carried,
        # an item read with a problem is read again next time, to report it again
        chunk=chunk if len(r.diagnostics) == problems else 0,
    )
    if item.chunk:
        # as a frozen dataclass's own __init__ sets its fields: the seal needs the item
        object.__setattr__(item, "seal", item_seal(item))
    return item


def _item_id(
    r: Reader, node: yaml.Node, keys: dict[str, yaml.Node], what: str, explained: bool = True
) -> str | None:
    """The item's id, if it is a valid one; the item's missing keys reported (not its
    explanation, where none is asked: `bank.kept.asks_explanations`)."""
    item_id = r.text(keys["id"], f"{what}: id") if "id" in keys else None
    for key in REQUIRED_ITEM_KEYS:
        if key not in keys and (explained or key != "explanation"):
            r.report(node, f"{what}: missing key {key!r}")
    if item_id is not None and not SLUG.fullmatch(item_id):
        r.report(keys["id"], f"{what}: id is not a slug (a-z, 0-9 and '-')")
        return None
    if item_id is not None and len(item_id) > MAX_ID:
        r.report(keys["id"], f"{what}: id is longer than {MAX_ID} characters")
        return None
    return item_id


_Options = tuple[tuple[str, ...], bool, bool, bool, tuple[str, ...], tuple[tuple[str, str], ...]]
"""An item's tags, shuffle, retired, recall, formerly and anki_fields."""


def _item_options(
    r: Reader,
    keys: dict[str, yaml.Node],
    what: str,
    default_shuffle: bool,
    default_recall: bool,
    inner_lines: dict[str, int],
) -> _Options | None:
    """The item's optional keys, if all are valid: tags, shuffle, retired, recall,
    formerly and anki_fields."""
    tags = r.tag_list(keys["tags"], f"{what}: tags") if "tags" in keys else ()
    shuffle = (
        r.boolean(keys["shuffle"], f"{what}: shuffle") if "shuffle" in keys else default_shuffle
    )
    retired = r.boolean(keys["retired"], f"{what}: retired") if "retired" in keys else False
    recall = r.boolean(keys["recall"], f"{what}: recall") if "recall" in keys else default_recall
    formerly = (
        read_names(r, keys["formerly"], f"{what}: formerly", check_slug)
        if "formerly" in keys
        else ()
    )
    carried = (
        read_carried(r, keys["anki_fields"], what, inner_lines) if "anki_fields" in keys else ()
    )
    if tags is None or shuffle is None or retired is None or formerly is None:
        return None
    if recall is None or carried is None:
        return None
    return tags, shuffle, retired, recall, formerly, carried


def _item_media(r: Reader, keys: dict[str, yaml.Node], what: str) -> dict[str, str] | None:
    """The item's images and their alt texts ("" where not given), if all are valid."""
    media = {
        key: r.text(keys[key], f"{what}: {key}", required=False) if key in keys else ""
        for key in ("image", "image_alt", "explanation_image", "explanation_image_alt")
    }
    if None in media.values():
        return None
    return {key: text or "" for key, text in media.items()}
