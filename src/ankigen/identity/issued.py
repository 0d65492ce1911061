"""The evidence of times already issued, from places a revert does not undo: the output
folder's record (`OUT/.ankigen-issued.json`) and every version of the lock file in the
banks' git history."""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable
from pathlib import Path

from ankigen.core.jsondata import parse_json
from ankigen.core.reading import read_regular
from ankigen.core.times import clock, time_problem
from ankigen.identity.guid import (
    GUID,
    all_guids,
    note_guid,
    split_deck_key,
)
from ankigen.identity.stamp import (
    Stamp,
    sane_rows,
    sane_stamps,
    stamp_columns,
    stamps,
    stamps_of,
)

ISSUED_NAME = ".ankigen-issued.json"


# 1: notes as {guid: [hash, mtime]}; 2: as columns, parsed and written in half the time
ISSUED_VERSION = 2


class Issued:
    """The newest stamp ever issued for each GUID, as far as this machine can know.

    HeldPackage in the output folder, never committed, and only ever moving forward:
    it survives `git revert`, `git checkout OLD -- banks` and undo in an editor.
    The lock file's git history is read into it, so a team shares the evidence.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.notes: dict[str, Stamp] = {}
        self.blobs: set[str] = set()
        """Git blobs of the lock file already read into `notes`."""
        self.read_as: bytes | None = None
        """The SHA-256 of the file as read, None if there was none."""
        try:
            raw = read_regular(path)
        except OSError:
            return
        self.read_as = hashlib.sha256(raw).digest()
        self._load(raw)

    def _load(self, raw: bytes) -> None:
        try:
            data = parse_json(raw)
        except ValueError:
            return
        if not isinstance(data, dict) or not isinstance(data.get("blobs"), list):
            return
        now = clock()
        if data.get("version") == 1:  # as earlier versions wrote it: its evidence still holds
            self.notes = _notes_by_guid(data.get("notes"), now)
        elif data.get("version") == ISSUED_VERSION:
            self.notes = _notes_by_column(data, now)
        else:
            return
        self.blobs = {
            b for b in data["blobs"] if isinstance(b, str) and re.fullmatch(r"[0-9a-f]{40,64}", b)
        }

    def still_current(self) -> bool:
        """Whether the file is as it was read: read before the output folder was locked,
        another build may have written it since."""
        try:
            raw = read_regular(self.path)
        except OSError:
            return self.read_as is None
        return hashlib.sha256(raw).digest() == self.read_as

    def note(self, guid: str, stamp: Stamp) -> None:
        """Record that `stamp` was issued for `guid`."""
        known = self.notes.get(guid)
        if known is None or stamp.mtime > known.mtime:
            self.notes[guid] = stamp

    def newest(self, guid: str) -> Stamp | None:
        return self.notes.get(guid)

    def read_git_history(self, lock_path: Path) -> None:
        """Every version of the lock file in git that was not read before."""
        for blob, text in git_versions(lock_path, self.blobs):
            self.blobs.add(blob)
            for guid, stamp in stamps_in_lock_text(text):
                self.note(guid, stamp)

    def to_bytes(self) -> bytes:
        guids = sorted(self.notes)
        hashes, mtimes = stamp_columns(list(map(self.notes.__getitem__, guids)))
        data = {
            "version": ISSUED_VERSION,
            # flat columns: the JSON encoder and parser handle them fastest
            "guids": guids,
            "hashes": hashes,
            "mtimes": mtimes,
            "blobs": sorted(self.blobs),
        }
        return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()


def _notes_by_guid(notes: object, now: int) -> dict[str, Stamp]:
    """The usable notes of a version 1 record: {guid: [hash, mtime]}."""
    if not isinstance(notes, dict):
        return {}
    sane = _sane_notes(notes, now)
    return sane if sane is not None else _usable_notes(notes.items(), now)


def _sane_notes(notes: dict[str, object], now: int) -> dict[str, Stamp] | None:
    """The notes, if every one is exactly what version 1 wrote and sane, checked a
    column at a time (there is one per note ever issued); else None."""
    columns = sane_rows(list(notes.values()), 2, now)
    if columns is None or not all_guids(list(notes)):
        return None
    return dict(zip(notes, stamps_of(columns), strict=True))


def _notes_by_column(data: dict[str, object], now: int) -> dict[str, Stamp]:
    """The usable notes of a version 2 record: columns of GUIDs, hashes and times."""
    guids, hashes, mtimes = (data.get(name) for name in ("guids", "hashes", "mtimes"))
    if not (isinstance(guids, list) and isinstance(hashes, list) and isinstance(mtimes, list)):
        return {}
    if not len(guids) == len(hashes) == len(mtimes):
        return {}
    if sane_stamps(hashes, mtimes, now) and all_guids(guids):  # as version 2 writes it
        return dict(zip(guids, stamps(hashes, mtimes), strict=True))
    rows = map(list, zip(hashes, mtimes, strict=True))
    return _usable_notes(zip(guids, rows, strict=True), now)


def _usable_notes(rows: Iterable[tuple[object, object]], now: int) -> dict[str, Stamp]:
    """Of (GUID, [hash, mtime]) rows not as ankigen wrote them, what can be used, note by
    note."""
    found = {}
    for guid, value in rows:
        stamp = _stamp_or_none(value, now)
        if stamp is not None and isinstance(guid, str) and GUID.fullmatch(guid):
            found[guid] = stamp
    return found


def _stamp_or_none(value: object, now: int) -> Stamp | None:
    if (
        isinstance(value, list)
        and len(value) >= 2
        and isinstance(value[0], str)
        and time_problem(value[1], now) is None
    ):
        return Stamp(value[0], value[1])
    return None


def stamps_in_lock_text(text: bytes) -> Iterable[tuple[str, Stamp]]:
    """(GUID, stamp) of every note in one version of a lock file; damaged parts are skipped.

    Times that are not sane are skipped too: a lock once committed with a wrong
    clock must not push every later time into the future.
    """
    try:
        data = parse_json(text)
        decks = data["decks"]
        items_of = {key: deck["items"] for key, deck in decks.items()}
    except (ValueError, KeyError, TypeError, AttributeError):
        return
    now = clock()
    for key, items in items_of.items():
        if not isinstance(items, dict):
            continue
        topic, language = split_deck_key(str(key))
        for item_id, value in items.items():
            stamp = _stamp_or_none(value, now)
            if stamp is None:
                continue
            guid = value[2] if len(value) > 2 and isinstance(value[2], str) else None
            if guid is None or not GUID.fullmatch(guid):
                guid = note_guid(topic, language, str(item_id))
            yield guid, stamp


def _in_git(folder: Path) -> bool:
    """Whether git could find a repository for `folder`, as its discovery does: `GIT_DIR`,
    or a `.git` in the folder or one above it, or a bare repository there. Outside one,
    starting git only to hear there is none cost 10 ms of an edit's build."""
    if os.environ.get("GIT_DIR"):
        return True
    for above in (folder, *folder.parents):
        if (above / ".git").exists():
            return True
        if (above / "HEAD").is_file() and (above / "objects").is_dir():
            return True
    return False


