"""Checks between banks: one deck name twice, former names taken, items a translation
lacks, and each translation against its topic's reference."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace

from ankigen.apkg.notetype import NOTETYPE_ID
from ankigen.bank.model import MAX_DECK_PART, Bank, Item, KeptNotetype, Outline, Parity
from ankigen.bank.reader import Readable
from ankigen.checks.bankcache import BankCache
from ankigen.checks.parity import in_step
from ankigen.checks.translation import (
    _normal,
    _untranslated_warning,
    _with_references,
    same_as_reference,
    sources_for,
    unit_texts,
    untranslated_parts,
)
from ankigen.core.errors import Diagnostic
from ankigen.identity.guid import deck_key, former_keys
from ankigen.text.html import plain_text


def check_across(
    outlines: Sequence[Outline],
    full: Callable[[Outline], Bank],
    reference: str = "",
    cache: BankCache | None = None,
    parity: Callable[[Outline], Parity | None] | None = None,
    deck_name: Callable[[Bank], str] | None = None,
    broken: Sequence[Readable] = (),
) -> list[Diagnostic]:
    """Problems between banks: the same deck twice, translations out of step. `full` gives
    the whole of a bank, needed to compare a translation with its reference, unless
    `parity` shows the two in step; with a cache, only a translation or reference that
    changed is compared again. `deck_name`: each bank's deck name as it ships (the
    project's template applied). `broken`: what reads well of banks with errors of their
    own (`readable_part`), checked for names taken twice and compared with the other
    languages for all that does not depend on the parts in error: a topic's reference
    with an error in one item hides nothing of its translations' other items."""
    found: list[Diagnostic] = []
    first: dict[str, Outline] = {}
    partial: dict[str, Readable] = {}
    named: dict[str, Bank] = {}
    headers: list[tuple[Bank, Outline | Readable]] = [(o.bank, o) for o in outlines]
    headers += [(part.bank, part) for part in broken]
    for bank, checked in headers:
        if bank.key in named:
            found.append(
                Diagnostic(
                    bank.path,
                    bank.lines.get("language", 1),
                    "error",
                    f"topic {bank.topic!r} in language {bank.language!r} is already defined "
                    f"in {named[bank.key].path}",
                )
            )
            continue
        named[bank.key] = bank
        if isinstance(checked, Outline):
            first[bank.key] = checked
        else:
            partial[bank.key] = checked
    found.extend(
        missing_items(
            [(o.bank, {i.id for i in o.items}, True) for o in first.values()]
            + [_listing(part) for part in partial.values()]
        )
    )
    indexes: dict[str, dict[str, _Reference]] = {}
    parities: dict[str, Parity | None] = {}

    def whole(key: str) -> Bank:
        return partial[key].bank if key in partial else full(first[key])

    for bank, ref in _with_references(list(named.values()), reference):
        if ref is None:
            continue

        def check(bank: Bank = bank, ref: Bank = ref) -> list[Diagnostic]:
            in_error = bank.key in partial or ref.key in partial
            if parity is not None and not in_error:
                if ref.key not in parities:
                    parities[ref.key] = parity(first[ref.key])
                mine, theirs = parity(first[bank.key]), parities[ref.key]
                if mine is not None and theirs is not None and in_step(mine, theirs):
                    return []
            index = indexes.get(ref.key)
            if index is None:
                index = indexes[ref.key] = _reference_index(whole(ref.key))
            unread = _unread_items(partial[ref.key]) if ref.key in partial else {}
            return list(against_reference(whole(bank.key), ref, index, reference, unread))

        found.extend(cache.across(bank.path, ref.path, check) if cache else check())
    found.extend(same_deck_names(list(named.values()), deck_name))
    found.extend(former_names_taken(list(named.values())))
    found.extend(kept_notetypes_clash(list(named.values())))
    return found


def kept_notetypes_clash(banks: Sequence[Bank]) -> Iterable[Diagnostic]:
    """A note type is one in a learner's collection, by its id: banks that keep the same
    one (`anki_notetype:`) must describe it alike, and none may take ankigen's own id."""
    first: dict[int, Bank] = {}
    for bank in banks:
        kept = bank.anki_notetype
        if kept is None:
            continue
        line = bank.lines.get("anki_notetype", 1)
        if kept.id == NOTETYPE_ID:
            yield Diagnostic(
                bank.path, line, "error", "anki_notetype: id is ankigen's own note type's"
            )
            continue
        other = first.setdefault(kept.id, bank)
        theirs = other.anki_notetype
        if theirs is not None and _as_held(theirs) != _as_held(kept):
            yield Diagnostic(
                bank.path,
                line,
                "error",
                f"anki_notetype: note type {kept.id} is kept by {other.path} too, with other "
                "fields, template or parts: a collection holds one note type by that id",
            )


