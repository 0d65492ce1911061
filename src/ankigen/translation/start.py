"""`ankigen translate`: start a language from the topic's reference bank, or add what it lacks.

A new translation gets every item of the reference: the same ids, answers,
shuffle settings, tags and images, with every text still in the reference
language. It builds (a deck in the reference language is better than none),
and lint, status and the preview count each such item as untranslated until
its text changes, because it is the reference's text (see
`checks.translation.same_as_reference`). With `update`, only the items the translation
lacks are inserted, in the reference's order, and nothing else in the file
changes: not a comment, not a quote.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import yaml

from ankigen.bank.edit import OpenBank, open_bank, write_banks
from ankigen.bank.model import Bank, Item
from ankigen.bank.project import require_project
from ankigen.bank.schema import with_schema_comment
from ankigen.bank.workspace import find_bank_paths
from ankigen.bank.yamltree import YamlProblem, compose_file
from ankigen.checks.run import check_paths
from ankigen.checks.translation import reference_language
from ankigen.core.errors import AnkigenError, Diagnostic, InvalidBanks
from ankigen.formats.bankyaml import bank_yaml, item_lines
from ankigen.formats.model import from_bank
from ankigen.text import lang
from ankigen.translation.renamed import rename_items, renames


class TranslationError(AnkigenError):
    """A translation cannot be started or updated as asked."""


@dataclass(frozen=True)
class Started:
    bank: OpenBank
    """The translation as it was read by `--update`, or where a new one goes."""
    text: str
    """The bank file's new content."""
    added: tuple[str, ...]
    """Ids of the items added."""
    reference: Bank
    renamed: tuple[tuple[str, str], ...] = ()
    """The items given the new ids the reference renamed them to: (old, new)."""

    @property
    def path(self) -> Path:
        return self.bank.path


def reference_bank(
    paths: Sequence[Path], topic: str, reference: str | None = None
) -> tuple[Bank, list[Bank]]:
    """The topic's reference bank and all its banks; InvalidBanks if the reference has errors."""
    checked = check_paths(paths)
    group = [b for b in checked.banks if b.topic == topic]
    # a topic renamed since (`formerly: {topic: ...}`): a PO file made before is its
    renamed = {b.topic for b in checked.banks if topic in b.formerly_topics}
    if not group and len(renamed) == 1:
        topic = renamed.pop()
        group = [b for b in checked.banks if b.topic == topic]
    # a broken bank of the topic could be its reference, or the translation a change is
    # for: never guess another one
    broken = _errors_of_topic(checked.diagnostics, topic)
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
    ref, group = reference_bank(paths, topic, reference)
    path, language = translation_path(banks_dir, group, ref, refuse_reference(ref, language))
    if path.exists() and not update:
        raise TranslationError(
            f"{path} exists: --update adds the items it lacks and changes nothing else"
        )
    opened = open_bank(path, ref.topic, language, source=f"the translation of {ref.path}")
    if opened.text is None or opened.bank is None:
        text = new_bank_text(ref, language, path)
        return Started(opened, text, tuple(i.id for i in ref.items), ref)
    new_text, added = add_missing(opened.text, str(path), ref, opened.bank)
    renamed = tuple(renames(ref, opened.bank).items())
    return Started(opened, new_text, added, ref, renamed)


def translation_path(
    banks_dir: Path, group: Sequence[Bank], reference: Bank, language: str
) -> tuple[Path, str]:
    """Where the topic's bank in `language` is, and the language it says: the bank whose
    header names it, wherever its file is (`BANKS/<topic>/<language>.yaml` is only the
    convention), or the one that had it before (`formerly: {language: ...}`: a PO file
    made before the rename); else the conventional path, for a new bank. Without this,
    a translation kept elsewhere got a second bank beside it. TranslationError where that
    is the reference (`language` its former one) or two banks claim it."""
    for has in (lambda b: b.language == language, lambda b: language in b.formerly_languages):
        found = [bank for bank in group if has(bank)]
        if any(bank.path == reference.path for bank in found):
            raise TranslationError(
                f"{language!r} is a language {reference.path} had before "
                f"(formerly:): the reference of {reference.topic!r}, which a translation "
                "never rewrites"
            )
        if len(found) > 1:
            raise TranslationError(
                f"{' and '.join(b.path for b in found)} are both the bank of "
                f"{reference.topic!r} in {language!r}: keep one"
            )
        if found:
            return Path(found[0].path), found[0].language
    return banks_dir / reference.topic / f"{language}.yaml", language


def claims(bank: Bank, language: str) -> bool:
    """Whether `bank` is the topic's bank in `language`: it says so, or did (`formerly:`)."""
    return bank.language == language or language in bank.formerly_languages


def regional_bank(group: Sequence[Bank], reference: Bank, language: str) -> Bank | None:
    """The translation a PO file in `language` goes into where no bank says `language`
    (nor had it, `formerly:`): the one bank of the topic whose language differs from it
    in a region alone (`lang.but_for_region`: the team's `de`, the translator's tool's
    `de_DE`); None where there is none, or more than one to choose from."""
    if any(claims(bank, language) for bank in group):
        return None
    found = [
        bank
        for bank in group
        if bank.path != reference.path and lang.but_for_region(bank.language, language)
    ]
    return found[0] if len(found) == 1 else None


