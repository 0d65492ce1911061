"""Translation platforms: banks to gettext PO files and back, with polib.

One entry per text: the msgctxt names the item and field (`sharded-state|question`,
`sharded-state|choice 2`, `sharded-state|explanation`, `sharded-state|image_alt`;
`|title` and `|description` for the bank), the msgid is the reference text, the
msgstr the translation ("" while the text is still the reference's). The
header carries the topic, the language and the reference language.

Reading a PO file back writes only the texts whose msgstr is not empty, each
in place in the bank file: the rest of the file (comments, quoting, other
keys) stays as it was, so a round trip without edits changes nothing.
Fuzzy entries are skipped, as gettext does.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polib
import yaml

from ankigen import __version__, lang
from ankigen.bank import Bank, Item, parse_bank
from ankigen.errors import AnkigenError, Diagnostic, InvalidBanks
from ankigen.formats.bankyaml import yaml_string
from ankigen.translate import add_missing, new_bank_text
from ankigen.yamltree import compose_file

TOPIC_HEADER = "X-Ankigen-Topic"
REFERENCE_HEADER = "X-Ankigen-Reference"
ITEM_TEXTS = ("question", "explanation", "image_alt", "explanation_image_alt")
BANK_TEXTS = ("title", "description", "level")


class PoError(AnkigenError):
    """A PO file cannot be read or does not fit the banks."""


def _texts(bank: Bank) -> dict[str, str]:
    """Every translatable text of a bank by its msgctxt, in file order."""
    out = {f"|{key}": getattr(bank, key) for key in BANK_TEXTS if getattr(bank, key)}
    for item in bank.items:
        out.update(_item_texts(item))
    return out


def _item_texts(item: Item) -> dict[str, str]:
    out = {f"{item.id}|question": item.question}
    out.update({f"{item.id}|choice {n}": c for n, c in enumerate(item.choices, start=1)})
    out[f"{item.id}|explanation"] = item.explanation
    for key in ("image_alt", "explanation_image_alt"):
        if getattr(item, key):
            out[f"{item.id}|{key}"] = getattr(item, key)
    return out


def po_file(reference: Bank, language: str, target: Bank | None) -> polib.POFile:
    """The reference's texts, with the target's translations where it has them."""
    po = polib.POFile(wrapwidth=0)
    po.metadata = {
        "Project-Id-Version": f"{reference.topic}",
        "Language": language,
        "MIME-Version": "1.0",
        "Content-Type": "text/plain; charset=UTF-8",
        "Content-Transfer-Encoding": "8bit",
        "X-Generator": f"ankigen {__version__}",
        TOPIC_HEADER: reference.topic,
        REFERENCE_HEADER: reference.language,
    }
    translated = _texts(target) if target is not None else {}
    correct = {f"{i.id}|choice {n}" for i in reference.items for n in i.answer}
    for context, text in _texts(reference).items():
        mine = translated.get(context, "")
        entry = polib.POEntry(msgctxt=context, msgid=text, msgstr="" if mine == text else mine)
        if context in correct:
            entry.comment = "the correct choice"
        po.append(entry)
    return po


def write_po(reference: Bank, language: str, target: Bank | None, path: Path) -> int:
    """Write the PO file; returns how many entries are translated."""
    from ankigen.package import write_atomic

    po = po_file(reference, language, target)
    write_atomic(path, str(po).encode("utf-8"))
    return len(po.translated_entries())


@dataclass(frozen=True)
class PoImport:
    path: Path
    text: str
    topic: str
    language: str
    translated: int
    warnings: tuple[Diagnostic, ...]


def read_po(path: Path) -> polib.POFile:
    try:
        return polib.pofile(str(path), encoding="utf-8", wrapwidth=0)
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise PoError(f"{path}: not a readable PO file: {exc}") from None


def import_po(
    po_path: Path, banks_dir: Path, reference: Bank, target_path: Path | None = None
) -> PoImport:
    """The bank with the PO file's translations; nothing is written here."""
    po = read_po(po_path)
    language = po.metadata.get("Language", "").strip()
    if not lang.is_valid_tag(language):
        raise PoError(f"{po_path}: the header's Language {language!r} is not a BCP 47 tag")
    language = lang.canonical_tag(language)
    target_path = target_path or banks_dir / reference.topic / f"{language}.yaml"
    if target_path.exists():
        text = target_path.read_bytes().decode("utf-8")
        bank, found = parse_bank(str(target_path), text.encode("utf-8"))
        if bank is None:
            raise InvalidBanks(found)
        text, _ = add_missing(text, str(target_path), reference, bank)
    else:
        text = new_bank_text(reference, language)
    known = _texts(reference)
    wanted: dict[str, str] = {}
    warnings: list[Diagnostic] = []
    for entry in po:
        if entry.obsolete or "fuzzy" in entry.flags or not entry.msgstr:
            continue
        context = entry.msgctxt or ""
        if context not in known:
            warnings.append(
                Diagnostic(
                    str(po_path),
                    entry.linenum or 1,
                    "warning",
                    f"{context!r} is not a text of {reference.path}; skipped",
                )
            )
            continue
        if entry.msgid != known[context]:
            warnings.append(
                Diagnostic(
                    str(po_path),
                    entry.linenum or 1,
                    "warning",
                    f"{context!r}: the reference text changed since this PO file was made; "
                    "imported anyway: check the translation",
                )
            )
        wanted[context] = entry.msgstr
    text = replace_texts(text, str(target_path), wanted)
    bank, found = parse_bank(str(target_path), text.encode("utf-8"))
    if bank is None:
        raise InvalidBanks(found)
    return PoImport(target_path, text, reference.topic, language, len(wanted), tuple(warnings))


def replace_texts(text: str, path: str, wanted: dict[str, str]) -> str:
    """`text` with the scalars named by msgctxt replaced, when they differ; nothing else moves."""
    root = compose_file(path, text.encode("utf-8"))
    if not isinstance(root, yaml.MappingNode):
        return text
    line_starts = [0]
    for line in text.splitlines(keepends=True):
        line_starts.append(line_starts[-1] + len(line))
    spans: list[tuple[int, int, str]] = []

    def offset(mark: yaml.Mark) -> int:
        return line_starts[mark.line] + mark.column

    def visit(context: str, node: yaml.Node) -> None:
        new = wanted.get(context)
        if new is None or not isinstance(node, yaml.ScalarNode) or node.value == new:
            return
        start, end = offset(node.start_mark), offset(node.end_mark)
        # a block scalar's span runs to the next key: keep its line breaks
        end = start + len(text[start:end].rstrip())
        spans.append((start, end, yaml_string(new)))

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
                        visit(f"{item_id.value}|choice {n}", choice)
    for start, end, new in sorted(spans, reverse=True):
        text = text[:start] + new + text[end:]
    return text
