"""What a build tells: each deck's report and the build's result, and the names
ankigen keeps in OUT. A build with nothing to do needs nothing more (a deck's plan and
package are `build.planned`'s)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ankigen.core.errors import Diagnostic

TYPE_CHECKING = False  # as typing's, without importing typing (see `errors`)
if TYPE_CHECKING:
    from ankigen.bank.model import Bank


CACHE_NAME = ".ankigen-cache.json"


IMAGE_CACHE = ".ankigen-images"


BANK_CACHE = ".ankigen-banks"


@dataclass(frozen=True)
class DeckReport:
    """What one build did to one deck, compared with the previous build."""

    topic: str
    language: str
    path: str
    notes: int
    new: int
    changed: int
    unchanged: int
    removed: int
    retired: int
    written: bool
    restored: int = 0
    """Notes whose text went back to an earlier version: they get a newer time too."""
    version: str = ""
    """Sorts in time: the date of the newest note and a content hash (see `version`)."""

    def as_json(self) -> dict[str, object]:
        return {
            "topic": self.topic,
            "language": self.language,
            "path": self.path,
            "notes": self.notes,
            "new": self.new,
            "changed": self.changed,
            "unchanged": self.unchanged,
            "removed": self.removed,
            "retired": self.retired,
            "restored": self.restored,
            "written": self.written,
            "version": self.version,
        }


@dataclass(frozen=True)
class BuildResult:
    decks: tuple[DeckReport, ...]
    warnings: Sequence[Diagnostic]
    """Problems in the banks that do not stop the build (a build with nothing to do gives
    them as the cache recorded them, `build.cache.Recorded`)."""
    changes: tuple[Diagnostic, ...] = field(default=())
    """What this build changes for people who already study the decks, with remedies."""
    pruned: tuple[str, ...] = ()
    """Lock entries of decks without a bank, forgotten on request (`--prune`)."""


def package_name(bank: Bank) -> str:
    return f"{bank.topic}.{bank.language}.apkg"


Progress = Callable[[int, int], None]


Parents = tuple[tuple[int, str, str], ...]