def _errors_of_topic(diagnostics: Sequence[Diagnostic], topic: str) -> list[Diagnostic]:
    """The errors of the topic's banks: by their folder, or by their header wherever the
    file is (a bank that does not load has no header to read otherwise); each file with
    errors read once."""
    errored = {d.path for d in diagnostics if d.severity == "error"}
    theirs = {p for p in errored if Path(p).parent.name == topic or _names_topic(Path(p), topic)}
    return [d for d in diagnostics if d.severity == "error" and d.path in theirs]


_TOPIC_LINE = re.compile(rb"""^topic:[ \t]*["']?([A-Za-z0-9-]+)["']?[ \t]*(?:#.*)?\r?$""", re.M)


def _names_topic(path: Path, topic: str) -> bool:
    """Whether the file's header says `topic: TOPIC`, read without loading it."""
    try:
        found = _TOPIC_LINE.search(path.read_bytes()[:65536])
    except OSError:
        return False
    return found is not None and found[1].decode("ascii") == topic


def refuse_reference(ref: Bank, language: str) -> str:
    """`language` in canonical case; TranslationError if it is the reference's own, or if
    the reference has items without an explanation (an adopted note type with no field for
    one), which a translation, a deck of ankigen's note type, needs."""
    language = lang.canonical_tag(language)
    if language == ref.language:
        raise TranslationError(f"{language!r} is the reference language of {ref.topic!r}")
    unexplained = [item.id for item in ref.items if not item.explanation]
    if unexplained:
        # a translation is a deck of ankigen's own note type, whose cards show one
        raise TranslationError(
            f"{ref.path}: {len(unexplained)} item(s) have no explanation ({unexplained[0]!r} "
            "first), which its adopted note type has no field for; a translation is a deck "
            "of ankigen's own note type, whose cards show one: write them in the reference first"
        )
    return language


def new_bank_text(ref: Bank, language: str, path: Path) -> str:
    """A new translation, to be written at `path`: every item of the reference, every
    field kept (a `why`, `recall`, images), each text still the reference's. The deck name
    and the bank's older names are the reference's own, not the translation's. Its first
    line names the bank schema, for an editor."""
    # nor is an adopted deck's note type, kept for its learners: a translation is a new deck
    source = replace(from_bank(ref), deck="", formerly=((), ()), anki_notetype=None)
    comments = (
        f"Translation of {ref.path} into {language}: every text below is still the",
        f"{ref.language!r} text; lint and status count an item untranslated until it changes.",
    )
    ids = [item.id for item in ref.items]
    return with_schema_comment(path, bank_yaml(source, ids, ref.topic, language, comments))


def add_missing(text: str, path: str, ref: Bank, target: Bank) -> tuple[str, tuple[str, ...]]:
    """`text` (the target bank) with the reference's items it lacks inserted in order, and
    its items the reference renamed since given their new ids (`translation.renamed`)."""
    renamed = renames(ref, target)
    if renamed:
        text = rename_items(text, _items_node(text, path), ref, renamed)
    have = {renamed.get(i.id, i.id) for i in target.items}
    missing = [i for i in ref.items if i.id not in have]
    if not missing:
        return text, ()
    return _inserted(text, path, ref, target, missing), tuple(i.id for i in missing)


def _inserted(text: str, path: str, ref: Bank, target: Bank, missing: list[Item]) -> str:
    """`text` with the `missing` items of the reference inserted, each before the first
    item that follows it in the reference, in the file's own indentation."""
    items_node = _items_node(text, path)
    lines = text.splitlines(keepends=True)
    starts = {}  # item id -> (line index of its dash, dash column)
    for node in items_node.value:
        item_id = _scalar(node, "id")
        if item_id is not None:
            starts[item_id] = (node.start_mark.line, _dash_column(lines, node.start_mark))
    indent = next(iter(starts.values()))[1] if starts else 2
    ref_order = [i.id for i in ref.items]
    inserts: dict[int, list[str]] = {}
    end_line = _end_line(items_node, lines)
    # the items added take the target's defaults: a `shuffle` or `recall` of the
    # reference's that differs from them is stated on the item
    # nor the reference's carried fields: they are its adopted notes', not the target's
    questions = {q.name: replace(q, anki_fields=()) for q in from_bank(ref).questions}
    defaults = replace(from_bank(target), questions=())
    for item in missing:
        later = [i for i in ref_order[ref_order.index(item.id) + 1 :] if i in starts]
        at = starts[later[0]][0] if later else end_line
        added = item_lines(questions[item.id], item.id, defaults, indent)
        inserts.setdefault(at, []).extend(line + "\n" for line in added)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    out: list[str] = []
    for number, line in enumerate(lines):
        out.extend(inserts.pop(number, []))
        out.append(line)
    for at in sorted(inserts):
        out.extend(inserts[at])
    return "".join(out)


def _dash_column(lines: list[str], mark: yaml.Mark) -> int:
    """The column of the `-` that starts the item whose mapping starts at `mark`: an item
    may be laid out `-   id:` or `- id:`, or its first key may be on the next line."""
    line = lines[mark.line] if mark.line < len(lines) else ""
    before = line[: mark.column].rstrip()
    if before.endswith("-"):
        return len(before) - 1
    return max(mark.column - 2, 0)


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


def write_translation(
    banks_dir: Path, topic: str, language: str, *, update: bool = False, force: bool = False
) -> Started:
    """`translate`: the new or updated bank, written (a bank that would not load never is)."""
    paths = find_bank_paths(banks_dir)
    reference_tag = require_project(banks_dir).reference or None
    started = start(banks_dir, paths, topic, language, update=update, reference=reference_tag)
    if update and not started.added and not started.renamed:
        return started
    write_banks([(started.bank, started.text)], force=force)
    return started