def _as_held(kept: KeptNotetype) -> KeptNotetype:
    """A kept note type as a collection holds it: no adoption time, its sort field named
    (a bank that names none sorts by the question)."""
    return replace(kept, adopted=0, sort_field=kept.sort_field or kept.question)


def same_deck_names(
    banks: Sequence[Bank], deck_name: Callable[[Bank], str] | None = None
) -> Iterable[Diagnostic]:
    """Anki matches decks by name: two banks with one deck name would become one deck."""
    first: dict[str, Bank] = {}
    for bank in banks:
        shown = plain_text(deck_name(bank) if deck_name else bank.deck_name)
        if any(len(part) > MAX_DECK_PART for part in shown.split("::")):
            yield Diagnostic(
                bank.path,
                bank.lines.get("deck", bank.lines.get("title", 1)),
                "error",
                f"the deck name {shown[:60]!r}... has a part between '::' longer than "
                f"{MAX_DECK_PART} characters: shorten the title or the deck template",
            )
        name = anki_deck_key(shown)
        if name in first:
            yield Diagnostic(
                bank.path,
                bank.lines.get("deck", bank.lines.get("title", 1)),
                "error",
                f"the deck name {shown!r} is also the deck of "
                f"{first[name].path}; Anki would merge both into one deck: give one a "
                "different `deck:` or title",
            )
        else:
            first[name] = bank


def anki_deck_key(name: str) -> str:
    """The name as Anki finds a deck by it (rslib/src/decks/name.rs): each part between
    `::` in NFC, without ASCII controls and double quotes, trimmed, "blank" if empty; and
    compared without case (the decks table's unicase collation)."""
    parts = []
    for part in name.split("::"):
        part = unicodedata.normalize("NFC", part)
        part = "".join(c for c in part if not (c < " " or c == "\x7f" or c == '"')).strip()
        parts.append(part or "blank")
    return "\x1f".join(parts).casefold()


def former_names_taken(banks: Sequence[Bank]) -> Iterable[Diagnostic]:
    """A bank's former name must be its own alone, and not a live bank's."""
    live = {bank.key: bank for bank in banks}
    claimed: dict[str, Bank] = {}
    for bank in banks:
        line = bank.lines.get("formerly", 1)
        names = former_keys(
            bank.topic, bank.language, bank.formerly_topics, bank.formerly_languages
        )
        for topic, language in names[1:]:
            key = deck_key(topic, language)
            if key in live:
                yield Diagnostic(
                    bank.path,
                    line,
                    "error",
                    f"formerly: {key!r} is the live bank {live[key].path}; a deck's former "
                    "name cannot be another deck's current one",
                )
            elif key in claimed:
                yield Diagnostic(
                    bank.path,
                    line,
                    "error",
                    f"formerly: {key!r} is also claimed by {claimed[key].path}",
                )
            else:
                claimed[key] = bank


# a bank, the ids of its items, and whether those are all its items (an item whose id
# does not read is none of them)
_Listing = tuple[Bank, set[str], bool]


def _listing(part: Readable) -> _Listing:
    """A bank with errors: the ids of its items that read well and of those that do not."""
    ids = {i.id for i in part.bank.items}
    if part.listed is None:  # `items` is not a list
        return part.bank, ids, False
    listed = [item_id for item_id, _ in part.listed]
    return part.bank, ids | {i for i in listed if i is not None}, None not in listed


def missing_items(listings: Sequence[_Listing]) -> Iterable[Diagnostic]:
    """Items that some language of a topic has and another has not. Of a bank with an
    item whose id does not read, which items it lacks cannot be told: it is said once."""
    topics: dict[str, list[_Listing]] = {}
    # by path, as the banks are found: a missing item is said to be in the first that has it
    for listing in sorted(listings, key=lambda listing: listing[0].path):
        topics.setdefault(listing[0].topic, []).append(listing)
    for group in topics.values():
        if len(group) < 2:
            continue
        all_ids = set().union(*(ids for _, ids, _ in group))
        for bank, ids, complete in group:
            lacking = sorted(all_ids - ids)
            if lacking and not complete:
                yield Diagnostic(
                    bank.path,
                    bank.lines.get("items", 1),
                    "warning",
                    f"whether items of the other languages are missing in {bank.language!r} "
                    "is not checked: not every item's id here reads",
                )
                continue
            for item_id in lacking:
                holder = next(b for b, held, _ in group if item_id in held)
                yield Diagnostic(
                    bank.path,
                    bank.lines.get("items", 1),
                    "warning",
                    f"item {item_id!r} is missing in {bank.language!r} (it is in {holder.path})",
                )


