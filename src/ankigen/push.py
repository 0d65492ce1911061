"""Hand built packages to a running Anki through the AnkiConnect add-on.

AnkiConnect (`ankigen.ankiconnect`) takes `importPackage` with the absolute
path of a package, and imports it with Anki's own importer, so the update rules are
Anki's. What was pushed where is remembered in OUT/.ankigen-pushed.json, so
only packages that changed since the last push to that Anki are sent again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ankigen.ankiconnect import AnkiConnect
from ankigen.core.atomic import write_atomic
from ankigen.core.jsondata import parse_json

RECORD_NAME = ".ankigen-pushed.json"


@dataclass(frozen=True)
class Pushed:
    path: Path
    reply: dict[str, Any]
    """AnkiConnect's reply, as it sent it."""


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _read_record(out_dir: Path) -> dict[str, dict[str, str]]:
    try:
        data = parse_json((out_dir / RECORD_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_record(out_dir: Path, record: dict[str, dict[str, str]]) -> None:
    write_atomic(out_dir / RECORD_NAME, json.dumps(record, indent=1, sort_keys=True).encode())


def changed(out_dir: Path, packages: Sequence[Path], url: str) -> list[Path]:
    """The packages whose content differs from what was last pushed to this URL."""
    pushed = _read_record(out_dir).get(url, {})
    return [p for p in packages if pushed.get(p.name) != _digest(p)]


def push(client: AnkiConnect, out_dir: Path, packages: Sequence[Path]) -> list[Pushed]:
    """Import each package into Anki, remembering each one Anki took."""
    record = _read_record(out_dir)
    done = []
    for path in packages:
        reply = client.import_package(path)
        record.setdefault(client.url, {})[path.name] = _digest(path)
        _write_record(out_dir, record)
        done.append(Pushed(path, reply))
    return done


@dataclass(frozen=True)
class PushReport:
    pushed: tuple[Pushed, ...]
    unchanged: tuple[Path, ...]
    """Packages unchanged since the last push to the same Anki, not pushed again."""


def push_changed(
    client: AnkiConnect, out_dir: Path, packages: Sequence[Path], every: bool = False
) -> PushReport:
    """Each package that changed since the last push to this Anki (every one, with
    `every`) imported through AnkiConnect."""
    todo = list(packages) if every else changed(out_dir, packages, client.url)
    pushed = push(client, out_dir, todo)
    return PushReport(tuple(pushed), tuple(p for p in packages if p not in todo))
