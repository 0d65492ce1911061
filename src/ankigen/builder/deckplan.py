"""One deck's plan: its notes, their stamps and change counts, the lock entry, the
package content, the warnings a change deserves, and the keys that let a later build
reuse a deck or its package."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import marshal
import operator
from pathlib import Path

from ankigen.apkg import notetype
from ankigen.apkg.deck import deck_description
from ankigen.apkg.note import NoteContent, note_content
from ankigen.apkg.package import PackageDeck, PackageNote
from ankigen.bank.files import SourceDigest
from ankigen.bank.model import Bank, Outline
from ankigen.builder.handoff import DeckPlan
from ankigen.builder.result import (
    DeckReport,
    package_name,
)
from ankigen.core.errors import Diagnostic
from ankigen.core.hashing import content_hash
from ankigen.core.times import clock
from ankigen.core.version import __version__
from ankigen.identity.guid import deck_id, oldest_key
from ankigen.identity.issued import Issued
from ankigen.identity.lockfile import (
    DeckLock,
    Lock,
    Texts,
    text_of,
)
from ankigen.identity.resolve import (
    DeckIdentity,
    renamed_items,
    swapped_items,
)
from ankigen.identity.stamp import Stamp, restamp
from ankigen.identity.versions import lock_version, note_version, with_card_version
from ankigen.images.process import Prepared
from ankigen.text.html import plain_text


def plan_deck(
    bank: Bank,
    ident: DeckIdentity,
    notetype_mtime: int,
    now: int,
    images: Prepared | None = None,
    bank_path: str = "",
) -> DeckPlan:
    """The package content for one bank, its new lock entry and its change counts.

    `bank_path` is the bank file relative to the banks folder, kept in the lock so a
    deck whose bank disappears can be named."""
    previous = ident.previous
    deck_lock = DeckLock(
        name=plain_text(bank.deck_name),
        created=previous.created if previous else now,
        path=bank_path,
    )
    contents: dict[str, NoteContent] = {}
    notes: list[PackageNote] = []
    new = changed = unchanged = restored = 0
    for item in bank.items:
        item_ident = ident.items[item.id]
        content = note_content(
            bank, item, images.names(bank, item.id) if images else None, item_ident.guid
        )
        contents[item.id] = content
        stamp = restamp(item_ident.previous, item_ident.issued, content.hash, now)
        deck_lock.items[item.id] = stamp
        deck_lock.guids[item.id] = item_ident.guid
        # without a lock entry (a lock deleted, or a deck whose entry was lost in a
        # merge) what was issued for the note says what learners hold: it is new to
        # them only if nothing ever was
        known = item_ident.previous if item_ident.previous is not None else item_ident.issued
        if known is None:
            new += 1
        elif stamp == known:
            unchanged += 1
        else:
            changed += 1
            restored += known.hash == content.hash
        # a kept note type's card shows no version: its fields have no place for it
        fields = (
            content.fields
            if content.kept
            else with_card_version(content.fields, note_version(stamp.hash, stamp.mtime))
        )
        notes.append(PackageNote(content.guid, fields, content.tags, stamp.mtime))
    version = lock_version(bank.topic, bank.language, deck_lock)
    oldest = oldest_key(bank.topic, bank.language, bank.formerly_topics, bank.formerly_languages)
    package = PackageDeck(
        deck_id=deck_id(*oldest),
        name=deck_lock.name,
        description=deck_description(bank, list(contents.values()), version),
        notes=tuple(notes),
        first_note_id=deck_lock.created * 1000,
        notetype_mtime=_kept_notetype_time(bank, notetype_mtime),
        kept=bank.anki_notetype,
    )
    report = DeckReport(
        topic=bank.topic,
        language=bank.language,
        path=package_name(bank),
        notes=len(notes),
        new=new,
        changed=changed,
        unchanged=unchanged,
        removed=len(ident.removed),
        retired=sum(item.retired for item in bank.items),
        written=True,
        restored=restored,
        version=version,
    )
    media = tuple(images.for_bank(bank)) if images else ()
    warnings = tuple(_deck_warnings(bank, ident, deck_lock, contents, restored))
    return DeckPlan(bank.key, package, deck_lock, report, warnings, media)


def _kept_notetype_time(bank: Bank, notetype_mtime: int) -> int:
    """A kept note type is never older than its adoption, as a note is never older than
    its last issue, whatever time the build is pinned to: Anki replaces a collection's note
    type only by a newer one. An adoption time in the future (the bank edited by hand) is
    taken as now, by the clock, as the lock's times are."""
    kept = bank.anki_notetype
    if kept is None:
        return notetype_mtime
    return max(notetype_mtime, min(kept.adopted, clock()) + 1)


def relative_bank_path(bank: Bank, banks_dir: Path) -> str:
    path = Path(bank.path)
    return (path.relative_to(banks_dir) if path.is_relative_to(banks_dir) else path).as_posix()