# a reference item with its question and explanation normalized (`_normal`)
_Reference = tuple[Item, str, str]


def _reference_index(reference: Bank) -> dict[str, _Reference]:
    """A reference's items by id, their texts normalized once for all its translations."""
    return {i.id: (i, _normal(i.question), _normal(i.explanation)) for i in reference.items}


def _unread_items(part: Readable) -> dict[str, int]:
    """The items of a bank with errors that did not read, by id, at their lines."""
    read = {i.id for i in part.bank.items}
    return {i: line for i, line in part.listed or () if i is not None and i not in read}


def against_reference(
    bank: Bank,
    reference: Bank,
    index: dict[str, _Reference],
    reference_tag: str = "",
    unread: Mapping[str, int] | None = None,
) -> Iterable[Diagnostic]:
    """Where a translation is out of step with its topic's reference: other choices, another
    answer, missing whys; questions and explanations left as the reference wrote them.
    `unread`: the reference's items in error, by id, at their lines: a translation's
    item is not compared with one, and says so. A function of the two banks alone (see
    `BankCache.across`)."""
    sources = sources_for(reference_tag)
    for item in bank.items:
        found = index.get(item.id)
        if found is None:
            if unread and item.id in unread:
                yield Diagnostic(
                    bank.path,
                    item.line,
                    "warning",
                    f"item {item.id!r}: parity with {reference.language!r} not checked: the "
                    f"reference item has an error ({reference.path}:{unread[item.id]})",
                )
            continue
        ref, question, explanation = found
        if len(ref.choices) != len(item.choices):
            yield Diagnostic(
                bank.path,
                item.line_at("choices"),
                "warning",
                f"item {item.id!r} has {len(item.choices)} choices; in "
                f"{reference.language!r} it has {len(ref.choices)}",
            )
        elif ref.answer != item.answer:
            yield Diagnostic(
                bank.path,
                item.line_at("answer"),
                "warning",
                f"item {item.id!r}: answer {_answer(item.answer)} differs from "
                f"{_answer(ref.answer)} in {reference.language!r}",
            )
        else:
            yield from _missing_whys(bank, item, ref, reference.language)
        if ref.recall != item.recall:
            yield Diagnostic(
                bank.path,
                item.line_at("recall"),
                "warning",
                f"item {item.id!r}: recall is {str(item.recall).lower()} here and "
                f"{str(ref.recall).lower()} in {reference.language!r}: learners of the two "
                "languages get different cards",
            )
        if _normal(item.question) != question and _normal(item.explanation) != explanation:
            continue  # not copied: the common case, as `same_as_reference` decides it
        parts = same_as_reference(item, ref, reference.language)
        # one warning per item: the bank's own check already named the rest
        like = unit_texts(ref.question, ref.choices, ref.explanation, ref.whys)
        if parts and not untranslated_parts(bank, item, sources, like, reference.language):
            yield _untranslated_warning(bank, item, parts)


def _missing_whys(bank: Bank, item: Item, ref: Item, ref_language: str) -> Iterable[Diagnostic]:
    missing = [n for n in range(1, len(ref.choices) + 1) if ref.why(n) and not item.why(n)]
    if missing:
        numbers = ", ".join(map(str, missing))
        yield Diagnostic(
            bank.path,
            item.lines.get(f"choice {missing[0]}", item.line_at("choices")),
            "warning",
            f"item {item.id!r}: choice{'s' if len(missing) > 1 else ''} {numbers} "
            f"{'have' if len(missing) > 1 else 'has'} no 'why'; in {ref_language!r} "
            f"{'they have' if len(missing) > 1 else 'it has'} one",
        )


def _answer(answer: tuple[int, ...]) -> str:
    return str(answer[0]) if len(answer) == 1 else "[" + ", ".join(map(str, answer)) + "]"
