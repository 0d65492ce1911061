"""What a build tells: each deck's report and the build's result, what a later build
with nothing to do checks to replay it, and the names ankigen keeps in OUT."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from ankigen.core.errors import Diagnostic

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

    def left_as_it_is(self) -> DeckReport:
        """This deck as a build with nothing to do reports it: every note unchanged."""
        return replace(
            self,
            new=0,
            changed=0,
            unchanged=self.notes,
            removed=0,
            restored=0,
            written=False,
        )


WatchedFile = tuple[str, "tuple[int, int, int, int] | None", "str | None"]
"""A file a build read or wrote, as `builder.replay` checks it: its path; its size,
modification and change times (ns) and inode, where they vouch for its content; the
SHA-256 of its bytes, where they do not (both None: the file must not exist)."""


@dataclass(frozen=True)
class Watched:
    """What a build read and wrote, which a build with nothing to do checks before it
    replays what this one would print (`builder.replay`), with that build's result."""

    banks: tuple[str, ...]
    """The paths named like banks below the banks folder, as `bank.folder` walks it."""
    files: tuple[WatchedFile, ...]
    unchanged: BuildResult
    """The result of a build with nothing to do after this one."""


@dataclass(frozen=True)
class BuildResult:
    """What a build did: each deck's report, and what it has to tell."""

    decks: tuple[DeckReport, ...]
    warnings: Sequence[Diagnostic]
    """Problems in the banks that do not stop the build (a build with nothing to do
    gives them as the cache recorded them, `builder.cache.Recorded`)."""
    changes: tuple[Diagnostic, ...] = ()
    """What this build changes for people who already study the decks, with remedies."""
    pruned: tuple[str, ...] = ()
    """Lock entries of decks without a bank, forgotten on request (`--prune`)."""
    watched: Watched | None = field(default=None, repr=False, compare=False)
    """For the command line, which records what a build with nothing to do would print;
    None where the build cannot vouch for its inputs (a folder it could not list)."""


def package_name(bank: Bank) -> str:
    return f"{bank.topic}.{bank.language}.apkg"


Progress = Callable[[int, int], None]
Parents = tuple[tuple[int, str, str], ...]
