"""A deck's plan, and its package as made or kept: what travels between the process
that plans a deck and the build proper (a build with nothing to do never loads it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ankigen.builder.result import DeckReport
from ankigen.core.errors import Diagnostic

if TYPE_CHECKING:
    from ankigen.apkg.package import PackageDeck
    from ankigen.identity.lockfile import DeckLock


@dataclass(frozen=True)
class DeckPlan:
    """What the build proper needs of one deck: its package (or where it is), its lock
    entry, its report and warnings."""

    key: str
    """The bank's key: a plan made in a worker comes back without the bank it was made from."""
    package: PackageDeck | Packaged | HeldPackage
    """The content without its parent decks, which need every deck's version; or the
    package itself, when the job knew the parents and so made it too; or where the
    process that planned the deck keeps its content to make the package next."""
    lock: DeckLock
    report: DeckReport
    warnings: tuple[Diagnostic, ...]
    media: tuple[tuple[str, bytes], ...] = ()
    lock_text: str = ""
    """`identity.lockfile.deck_text` of its entry, when made in a deck's job (where it runs)."""


@dataclass(frozen=True)
class Packaged:
    """A deck's package, made where the deck was planned."""

    key: str
    """`package_key` of its content."""
    data: bytes | None
    """The package file; None when the package in place already has this content."""


@dataclass(frozen=True)
class HeldPackage:
    """A deck's package content, kept by the process that planned it (`run_held_package`)."""

    token: str
