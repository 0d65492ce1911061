"""Whether a translation's item still has the reference's choices, where a PO file's
choice entries (translations of the reference's choices, by place) may be written."""

from __future__ import annotations

from pathlib import Path

import polib

from ankigen.bank.model import Bank
from ankigen.core.errors import Diagnostic
from ankigen.translation.renamed import renames


def unaligned_choices(
    po: polib.POFile,
    po_path: Path,
    reference: Bank,
    target: Bank | None,
    wanted: dict[str, str],
) -> list[Diagnostic]:
    """Leave out of `wanted` the choices (and their whys) of each item whose choices are
    not the reference's any more (its answer, or how many it has, differ): a PO entry is
    the translation of the reference's choice at its place, and written into another
    place it would make a wrong choice right, or be lost. A warning for each such item."""
    if target is None:
        return []
    theirs = {item.id: item for item in reference.items}
    renamed = renames(reference, target)  # the wanted contexts are the new ids'
    warnings = []
    for item in target.items:
        now = renamed.get(item.id, item.id)
        was = theirs.get(now)
        if was is None or (item.answer, len(item.choices)) == (was.answer, len(was.choices)):
            continue
        left = [c for c in wanted if c.startswith((f"{now}|choice ", f"{now}|why "))]
        if not left:
            continue
        for context in left:
            del wanted[context]
        line = next((e.linenum for e in po if e.msgctxt in left and not e.obsolete), 1)
        warnings.append(
            Diagnostic(
                str(po_path),
                line or 1,
                "warning",
                f"item {item.id!r}: its choices were not imported: the reference's changed "
                f"since this translation was made (answer {_numbers(was.answer)} of "
                f"{len(was.choices)} there, {_numbers(item.answer)} of {len(item.choices)} "
                "here); give the item the reference's choices and answer, then import again",
            )
        )
    return warnings


def _numbers(answer: tuple[int, ...]) -> str:
    return "+".join(str(n) for n in answer)
