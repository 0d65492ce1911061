"""Translation platforms: banks to gettext PO files and back, with polib.

One entry per text: the msgctxt names the item and field (`sharded-state|question`,
`sharded-state|choice 2`, `sharded-state|why 2`, `sharded-state|explanation`,
`sharded-state|image_alt`; `|title`, `|description` and `|level` for the bank),
the msgid is the reference text, the msgstr the translation ("" while the text is
still the reference's). The header carries the topic, the language and the
reference language. Each entry's extracted comment records a digest of what the
bank said when the entry was made (`bank text: 1a2b3c4d5e6f`), so that an import
never writes older PO text over a newer edit made in the bank.

Writing a PO file where one is merges into it, as gettext's msgmerge does: every
msgstr is kept, an entry whose reference text changed is marked fuzzy (with the
old msgid as `#|`), and a translated entry whose text is gone becomes obsolete
(`#~`). Reading a PO file back writes only the texts whose msgstr is not empty and
not fuzzy, each in place in the bank file: the rest of the file (comments, quoting,
other keys) stays as it was, so a round trip without edits changes nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import polib

from ankigen.bank.edit import OpenBank, open_bank, write_banks
from ankigen.bank.model import Bank
from ankigen.bank.project import require_project
from ankigen.bank.reader import parse_bank
from ankigen.bank.texts import bank_contexts, replace_texts
from ankigen.bank.workspace import find_bank_paths
from ankigen.core.errors import Diagnostic, InvalidBanks
from ankigen.core.userfile import Refused, Target, existing, write
from ankigen.core.version import __version__
from ankigen.text import lang
from ankigen.translation.aligned import unaligned_choices
from ankigen.translation.pomerge import merged, placed_by_msgid
from ankigen.translation.poread import (
    BANK_TEXT,
    PoError,
    digest,
    parse_po,
    read_po,
    recorded_digest,
)
from ankigen.translation.potarget import named_bank_language, po_target
from ankigen.translation.renamed import new_ids, renames, with_new_id
from ankigen.translation.start import (
    add_missing,
    new_bank_text,
    reference_bank,
    refuse_reference,
    translation_path,
)

TOPIC_HEADER = "X-Ankigen-Topic"
REFERENCE_HEADER = "X-Ankigen-Reference"
CORRECT = "the correct choice"


def bank_texts(reference: Bank, target: Bank | None) -> dict[str, str]:
    """What the translation's bank says for each text of the reference: its own text
    (under the id the reference renamed its item to), or the reference's where it has
    none yet (as `translate` and an import start it)."""
    known: dict[str, str] = {}
    if target is not None:
        renamed = renames(reference, target)
        known = {with_new_id(c, renamed): text for c, text in bank_contexts(target).items()}
    return {context: known.get(context, text) for context, text in bank_contexts(reference).items()}


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
    current = bank_texts(reference, target)
    correct = {f"{i.id}|choice {n}" for i in reference.items for n in i.answer}
    for context, text in bank_contexts(reference).items():
        mine = current[context]
        comments = [CORRECT] if context in correct else []
        comments.append(BANK_TEXT + digest(mine))
        po.append(
            polib.POEntry(
                msgctxt=context,
                msgid=text,
                msgstr="" if mine == text else mine,
                comment="\n".join(comments),
            )
        )
    return po


# gettext's script modifiers (`sr@latin`), as BCP 47 writes them
_MODIFIERS = {"latin": "Latn", "cyrillic": "Cyrl", "arabic": "Arab", "devanagari": "Deva"}
# modifiers of the same language: gettext's English with typographic quotes, the euro
_SAME_LANGUAGE = {"quot", "boldquot", "euro"}


def po_language(po: polib.POFile) -> str:
    """The header's Language as a BCP 47 tag in canonical case, "" if it is none. gettext
    and the tools on it (msginit, Poedit, Weblate) write `pt_BR` and `sr@latin`."""
    tag, _, modifier = po.metadata.get("Language", "").strip().partition("@")
    tag = tag.replace("_", "-")
    script = _MODIFIERS.get(modifier.lower())
    if script is not None:
        language, _, region = tag.partition("-")
        tag = "-".join(filter(None, [language, script, region]))
    elif modifier.lower() in _SAME_LANGUAGE:
        pass
    elif 5 <= len(modifier) <= 8:  # `ca@valencia`: a variant (shorter would read as a script)
        tag = f"{tag}-{modifier}"
    elif modifier:
        return ""
    return lang.canonical_tag(tag) if lang.is_valid_tag(tag) else ""


def same_translation(
    po: polib.POFile,
    reference: Bank,
    language: str,
    target: Bank | None = None,
    claimed: Collection[str] = (),
) -> bool:
    """Whether a PO file is a translation of the reference's topic into `language` (or
    of a topic or language they had before, `formerly:`), or into `language` with or
    without a region where no bank of the topic says that (`claimed`: their languages):
    a translator's tool rewrites the header's `de` as `de_DE`."""
    topic = po.metadata.get(TOPIC_HEADER, "").strip()
    languages = (language, *(target.formerly_languages if target is not None else ()))
    said = po_language(po)
    # as an import would place it (`potarget`): the one bank it is but for a region
    regional = [known for known in claimed if lang.but_for_region(known, said)]
    return (topic == reference.topic or topic in reference.formerly_topics) and (
        said in languages
        or (
            said not in claimed
            and lang.but_for_region(said, language)
            and regional in ([], [language])
        )
    )


@dataclass(frozen=True)
class PoWritten:
    texts: int
    translated: int
    merged: bool
    """Merged into a PO file that was there (a translator's work kept)."""
    wrote: bool


def _reads_back(shown: str, data: bytes) -> None:
    parse_po(shown, data)


def write_po(
    reference: Bank,
    language: str,
    target: Bank | None,
    path: Path,
    *,
    force: bool = False,
    inputs: tuple[Path, ...] = (),
    claimed: Collection[str] = (),
) -> PoWritten:
    """Write the PO file for `language`, merged into the one at `path` if there is one (a
    PO file of another topic or language is replaced only with `force`; `claimed`: the
    languages of the topic's banks, see `same_translation`)."""
    po = po_file(reference, language, target)
    out = Target(path, "a PO file", force, inputs, check=lambda data: _reads_back(str(path), data))
    before = existing(out)
    was_merged = False
    if before is not None and not force:
        old = parse_po(str(path), before)
        if not same_translation(old, reference, language, target, claimed):
            raise Refused(
                f"{path} is not a PO file of {reference.topic!r} in {language!r} (its header "
                f"says {old.metadata.get(TOPIC_HEADER, '')!r} in "
                f"{old.metadata.get('Language', '')!r}); nothing was written: choose another "
                "file, or --force to replace it"
            )
        placed_by_msgid(old, bank_contexts(reference))
        po = merged(po, old, new_ids(reference))
        out = replace(out, edits=before)
        was_merged = True
    wrote = write(out, str(po).encode("utf-8"))
    live = sum(1 for entry in po if not entry.obsolete)
    return PoWritten(live, len(po.translated_entries()), was_merged, wrote)


@dataclass(frozen=True)
class PoImport:
    bank: OpenBank
    """The bank as it was read (or where a new one goes)."""
    text: str
    translated: int
    """Texts the bank now holds from the PO file that it did not hold before."""
    warnings: tuple[Diagnostic, ...]
    fuzzy: int = 0
    """Translations marked fuzzy (to check, as gettext and Poedit's "needs work" have it)
    that differ from the bank's text: not imported, as `msgfmt` leaves them out."""


def import_po(
    po_path: Path,
    po: polib.POFile,
    banks_dir: Path,
    reference: Bank,
    target_path: Path | None = None,
    force: bool = False,
    group: Sequence[Bank] = (),
) -> PoImport:
    """The bank with the translations of the PO file `po` (read from `po_path`); nothing
    is written here. With `force`, the PO file's texts win over the bank's newer ones."""
    language = po_language(po)
    if not language:
        raise PoError(
            f"{po_path}: the header's Language {po.metadata.get('Language', '')!r} is not "
            "a language tag"
        )
    if language == reference.language:
        raise PoError(
            f"{po_path}: its Language {language!r} is the reference language of "
            f"{reference.topic!r}: a PO file translates the reference, it never rewrites it"
        )
    warnings: list[Diagnostic] = []
    if target_path is None:
        target_path, language = po_target(po_path, banks_dir, group, reference, language, warnings)
    else:
        language = named_bank_language(po_path, group, reference, target_path, language, warnings)
    opened = open_bank(
        target_path,
        reference.topic,
        language,
        source=str(po_path),
        inputs=(po_path,),
    )
    target = opened.bank
    if opened.text is not None and target is not None:
        text, _ = add_missing(opened.text, str(target_path), reference, target)
    else:
        text = new_bank_text(reference, language, target_path)
    warnings += _contexts_restored(po, po_path, reference)
    wanted, found = _wanted(po, po_path, reference, target, force)
    warnings += found
    warnings += unaligned_choices(po, po_path, reference, target, wanted)
    text, replaced = replace_texts(text, str(target_path), wanted)
    bank, found = parse_bank(str(target_path), text.encode("utf-8"))
    if bank is None:
        raise InvalidBanks(found)
    # a bank's own text (its description, its level) is replaced where the bank has its
    # key: one it lacks is said, not dropped unsaid
    held = bank_texts(reference, bank)
    for context, value in wanted.items():
        if context.startswith("|") and held.get(context, "").strip() != value.strip():
            key = context[1:]
            line = next((e.linenum for e in po if e.msgctxt == context and not e.obsolete), 1)
            warnings.append(
                Diagnostic(
                    str(po_path),
                    line or 1,
                    "warning",
                    f"{context!r} was not written: {target_path} has no {key}: to hold it "
                    f"(add `{key}:` to the bank, then import again)",
                )
            )
    renamed = new_ids(reference)  # an entry made before its item was renamed counts too
    fuzzy = sum(
        1
        for entry in po
        if "fuzzy" in entry.flags
        and not entry.obsolete
        and entry.msgstr
        and held.get(with_new_id(entry.msgctxt or "", renamed), entry.msgstr) != entry.msgstr
    )
    return PoImport(opened, text, replaced, tuple(warnings), fuzzy)


def _contexts_restored(po: polib.POFile, po_path: Path, reference: Bank) -> list[Diagnostic]:
    """`placed_by_msgid`, and a warning for each translated entry it could not place."""
    return [
        Diagnostic(
            str(po_path),
            entry.linenum or 1,
            "warning",
            f"an entry without its msgctxt (a tool dropped it?), and its msgid is {where}: "
            "which text it translates is not known; skipped",
        )
        for entry, where in placed_by_msgid(po, bank_contexts(reference))
    ]


def _newer_in_bank(entry: polib.POEntry, now: str, reference_text: str) -> str | None:
    """Why the bank's text `now` may be newer than the entry's translation (it changed
    since the PO file was made; or the entry has no digest to tell, and the bank holds a
    translation of its own), or None."""
    if now == entry.msgstr:
        return None
    base = recorded_digest(entry)
    if base is None:
        if now == reference_text:
            return None  # not translated in the bank: nothing to lose
        return (
            "this entry has no '#. bank text:' line (a tool dropped it?), so whether the "
            "bank's translation is newer is not known"
        )
    return None if base == digest(now) else "the bank's text changed since this PO file was made"


def _wanted(
    po: polib.POFile, po_path: Path, reference: Bank, target: Bank | None, force: bool = False
) -> tuple[dict[str, str], list[Diagnostic]]:
    """The translations to write into the bank, by context, and a warning for each entry
    skipped or to check; with `force`, the PO file's even over a newer bank text."""
    known = bank_contexts(reference)
    now = bank_texts(reference, target)
    wanted: dict[str, str] = {}
    warnings: list[Diagnostic] = []

    def warn(entry: polib.POEntry, message: str) -> None:
        warnings.append(Diagnostic(str(po_path), entry.linenum or 1, "warning", message))

    # an entry made before the reference renamed its item is the new id's
    renamed = new_ids(reference)
    # the same translation twice (an entry a tool stripped of its msgctxt, and the entry
    # itself) is no choice to make: only different ones are
    translations = {(with_new_id(e.msgctxt or "", renamed), e.msgstr) for e in po if not e.obsolete}
    live = Counter(context for context, msgstr in translations if msgstr)
    for entry in po:
        context = with_new_id(entry.msgctxt or "", renamed)
        skipped = _skipped(entry, context, live, known, reference.path)
        if skipped is not None:
            if skipped:
                warn(entry, skipped)
            continue
        # a bank that is not there yet holds no edit made since the PO file: nothing to keep
        newer = (
            None if target is None or force else _newer_in_bank(entry, now[context], known[context])
        )
        if newer is not None:
            warn(
                entry,
                f"{context!r}: {newer}; kept the bank's {now[context]!r}, not the PO file's "
                f"{entry.msgstr!r} (--force writes the PO file's)",
            )
            continue
        if entry.msgid != known[context] and ("|choice " in context or "|why " in context):
            # the reference's choices moved, or were reworded: by place, it may now be
            # another choice's, and written there make a wrong choice right
            warn(
                entry,
                f"{context!r}: the reference's choice there changed since this PO file was "
                "made; skipped: merge the file (translate --po) and check it",
            )
            continue
        if entry.msgid != known[context]:
            warn(
                entry,
                f"{context!r}: the reference text changed since this PO file was made; "
                "imported anyway: check the translation",
            )
        wanted[context] = entry.msgstr
    return wanted, warnings


def _skipped(
    entry: polib.POEntry, context: str, live: Counter[str], known: dict[str, str], reference: str
) -> str | None:
    """Why an entry (of `context`) is not imported ("" for a reason not worth a warning:
    obsolete, fuzzy or not translated), or None if it is to be."""
    if entry.obsolete or not context:  # no msgctxt: `_contexts_restored` said why
        return ""
    if live[context] > 1 and entry.msgstr:
        # gettext keys a message by context and msgid: `msgcat` of two files keeps both;
        # which is newer the file does not say
        return f"{context!r} is translated twice in this file; skipped"
    if entry.msgid_plural:
        return f"{context!r} has plural forms, which no bank text has; skipped"
    if "fuzzy" in entry.flags or not entry.msgstr:
        return ""
    if context not in known:
        return f"{context!r} is not a text of {reference}; skipped"
    return None


@dataclass(frozen=True)
class PoImported:
    done: PoImport
    wrote: bool


def import_po_file(
    po_path: Path, banks_dir: Path, out: Path | None = None, force: bool = False
) -> PoImported:
    """A PO file's translations written into its bank (the one its header names, or
    `out`), edited in place: replaced only while it holds what was read."""
    po = read_po(po_path)
    topic = po.metadata.get(TOPIC_HEADER, "")
    paths = find_bank_paths(banks_dir)
    reference, group = reference_bank(paths, topic, po.metadata.get(REFERENCE_HEADER))
    done = import_po(po_path, po, banks_dir, reference, out, force, group)
    return PoImported(done, write_banks([(done.bank, done.text)], force=force)[0])


def export_po(
    banks_dir: Path,
    topic: str,
    language: str,
    po_path: Path,
    force: bool = False,
) -> PoWritten:
    """`translate --po`: the PO file for `language`, merged into the one at `po_path`."""
    paths = find_bank_paths(banks_dir)
    reference_tag = require_project(banks_dir).reference or None
    reference, group = reference_bank(paths, topic, reference_tag)
    code = refuse_reference(reference, language)
    target_path, code = translation_path(banks_dir, group, reference, code)
    target = open_bank(target_path, reference.topic, code, source="the translation").bank
    claimed = {bank.language for bank in group}
    return write_po(
        reference, code, target, po_path, force=force, inputs=tuple(paths), claimed=claimed
    )
