"""Which bank a PO file's translations go into: the one whose header names the file's
language, or the one that is that language but for a region the translator's tool added
(`de_DE` for the team's `de`); never the reference, even but for a region."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ankigen.bank.model import Bank
from ankigen.core.errors import Diagnostic
from ankigen.text import lang
from ankigen.translation.poread import PoError
from ankigen.translation.start import claims, regional_bank, translation_path


def po_target(
    po_path: Path,
    banks_dir: Path,
    group: Sequence[Bank],
    reference: Bank,
    language: str,
    warnings: list[Diagnostic],
) -> tuple[Path, str]:
    """`translation_path` for the PO file's language, or the bank it goes into but for a
    region its tool added (`regional_bank`), said in `warnings`; a PoError where that is
    the reference's language (`en_US` for the reference `en`)."""
    claimed = any(claims(bank, language) for bank in group)
    if not claimed and lang.but_for_region(reference.language, language):
        raise PoError(
            f"{po_path}: its Language {language!r} is the reference language of "
            f"{reference.topic!r} ({reference.language!r}) but for the region: a PO file "
            "translates the reference, it never rewrites it (to start a bank in "
            f"{language!r}: `ankigen translate {reference.topic} --to {language}`, then import)"
        )
    regional = regional_bank(group, reference, language)
    if regional is not None:
        warnings.append(
            Diagnostic(
                str(po_path),
                _language_line(po_path),
                "warning",
                f"no bank of {reference.topic!r} is in {language!r}: its translations go "
                f"into {regional.path}, in {regional.language!r}, the same language but "
                "for the region (to start a bank of its own, "
                f"`ankigen translate {reference.topic} --to {language}` first)",
            )
        )
        language = regional.language
    return translation_path(banks_dir, group, reference, language)


def named_bank_language(
    po_path: Path,
    group: Sequence[Bank],
    reference: Bank,
    target: Path,
    language: str,
    warnings: list[Diagnostic],
) -> str:
    """The language of the translation `-o` names, where it is the PO file's by a
    former name (`formerly: {language: ...}`), or but for a region its tool added where
    no bank says the file's (said in `warnings`); else the file's. Never the reference's:
    a PO file never rewrites it."""
    named = [bank for bank in group if Path(bank.path).resolve() == target.resolve()]
    if len(named) != 1 or Path(named[0].path).resolve() == Path(reference.path).resolve():
        return language
    bank = named[0]
    if language in bank.formerly_languages:
        return bank.language
    claimed = any(claims(bank, language) for bank in group)
    if claimed or not lang.but_for_region(bank.language, language):
        return language
    warnings.append(
        Diagnostic(
            str(po_path),
            _language_line(po_path),
            "warning",
            f"{bank.path} is in {bank.language!r}, the PO file's {language!r} but for the "
            "region: its translations go there, as asked",
        )
    )
    return bank.language


def _language_line(po_path: Path) -> int:
    """The line of the header's Language (polib keeps no lines of the header), or 1."""
    try:
        lines = po_path.read_bytes().splitlines()
    except OSError:
        return 1
    return next((n for n, line in enumerate(lines, 1) if line.startswith(b'"Language:')), 1)