def _git(cwd: Path, *args: str, data: bytes | None = None) -> bytes | None:
    import subprocess  # here: only a build that changes something reads git's history

    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            input=data,
            capture_output=True,
            check=False,
            timeout=120,
        )
    except (OSError, subprocess.SubprocessError):
        return None  # no git on this machine: the output folder's record still holds
    return done.stdout if done.returncode == 0 else None


def git_versions(path: Path, known: set[str] | None = None) -> list[tuple[str, bytes]]:
    """(blob id, content) of each version of a file (the lock; a bank, for `pull`) in any
    branch of its git repository, newest first, but for the blobs `known`."""
    known = known or set()
    folder = path.parent
    if not folder.is_dir() or not _in_git(folder.resolve()):
        return []
    log = _git(
        folder,
        "log",
        "--all",
        "--no-renames",
        "--format=",
        "--raw",
        "--no-abbrev",
        "--",
        path.name,
    )
    if not log:
        return []
    blobs = []
    for line in log.decode("ascii", "replace").splitlines():
        # ":100644 100644 <old> <new> M\tpath": the new side is that commit's version
        fields = line.split()
        if len(fields) >= 5 and line.startswith(":"):
            blob = fields[3]
            if set(blob) != {"0"} and blob not in known and blob not in blobs:
                blobs.append(blob)
    if not blobs:
        return []
    out = _git(folder, "cat-file", "--batch", data="".join(b + "\n" for b in blobs).encode())
    if out is None:
        return []
    versions = []
    at = 0
    for blob in blobs:
        end = out.index(b"\n", at)
        header = out[at:end].split()
        at = end + 1
        if len(header) != 3 or header[1] != b"blob":
            continue
        size = int(header[2])
        versions.append((blob, out[at : at + size]))
        at += size + 1
    return versions
