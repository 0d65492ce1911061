"""The language identifier's verdicts, kept in OUT's bank cache by the digest of the text
and its languages (`text.langid.verdict_key`): a text lingua judged once is not judged
again, whichever bank, item or branch it comes back in. The bank cache already keeps a
bank's verdicts until the bank changes; this keeps them through the change, so an edit
asks lingua only about the texts it changed, and a cold build with a cache made on
another branch only about the texts that branch did not have.

Speed machinery alone, in a room of its own (as Black keeps its cache): it stores and
hands out verdicts, and never calls the checker. The file is written whole (atomically)
by a build that succeeds, with the MAC of this user's key: an OUT from elsewhere cannot
hand a build its verdicts.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from pathlib import Path

from ankigen.core.atomic import write_cache
from ankigen.core.errors import OutputError
from ankigen.core.reading import read_regular
from ankigen.core.secret import signed_record, verified_record
from ankigen.text import langid

NAME = "verdicts.v1"
"""In the bank cache's folder; not `.json`, which that cache tidies away as its own."""

MAX_KEPT = 20_000
"""Verdicts kept, the newest: 50 bytes each, 1 MiB at most. Only texts the identifier
had to judge are here (most are decided without it), so this is many projects' worth."""


def read(path: Path) -> dict[str, str]:
    """The verdicts in the file, if this version wrote it with this user's key."""
    try:
        data = read_regular(path)
    except OSError:
        return {}
    found = verified_record(data).get("verdicts")
    if not isinstance(found, list):
        return {}
    # pairs, oldest first: a JSON object's keys are signed sorted, which loses the age
    pairs = (p for p in found if isinstance(p, list) and len(p) == 2)
    return {k: v for k, v in pairs if isinstance(k, str) and isinstance(v, str)}


_used: tuple[str, int, int] | None = None
"""The file whose verdicts this process's identifier answers from, as it was read."""


def use(path: str) -> None:
    """Have this process's identifier answer from the verdicts at `path`, and note the
    new ones (in a worker too, before it checks a bank; read once per process)."""
    global _used
    try:
        status = os.stat(path)
        seen = (path, status.st_mtime_ns, status.st_size)
    except OSError:
        seen = (path, 0, 0)
    if seen != _used:
        langid.remember(read(Path(path)) if seen[1] else {})
        _used = seen


class Verdicts:
    """A build's verdict cache: the verdicts its processes learned, written by `save`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.learned: dict[str, str] = {}

    def learn(self, found: Mapping[str, str]) -> None:
        self.learned.update(found)

    def save(self) -> None:
        """The file with the new verdicts, if there are any: a build whose texts were all
        known (or needed no identifier) writes nothing. Only a cache: left out where it
        cannot be written."""
        self.learn(langid.take_learned())  # of the banks checked in this process
        if not self.learned:
            return
        kept = read(self.path)
        for key in self.learned:
            kept.pop(key, None)  # moved to the newest end
        kept.update(self.learned)
        newest = [list(pair) for pair in list(kept.items())[-MAX_KEPT:]]
        with contextlib.suppress(OutputError):
            write_cache(self.path, signed_record({"verdicts": newest}))
        self.learned = {}
