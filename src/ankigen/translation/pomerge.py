"""Merging a PO file made from the banks into a translator's, as gettext's msgmerge does:
every translation kept, fuzzy where its reference text or the bank's translation changed
since, obsolete where its text is gone; the translator's header fields kept."""

from __future__ import annotations

import polib

from ankigen.translation.poread import BANK_TEXT, recorded_digest
from ankigen.translation.renamed import with_new_id

BOTH_CHANGED = "the bank's translation changed since; this file had: "
ALSO_TRANSLATED = "this file translated it twice; the other: "
# header fields a translator or platform owns: kept when a PO file is merged into
TRANSLATORS_HEADERS = ("Last-Translator", "Language-Team", "PO-Revision-Date", "Plural-Forms")


def merged(
    fresh: polib.POFile, old: polib.POFile, renamed: dict[str, str] | None = None
) -> polib.POFile:
    """`fresh` (made from the banks) merged with a translator's `old` file, as msgmerge
    merges: old translations kept, fuzzy where the reference text changed since, and
    obsolete where the text is gone; the translator's header fields kept. An entry of an
    item the reference renamed since (`renamed`, old id to new) is the new id's."""
    before, twins = _by_context(old, renamed or {})
    for entry in fresh:
        was = before.pop(entry.msgctxt, None)
        if was is not None and was.msgstr:
            _carry_over(entry, was)
        elif was is not None:  # only the translator's comment: theirs alone, kept
            entry.tcomment = was.tcomment
        _keep_twins(entry, twins.pop(entry.msgctxt, []))
    for context, was in before.items():
        _keep_twins(was, twins.get(context, []))
        if was.msgstr:
            was.obsolete = True
            fresh.append(was)
    for key in TRANSLATORS_HEADERS:
        if key in old.metadata:
            fresh.metadata[key] = old.metadata[key]
    return fresh


def _by_context(
    old: polib.POFile, renamed: dict[str, str]
) -> tuple[dict[str, polib.POEntry], dict[str, list[polib.POEntry]]]:
    """The old file's entry for each context (with the new id of a renamed item), and
    the other live entries of a context the file has twice."""

    def context_of(entry: polib.POEntry) -> str:
        # one without msgctxt (`placed_by_msgid` could not place it) is no other's twin
        return with_new_id(entry.msgctxt, renamed) if entry.msgctxt else f"\0{id(entry)}"

    # a live entry wins over an obsolete one of the same text (msgmerge leaves both)
    before = {context_of(e): e for e in old if e.obsolete and e.msgstr}
    twins: dict[str, list[polib.POEntry]] = {}
    for entry in old:
        if entry.obsolete or not (entry.msgstr or entry.tcomment):
            continue
        context = context_of(entry)
        held = before.get(context)
        # of twins, a translated one is the entry's
        if held is None or held.obsolete or (not held.msgstr and entry.msgstr):
            before[context] = entry
        else:
            twins.setdefault(context, []).append(entry)
    return before, twins


def _keep_twins(entry: polib.POEntry, twins: list[polib.POEntry]) -> None:
    """Other translations of the entry's text in the same file (`msgcat` of two files
    keeps both; which is newer the file does not say): each kept in the entry's comment,
    the entry fuzzy until a translator chooses, where only one was kept before."""
    others = [t for t in twins if t.msgstr and t.msgstr != entry.msgstr]
    if not others:
        return
    # each with its translator's comment, which is theirs alone
    kept = [line for t in others for line in (ALSO_TRANSLATED + t.msgstr, t.tcomment)]
    entry.tcomment = "\n".join(filter(None, [entry.tcomment, *kept]))
    if "fuzzy" not in entry.flags:
        entry.flags.append("fuzzy")


def _carry_over(entry: polib.POEntry, was: polib.POEntry) -> None:
    """The translator's text and comment of `was` on the fresh `entry`, fuzzy where the
    reference text changed since, or where the bank's translation did too."""
    in_bank = entry.msgstr or entry.msgid
    bank_translation, bank_digest = entry.msgstr, recorded_digest(entry)
    entry.msgstr = was.msgstr
    entry.tcomment = was.tcomment
    entry.flags = [flag for flag in was.flags if flag != "fuzzy"]
    old_digest = recorded_digest(was)
    both_changed = False
    if was.msgstr != in_bank:
        # without a digest (a tool dropped it) the file's text cannot be dated either
        if bank_translation and (old_digest is None or old_digest != bank_digest):
            # the bank's translation changed since this entry was made (a fix pulled from
            # Anki, an author's edit), and so may the file's: the bank's is the one to go on
            # from, the file's kept beside it, fuzzy until a translator chooses; kept as it
            # was, the entry could never be imported again
            entry.msgstr = bank_translation
            entry.tcomment = "\n".join(filter(None, [BOTH_CHANGED + was.msgstr, was.tcomment]))
            both_changed = True
        elif old_digest is not None:
            # what the bank said when the translator's text was made stays the base an
            # import compares with, so an edit made in the bank since is not overwritten
            kept = [c for c in entry.comment.splitlines() if not c.startswith(BANK_TEXT)]
            entry.comment = "\n".join([*kept, BANK_TEXT + old_digest])
    if was.msgid != entry.msgid:
        entry.flags.append("fuzzy")
        entry.previous_msgid = was.msgid
    elif "fuzzy" in was.flags or both_changed:
        entry.flags.append("fuzzy")
        entry.previous_msgid = was.previous_msgid


def placed_by_msgid(po: polib.POFile, contexts: dict[str, str]) -> list[tuple[polib.POEntry, str]]:
    """Live entries a tool stripped of their msgctxt, which names the item and field, each
    given the one context (of `contexts`, context to reference text) whose text is its
    msgid; the translated ones it cannot place, each with where its msgid is ("no text of
    the reference", "3 texts of the reference": a choice `True` in many items)."""
    places: dict[str, list[str]] = {}
    for context, text in contexts.items():
        places.setdefault(text, []).append(context)
    unplaced = []
    for entry in po:
        if entry.msgctxt or entry.obsolete:
            continue
        found = places.get(entry.msgid, [])
        if len(found) == 1:
            entry.msgctxt = found[0]
        elif entry.msgstr:
            where = f"{len(found)} texts of the reference" if found else "no text of the reference"
            unplaced.append((entry, where))
    return unplaced
