"""What a build tells: each deck's report and the build's result, and the names
ankigen keeps in OUT. A build with nothing to do needs nothing more (a deck's plan and
package are `build.planned`'s)."""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable, Sequence

from ankigen.core.errors import Diagnostic

TYPE_CHECKING = False  # records on a build's quickest path are named tuples (see `errors`)
if TYPE_CHECKING:
    from typing import NamedTuple

    from ankigen.bank.model import Bank


CACHE_NAME = ".ankigen-cache.json"


IMAGE_CACHE = ".ankigen-images"


BANK_CACHE = ".ankigen-banks"


if TYPE_CHECKING:

    class _DeckReport(NamedTuple):
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

    class _BuildResult(NamedTuple):
        decks: tuple[DeckReport, ...]
        warnings: Sequence[Diagnostic]
        """Problems in the banks that do not stop the build (a build with nothing to do
        gives them as the cache recorded them, `build.cache.Recorded`)."""
        changes: tuple[Diagnostic, ...] = ()
        """What this build changes for people who already study the decks, with remedies."""
        pruned: tuple[str, ...] = ()
        """Lock entries of decks without a bank, forgotten on request (`--prune`)."""
else:
    _DeckReport = namedtuple(
        "_DeckReport",
        "topic language path notes new changed unchanged removed retired written restored version",
        defaults=(0, ""),
    )
    _BuildResult = namedtuple("_BuildResult", "decks warnings changes pruned", defaults=((), ()))


class DeckReport(_DeckReport):
    """What one build did to one deck, compared with the previous build."""

    __slots__ = ()

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


class BuildResult(_BuildResult):
    """What a build did: each deck's report, and what it has to tell."""

    __slots__ = ()


def package_name(bank: Bank) -> str:
    return f"{bank.topic}.{bank.language}.apkg"


Progress = Callable[[int, int], None]


Parents = tuple[tuple[int, str, str], ...]
