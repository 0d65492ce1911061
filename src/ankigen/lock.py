"""The lock file: what the previous build produced, so modification times only move
forward for notes whose content changed.

It sits beside the banks (`BANKS/ankigen.lock`) and is committed, like a
package manager's lock file, so builds on different machines agree.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ankigen.errors import AnkigenError

LOCK_NAME = "ankigen.lock"
LOCK_VERSION = 1


class LockError(AnkigenError):
    """The lock file is unreadable or from an unknown version."""


@dataclass(frozen=True)
class Stamp:
    """A content hash and the modification time (Unix seconds) it was first built at."""

    hash: str
    mtime: int


@dataclass
class DeckLock:
    name: str
    created: int
    items: dict[str, Stamp] = field(default_factory=dict)

    def canonical(self) -> str:
        """The entry as text, independent of the order its items were added in."""
        items = sorted((key, stamp.hash, stamp.mtime) for key, stamp in self.items.items())
        return json.dumps([self.name, self.created, items], ensure_ascii=False)


@dataclass
class Lock:
    notetype: Stamp | None = None
    decks: dict[str, DeckLock] = field(default_factory=dict)

    def to_bytes(self) -> bytes:
        """Stable JSON with one item per line, so the lock diffs well in review."""
        dump = json.dumps
        out = ["{", f' "version": {LOCK_VERSION},']
        if self.notetype:
            out.append(
                f' "notetype": {{"hash": {dump(self.notetype.hash)}, '
                f'"mtime": {self.notetype.mtime}}},'
            )
        out.append(' "decks": {')
        decks = sorted(self.decks.items())
        for d, (key, deck) in enumerate(decks):
            out.append(f"  {dump(key)}: {{")
            out.append(f'   "name": {dump(deck.name, ensure_ascii=False)},')
            out.append(f'   "created": {deck.created},')
            out.append('   "items": {')
            items = sorted(deck.items.items())
            for i, (item_id, stamp) in enumerate(items):
                comma = "," if i < len(items) - 1 else ""
                out.append(f"    {dump(item_id)}: [{dump(stamp.hash)}, {stamp.mtime}]{comma}")
            out.append("   }")
            out.append("  }" + ("," if d < len(decks) - 1 else ""))
        out.append(" }")
        out.append("}")
        return ("\n".join(out) + "\n").encode("utf-8")


def read_lock(path: Path) -> Lock:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return Lock()
    except OSError as exc:
        raise LockError(f"{path}: cannot read the lock file: {exc.strerror}") from None
    try:
        data = json.loads(raw)
        if data.get("version") != LOCK_VERSION:
            raise LockError(
                f"{path}: lock file version {data.get('version')!r} is not {LOCK_VERSION}; "
                "it was written by another ankigen"
            )
        notetype = data.get("notetype")
        return Lock(
            notetype=Stamp(str(notetype["hash"]), int(notetype["mtime"])) if notetype else None,
            decks={
                str(key): DeckLock(
                    name=str(deck["name"]),
                    created=int(deck["created"]),
                    items={
                        str(item_id): Stamp(str(value[0]), int(value[1]))
                        for item_id, value in deck["items"].items()
                    },
                )
                for key, deck in data["decks"].items()
            },
        )
    except LockError:
        raise
    except (ValueError, KeyError, TypeError, AttributeError, IndexError):
        raise LockError(
            f"{path}: the lock file is damaged; restore it from version control "
            "(deleting it makes every note look changed on the next import)"
        ) from None


def restamp(previous: Stamp | None, content_hash: str, now: int) -> Stamp:
    """Keep the old time for unchanged content; otherwise a time strictly after the old one."""
    if previous is not None and previous.hash == content_hash:
        return previous
    floor = previous.mtime + 1 if previous is not None else now
    return Stamp(content_hash, max(now, floor))
