"""Test helpers: bank files, and a real Anki collection to import packages into."""

from __future__ import annotations

import json
import marshal
import os
import re
import subprocess
import sys
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from anki.collection import (
    Collection,
    ExportAnkiPackageOptions,
    ImportAnkiPackageOptions,
    ImportAnkiPackageRequest,
)
from anki.notes import Note
from click.testing import CliRunner, Result

# the folders tests read from, named once: a test module's own __file__ moves with it
TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
SRC = REPO / "src"
DATA = TESTS / "data"
SHARED = REPO.parent / "shared"


def run_probe(code: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """`python -c code` with this checkout's ankigen, its output captured as text; a
    probe that hangs (or whose worker processes keep its output open) fails after
    `timeout` seconds instead of holding up the suite."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    return subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
    )


def invoke(runner: CliRunner, *args: str) -> Result:
    """The `ankigen` command line, run in this process, exceptions left to fail the test."""
    from ankigen.cli.app import cli

    return runner.invoke(cli, list(args), catch_exceptions=False)


def shared_path(relative: str) -> Path:
    """A path in the developers' sibling ../shared folder; skips the test, saying why, without it."""
    path = SHARED / relative
    if not path.exists():
        pytest.skip(f"needs {path}, which only developers have (../shared beside the repository)")
    return path


def item(item_id: str, answer: Any = 1, choices: int = 4, **extra: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": item_id,
        "question": f"Question {item_id}?",
        "choices": [f"{item_id} choice {n}" for n in range(1, choices + 1)],
        "answer": answer,
        "explanation": f"Explanation: {item_id}.",
    }
    data.update(extra)
    return data


def write_bank(
    banks: Path,
    topic: str = "demo",
    language: str = "en",
    items: list[dict[str, Any]] | None = None,
    **extra: Any,
) -> Path:
    data: dict[str, Any] = {"topic": topic, "language": language, "title": f"{topic} quiz"}
    data.update(extra)
    data["items"] = items if items is not None else [item("one"), item("two", 2)]
    path = banks / topic / f"{language}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


_VERSION = re.compile(r', version \d{4}\.\d\d\.\d\d\+[0-9a-f]{8}| data-version="[^"]*"')


def without_versions(text: str) -> str:
    """Output or a field without the deck and card versions, for tests about something else."""
    return _VERSION.sub("", text)


class ImportLog:
    def __init__(self, log: Any) -> None:
        self.new = len(log.new)
        self.updated = len(log.updated)
        self.duplicate = len(log.duplicate)
        self.conflicting = len(log.conflicting)

    def counts(self) -> dict[str, int]:
        return {
            "new": self.new,
            "updated": self.updated,
            "duplicate": self.duplicate,
            "conflicting": self.conflicting,
        }


class AnkiCollection:
    """A real Anki collection on disk, driven through the `anki` package.

    The `anki` library keeps note types in a Python-side cache
    (`ModelManager._cache`, a dict declared on the class and replaced per
    instance) that the backend's package importer never invalidates: a note
    type read before an import keeps its old CSS and templates afterwards.
    Every read here therefore goes through a cache this collection owns and
    empties after each import.
    """

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.col = Collection(str(folder / "collection.anki2"))
        # never the class-level dict that every ModelManager would otherwise share
        self.col.models._clear_cache()
        assert self.col.models._cache is not type(self.col.models)._cache

    def close(self) -> None:
        self.col.close()

    def import_package(self, path: Path) -> ImportLog:
        request = ImportAnkiPackageRequest(
            package_path=str(path), options=ImportAnkiPackageOptions()
        )
        log = ImportLog(self.col.import_anki_package(request).log)
        # the backend may have replaced note types this process had cached
        self.col.models._clear_cache()
        return log

    def note_type(self, name: str) -> dict[str, Any]:
        """The note type as this collection's database holds it now, not a cached copy."""
        self.col.models._clear_cache()
        model = self.col.models.by_name(name)
        assert model is not None, f"no note type {name!r}"
        return dict(model)

    def notes(self) -> list[Note]:
        return [self.col.get_note(nid) for nid in sorted(self.col.find_notes(""))]

    def note_by_item(self, item_id: str, language: str | None = None) -> Note:
        found = [
            n
            for n in self.notes()
            if n["ItemId"] == item_id and (language is None or n["Language"] == language)
        ]
        assert len(found) == 1, f"{len(found)} notes for item {item_id!r}"
        return found[0]

    def deck_names(self) -> set[str]:
        return {d.name for d in self.col.decks.all_names_and_ids()} - {"Default"}

    def review_all(self) -> int:
        """Answer every card "Good" once through the real scheduler; returns how many."""
        from anki.scheduler.v3 import CardAnswer

        card_ids = list(self.col.find_cards(""))
        for card_id in card_ids:
            card = self.col.get_card(card_id)
            card.start_timer()
            states = self.col._backend.get_scheduling_states(card_id)
            answer = self.col.sched.build_answer(card=card, states=states, rating=CardAnswer.EASY)
            self.col.sched.answer_card(answer)
        return len(card_ids)

    def revlog_count(self) -> int:
        return int(self.col.db.scalar("select count() from revlog"))


def rewrite_entry(entry: Path, change: object, checksum: bool = True) -> None:
    """Change a bank cache entry's payload; with `checksum`, its MAC made with this user's
    key, so that only its shape can tell.

    `change(header, data)` sees the first two payloads as one: the outline's, with the
    items' columns in `data["bank"]["items"]` (when the bank loaded), as `marshal` reads
    them (a column is a list, a tuple-valued field a tuple); the parity stays."""
    head, _, payload = entry.read_bytes().partition(b"\n")
    header = json.loads(head)
    size, items_size = header["outline"], header["items"]
    data = marshal.loads(zlib.decompress(payload[:size]))
    items = marshal.loads(zlib.decompress(payload[size : size + items_size]))
    parity = payload[size + items_size :]
    if isinstance(data.get("bank"), dict):
        data["bank"]["items"] = items
    change(header, data)  # type: ignore[operator]
    if isinstance(data.get("bank"), dict) and "items" in data["bank"]:
        items = data["bank"].pop("items")
    first = zlib.compress(marshal.dumps(data))
    second = zlib.compress(marshal.dumps(items))
    new_payload = first + second + parity
    if checksum:  # made with this user's key, as if by ankigen itself
        from ankigen.core.secret import mac

        header["outline"], header["items"] = len(first), len(second)
        del header["checksum"]
        header["checksum"] = mac(json.dumps(header, sort_keys=True).encode(), new_payload)
    entry.write_bytes(json.dumps(header).encode() + b"\n" + new_payload)


def read_build_cache(path: Path) -> dict[str, Any]:
    """The record in a build cache (`OUT/.ankigen-cache.json`), its MAC checked."""
    from ankigen.core.secret import verified_record

    record = verified_record(path.read_bytes())
    assert record, f"{path} is not a build cache this user's ankigen wrote"
    return record


def write_build_cache(path: Path, record: object, *, key: bytes | None = None) -> None:
    """A build cache holding `record`, as ankigen writes it with this user's key, or as
    someone without it would forge it with another `key`."""
    import hashlib

    from ankigen import __version__
    from ankigen.core.secret import signed_record

    data = signed_record(record)
    if key is not None:
        _, _, body = data.partition(b"\n")
        forged = hashlib.blake2b(key=key, digest_size=32)
        forged.update(len(body).to_bytes(8, "big"))
        forged.update(body)
        header = {"mac": forged.hexdigest(), "version": __version__}
        data = json.dumps(header, sort_keys=True).encode() + b"\n" + body
    path.write_bytes(data)


def export(collection: AnkiCollection, path: Path, with_media: bool = False) -> Path:
    """The collection's notes in a package, as Anki exports a deck to share."""
    options = ExportAnkiPackageOptions(
        with_scheduling=False, with_deck_configs=False, with_media=with_media, legacy=False
    )
    collection.col.export_anki_package(out_path=str(path), options=options, limit=None)
    return path


def edit(collection: AnkiCollection, item: str, **fields: str) -> None:
    """As a person does in Anki's editor."""
    note = collection.note_by_item(item)
    for name, value in fields.items():
        note[name] = value
    collection.col.update_note(note)


def until(condition: Callable[[], object], what: str, seconds: float = 15) -> None:
    """Wait for `condition` to hold, failing with `what` after `seconds`."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"not within {seconds} s: {what}"
        time.sleep(0.02)
