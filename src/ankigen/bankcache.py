"""Checked banks kept between builds, so an edit to one bank re-reads only that bank.

Each entry is JSON (never pickle: an output folder may come from elsewhere),
named by the hash of the bank file's bytes, its path and ankigen's version.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Any

from ankigen import __version__
from ankigen.bank import Bank, Item
from ankigen.errors import Diagnostic
from ankigen.package import write_atomic

Loaded = tuple[Bank | None, list[Diagnostic]]


# Bumped whenever Bank or Item change, or what loading reports: an entry written by an
# older loader (which may have refused a choice mapping, say) must not be reused.
FORMAT = 2


def entry_name(path: Path, data: bytes) -> str:
    digest = hashlib.sha256(data)
    digest.update(f"\0{path}\0{__version__}\0{FORMAT}".encode())
    return digest.hexdigest()[:32] + ".json"


_ITEM_FIELDS = [f.name for f in dataclasses.fields(Item)]
_BANK_FIELDS = [f.name for f in dataclasses.fields(Bank) if f.name != "items"]


def dump(loaded: Loaded) -> bytes:
    bank, diagnostics = loaded
    data: dict[str, Any] | None = None
    if bank is not None:
        # by hand: dataclasses.asdict deep-copies every value and is several times slower
        data = {name: getattr(bank, name) for name in _BANK_FIELDS}
        data["items"] = [
            {name: getattr(item, name) for name in _ITEM_FIELDS} for item in bank.items
        ]
    return json.dumps(
        {"bank": data, "diagnostics": [list(dataclasses.astuple(d)) for d in diagnostics]},
        ensure_ascii=False,
    ).encode()


def load(raw: bytes) -> Loaded:
    data = json.loads(raw)
    bank = _bank(data["bank"]) if data["bank"] is not None else None
    diagnostics = [Diagnostic(str(p), int(n), s, str(m)) for p, n, s, m in data["diagnostics"]]
    return bank, diagnostics


def _bank(data: dict[str, Any]) -> Bank:
    items = tuple(
        Item(
            **{
                **item,
                "choices": tuple(item["choices"]),
                "whys": tuple(item["whys"]),
                "answer": tuple(item["answer"]),
                "tags": tuple(item["tags"]),
            }
        )
        for item in data["items"]
    )
    return Bank(**{**data, "items": items, "tags": tuple(data["tags"])})


class BankCache:
    """Read as banks are checked; written only by a build that succeeds (`save`)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.used: set[str] = set()
        self.pending: dict[str, bytes] = {}
        self.names: dict[str, str] = {}
        """Bank path -> its entry's name, which identifies the bank file's content."""

    def get(self, path: Path) -> Loaded | None:
        try:
            name = self.names[str(path)] = entry_name(path, path.read_bytes())
            loaded = load((self.folder / name).read_bytes())
        except (OSError, ValueError, KeyError, TypeError):
            return None
        self.used.add(name)
        return loaded

    def put(self, path: Path, loaded: Loaded) -> None:
        """Keep a freshly checked bank; its file was hashed already by `get`."""
        name = self.names.get(str(path))
        if name is None:
            return
        self.pending[name] = dump(loaded)
        self.used.add(name)

    def save(self) -> None:
        """Write the new entries; forget those this build did not use."""
        for name, data in self.pending.items():
            write_atomic(self.folder / name, data)
        self.pending.clear()
        if self.folder.is_dir():
            for entry in self.folder.glob("*.json"):
                if entry.name not in self.used:
                    entry.unlink(missing_ok=True)