def _deck_warnings(
    bank: Bank,
    ident: DeckIdentity,
    deck_lock: DeckLock,
    contents: dict[str, NoteContent],
    restored: int,
) -> list[Diagnostic]:
    previous = ident.previous
    items_line = bank.lines.get("items", 1)
    found = []
    renamed = renamed_items(contents, ident)
    for old_id, new_id in renamed:
        item = next(i for i in bank.items if i.id == new_id)
        found.append(
            Diagnostic(
                bank.path,
                item.line_at("id"),
                "warning",
                f"item {new_id!r} has the content of the removed item {old_id!r}: if it was "
                f"renamed, add `formerly: [{old_id}]` to it so learners keep their note and "
                "review history; as it is, they get a new card and keep the old one",
            )
        )
    for a, b in swapped_items(contents, ident):
        item = next(i for i in bank.items if i.id == a)
        found.append(
            Diagnostic(
                bank.path,
                item.line_at("id"),
                "warning",
                f"items {a!r} and {b!r} swapped their content: review history follows the id, "
                f"so learners' history of each question would move to the other; swap the ids "
                "back (a `formerly:` cannot name a live id)",
            )
        )
    removed = [r for r in ident.removed if r not in {old for old, _ in renamed}]
    if removed:
        shown = ", ".join(removed[:5]) + (" ..." if len(removed) > 5 else "")
        found.append(
            Diagnostic(
                bank.path,
                items_line,
                "warning",
                f"{len(removed)} item(s) removed since the last build ({shown}): "
                "Anki never deletes notes on re-import, so learners keep them; put the item "
                "back with `retired: true` so they can find it (tag ankigen::retired) "
                "and delete it",
            )
        )
    if previous is not None and previous.name != deck_lock.name:
        line = bank.lines.get("deck", bank.lines.get("title", 1))
        found.append(
            Diagnostic(
                bank.path,
                line,
                "warning",
                f"the deck is renamed from {previous.name!r} to {deck_lock.name!r}: people who "
                f"imported it keep their cards in {previous.name!r} and get only new cards in the "
                f"new deck; set `deck: {json.dumps(previous.name, ensure_ascii=False)}` "
                "to keep the old name",
            )
        )
    if restored:
        found.append(
            Diagnostic(
                bank.path,
                items_line,
                "warning",
                f"{restored} note(s) went back to an earlier text (a revert?): a later text was "
                "already issued, so they get a newer modification time and learners who "
                "imported the later text receive the earlier one again",
            )
        )
    return found


def reuse_key(
    source: SourceDigest,
    ident: DeckIdentity,
    issued: Issued,
    notetype_stamp: Stamp,
    images: Prepared,
    previous: DeckLock | None,
    project_digest: str = "",
    texts: Texts | None = None,
    as_resolved: bool = False,
) -> str | None:
    """What a deck's plan is a function of, when its bank is known by content: the bank
    file's bytes, the project file, its lock entry (its text, taken from `texts` where
    known), what was issued for its notes, the note type's stamp and its images.
    `as_resolved`: `issued` is the record `ident` was resolved with, as it was then."""
    if previous is None:
        return None
    # what was issued for its notes where that is not the lock entry's stamp (the entry
    # is in the key): the two give the stamp issued for every note, and most notes were
    # last issued as the lock has them, so the key costs no text per note
    if as_resolved and previous is ident.previous and not ident.odd:
        # `resolve` found every note last issued as this entry has it: looking each note
        # up again cost 10 to 15 ms per deck of 10,000, on the main process's way to
        # the plans of an edit
        evidence = ""
    else:
        locked = {previous.guids[item_id]: stamp for item_id, stamp in previous.items.items()}
        guids = ident.guids  # in the bank's order, which its digest fixes
        newest = list(map(issued.notes.get, guids))  # `Issued.newest`, without a call each
        as_locked = list(map(locked.get, guids))
        evidence = (
            ""
            if newest == as_locked  # compared at once: the usual case
            else "".join(
                f"{guid}\x1f{stamp.hash}\x1f{stamp.mtime}\x1e" if stamp else f"{guid}\x1e"
                for guid, stamp, lock_stamp in zip(guids, newest, as_locked, strict=True)
                if stamp != lock_stamp
            )
        )
    return content_hash(
        __version__,
        source.digest,
        project_digest,
        text_of(ident.key, previous, texts or {}),  # as if filed under this deck's key
        evidence,
        repr(notetype_stamp),
        repr(sorted((key, p.name) for key, p in images.images.items())),
    )


def unchanged_report(outlined: Outline, lock: DeckLock, version: str | None = None) -> DeckReport:
    """The report of a deck whose package holds its notes already; `version`, if known,
    saves making it again from every note's stamp."""
    bank = outlined.bank
    return DeckReport(
        topic=bank.topic,
        language=bank.language,
        path=package_name(bank),
        notes=len(outlined.items),
        new=0,
        changed=0,
        unchanged=len(outlined.items),
        removed=0,
        retired=sum(item.retired for item in outlined.items),
        written=False,
        version=version or lock_version(bank.topic, bank.language, lock),
    )


def package_key(package: PackageDeck) -> str:
    """Hash of everything that goes into a package: its fields and its notes', as plain
    values written by `marshal` at version 2, by type and content alone (the dataclasses'
    own repr, made by Python code per object, took 0.16 s for a deck of 10,000 notes;
    a tuple's, a tenth; marshal copies the texts' UTF-8 as they are)."""
    plain = (f.name for f in dataclasses.fields(package) if f.name not in ("notes", "kept"))
    deck = tuple(getattr(package, name) for name in plain)
    kept = dataclasses.astuple(package.kept) if package.kept else None  # marshal takes no object
    notes = list(map(_NOTE_FIELDS, package.notes))
    values = marshal.dumps((__version__, notetype.schema_hash(), deck, kept, notes), 2)
    return hashlib.sha256(values).hexdigest()[:16]


_NOTE_FIELDS = operator.attrgetter(*(f.name for f in dataclasses.fields(PackageNote)))


def notetype_stamp(lock: Lock, now: int) -> Stamp:
    """The note type's stamp in the new lock: the build proper and the decks planned early
    must agree on it (`DeckJob.inputs` holds its time)."""
    return restamp(lock.notetype, None, notetype.schema_hash(), now)
