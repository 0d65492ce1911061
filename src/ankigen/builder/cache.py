"""The build cache (`OUT/.ankigen-cache.json`): what the last build into a folder did,
so a build with the same inputs stops before reading anything, and the fingerprint of
those inputs.

The file is a header line, `{"mac": ..., "version": ...}`, then the record as JSON. The
MAC is of the record's bytes as written: checking it costs a hash, where a MAC of the
parsed value would cost dumping it again (8 ms of a 0.1 s build with nothing to do).
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ankigen.apkg import notetype
from ankigen.bank.files import (
    Known,
    SourceDigest,
    parse_known,
    record_of,
)
from ankigen.bank.folder import settled, status_of
from ankigen.builder.result import (
    CACHE_NAME,
    BuildResult,
    DeckReport,
    Parents,
    Watched,
    WatchedFile,
)
from ankigen.core.errors import Diagnostic
from ankigen.core.hashing import content_hash
from ankigen.core.jsondata import parse_json
from ankigen.core.reading import read_regular
from ankigen.core.secret import signed_record, verified_record
from ankigen.core.version import __version__
from ankigen.identity.versions import is_version
from ankigen.images.process import unchanged_images
from ankigen.images.settings import Settings

if TYPE_CHECKING:
    from typing import Any

    from ankigen.images.process import Prepared


class BuildCache:
    """What the last builds into an output folder produced from which inputs (not committed).

    Per package: the hash of its inputs and the file's size and time, so an
    unchanged deck is not rewritten. For the whole build: a fingerprint of the
    bytes every input had when it was read, so a build with nothing changed
    skips all the work. Anything of the wrong shape is ignored.
    """

    def __init__(self, out_dir: Path) -> None:
        self.path = out_dir / CACHE_NAME
        try:
            self.read_bytes = read_regular(self.path)
        except OSError:
            self.read_bytes = b""
        loaded = verified_record(self.read_bytes)
        packages = loaded.get("packages")
        self.packages: dict[str, dict[str, object]] = {
            name: entry
            for name, entry in (packages.items() if isinstance(packages, dict) else ())
            if isinstance(name, str) and isinstance(entry, dict)
        }
        last = loaded.get("last")
        self.last: dict[str, object] = last if isinstance(last, dict) else {}
        self.banks: Known = parse_known(loaded.get("banks"))
        """The banks' files by status, as the last build read them (`bank.files.Signature`)."""

    def current(self) -> BuildCache:
        """This cache, or the file as it is now if another build has written it since."""
        try:
            same = read_regular(self.path) == self.read_bytes
        except OSError:
            same = not self.read_bytes
        return self if same else BuildCache(self.path.parent)

    def to_record(self) -> BuildCache:
        """A copy for a build to record itself in (`record`, `remember`), leaving this one
        as it was read: the file is parsed once a build (0.05 s of an edit at 10 x 10,000
        items when the build proper read it again)."""
        made = copy.copy(self)
        made.packages = dict(self.packages)  # the one record changed in place
        return made

    def fresh(self, path: Path) -> bool:
        """Whether the file is still the one this cache recorded."""
        entry = self.packages.get(path.name)
        try:
            stat = path.stat()
        except OSError:
            return False
        return (
            entry is not None
            and entry.get("size") == stat.st_size
            and entry.get("mtime_ns") == stat.st_mtime_ns
            and entry.get("inode") == stat.st_ino
        )

    def key_if_fresh(self, path: Path) -> str | None:
        entry = self.packages.get(path.name)
        if entry is not None and self.fresh(path):
            key = entry.get("key")
            return key if isinstance(key, str) else None
        return None

    def record(
        self,
        path: Path,
        key: str,
        reuse: str | None = None,
        parents: Parents = (),
        version: str = "",
    ) -> None:
        stat = path.stat()
        self.packages[path.name] = {
            "key": key,
            "reuse": reuse,
            "parents": content_hash(repr(parents)),
            "deck_version": version,
            "size": stat.st_size,
            "mtime_ns": stat.st_mtime_ns,
            "inode": stat.st_ino,
        }

    def same_content(self, path: Path, reuse: str) -> bool:
        """Whether the package in place holds these notes (its parent decks aside)."""
        entry = self.packages.get(path.name)
        return entry is not None and entry.get("reuse") == reuse and self.fresh(path)

    def recorded_version(self, path: Path) -> str | None:
        """The deck's version recorded with the package, if well formed: right when
        `same_content` holds, since the reuse key binds the lock entry it is made from."""
        version = self.packages.get(path.name, {}).get("deck_version")
        return version if is_version(version) else None

    def reusable(self, path: Path, reuse: str | None, parents: Parents) -> bool:
        """Whether the package in place was built from inputs with this reuse key and
        these parent decks."""
        entry = self.packages.get(path.name)
        return (
            reuse is not None
            and self.same_content(path, reuse)
            and entry is not None
            and entry.get("parents") == content_hash(repr(parents))
        )

    def remember(
        self,
        fingerprint: str,
        result: BuildResult,
        images: Prepared,
        media_dir: Path,
        standing: Sequence[Diagnostic],
        warnings: list[object],
    ) -> None:
        """`standing`: changes that hold until someone acts (a deck without a bank);
        `warnings`: the result's, as `recorded` (made while the build waits for its
        packages: 36 ms for 45,000 warnings)."""
        self.last = {
            "inputs": fingerprint,
            "media": str(media_dir),
            "decks": [d.as_json() for d in result.decks],
            "warnings": warnings,
            "standing": recorded(standing),
            "images": [source.as_json() for source in images.sources],
        }

    def unchanged(self, fingerprint: str, out_dir: Path) -> BuildResult | None:
        """The last build's result, if its inputs are the same and its packages intact."""
        media_dir = self.last.get("media")
        if self.last.get("inputs") != fingerprint or not isinstance(media_dir, str):
            return None
        result = self.last_result()
        if result is None:
            return None
        if not all(self.fresh(out_dir / d.path) for d in result.decks):
            return None
        if not unchanged_images(self.last.get("images"), Path(media_dir)):
            return None
        return result

    def last_result(self) -> BuildResult | None:
        """What a build with nothing to do after the last one returns: its decks, every
        note unchanged, its warnings, and the changes that hold until someone acts."""
        try:
            decks = tuple(
                DeckReport(
                    topic=str(d["topic"]),
                    language=str(d["language"]),
                    path=str(d["path"]),
                    notes=int(d["notes"]),
                    new=0,
                    changed=0,
                    unchanged=int(d["notes"]),
                    removed=0,
                    retired=int(d["retired"]),
                    written=False,
                    version=str(d.get("version", "")),
                )
                for d in self.last["decks"]  # type: ignore[attr-defined]
            )
            warnings = Recorded(self.last["warnings"])
            standing = tuple(Recorded(self.last["standing"]))
        except (KeyError, TypeError, ValueError, AttributeError):
            return None
        if any(Path(d.path).name != d.path or not d.path.endswith(".apkg") for d in decks):
            return None
        return BuildResult(decks, warnings, standing)

    def watched(
        self,
        sources: Sequence[SourceDigest],
        inputs: tuple[Path, bytes | None, Path, bytes | None],
        result: BuildResult,
    ) -> Watched | None:
        """What a build with nothing to do checks before it replays `result`, the last
        result (`last_result`): the banks by their statuses where they vouch, else their
        digests; the lock and project file (`inputs`: each path with the bytes the build
        took, None for none) by their digests; the packages by their statuses now, as
        the folder's lock still holds; the images and the note type's sources. None when
        a package cannot be seen."""
        out_dir = self.path.parent
        files: list[WatchedFile] = []
        for source in sources:
            known = self.banks.get(str(source.path))
            vouched = known is not None and known[1] == source.digest
            status = tuple(known[0][:4]) if known is not None and vouched else None
            files.append((str(source.path), status, source.digest))  # type: ignore[arg-type]
        lock_path, lock_bytes, project_path, project_bytes = inputs
        for path, data in ((lock_path, lock_bytes), (project_path, project_bytes)):
            digest = hashlib.sha256(data).hexdigest() if data is not None else None
            files.append((str(path), None, digest))
        try:
            for deck in result.decks:
                package = out_dir / deck.path
                files.append((str(package), status_of(os.stat(package)), None))
        except OSError:
            return None
        media = str(self.last.get("media", ""))
        for image in self.last.get("images") or ():  # type: ignore[attr-defined]
            path, digest, *status = image
            vouching = None if status[2] is None else tuple(status)
            files.append((os.path.join(media, path), vouching, digest))
        taken = time.time_ns()
        for path in notetype.source_paths():
            info = os.stat(path)
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            files.append((str(path), status_of(info) if settled(info, taken) else None, digest))
        banks = tuple(sorted(str(source.path) for source in sources))
        return Watched(banks, tuple(files), result)

    def to_bytes(self) -> bytes:
        return signed_record(
            {"packages": self.packages, "last": self.last, "banks": record_of(self.banks)}
        )


class Recorded(Sequence[Diagnostic]):
    """Warnings as the cache records them (`recorded`): their number, and their rows as
    JSON text, parsed and made into diagnostics only when read. A build with nothing to
    do reports only how many there are: thousands on a bank half translated, whose rows
    were a twentieth of that build's time to parse and check."""

    def __init__(self, recorded: object) -> None:
        if not (
            type(recorded) is list
            and len(recorded) == 2
            and type(recorded[0]) is int
            and recorded[0] >= 0
            and type(recorded[1]) is str
        ):
            raise ValueError("not warnings as the cache records them")
        self._count: int = recorded[0]
        self._text: str = recorded[1]
        self._parsed: list[list[object]] | None = None

    def _rows(self) -> list[list[object]]:
        if self._parsed is None:
            rows = parse_json(self._text)
            if not (
                isinstance(rows, list)
                and len(rows) == self._count
                and all(type(row) is list and len(row) == 4 and type(row[1]) is int for row in rows)
            ):
                raise ValueError("not warnings as the cache records them")
            self._parsed = rows
        return self._parsed

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return tuple(self)[index]
        return _diagnostic(self._rows()[index])

    def __iter__(self) -> Iterator[Diagnostic]:
        return map(_diagnostic, self._rows())


def recorded(diagnostics: Sequence[Diagnostic]) -> list[object]:
    """Warnings as the cache records them, for `Recorded` to read."""
    rows = [[d.path, d.line, d.severity, d.message] for d in diagnostics]
    return [len(rows), json.dumps(rows, ensure_ascii=False, separators=(",", ":"))]


def _diagnostic(row: list[object]) -> Diagnostic:
    path, line, _, message = row
    return Diagnostic(str(path), line, "warning", str(message))  # type: ignore[arg-type]


def inputs_fingerprint(
    sources: Sequence[SourceDigest],
    lock_bytes: bytes | None,
    banks_dir: Path,
    media_given: Path | None,
    settings: Settings,
    prune: bool,
    project_bytes: bytes | None = None,
) -> str:
    """A hash of what a build reads, from the bytes read: banks, lock, project file,
    settings, version. The images the banks name are checked separately
    (`unchanged_images`). The media folder is the one asked for, which with the
    banks folder and the project file's bytes decides the one used."""
    digest = hashlib.sha256()
    digest.update(
        f"{__version__}\0{notetype.sources_digest()}\0{settings.key}\0{banks_dir}\0{media_given}\0"
        f"{prune}\0".encode()
    )
    for source in sorted(sources, key=lambda s: str(s.path)):
        digest.update(f"{source.path}\0{source.digest}\0".encode())
    digest.update(hashlib.sha256(lock_bytes).digest() if lock_bytes is not None else b"no lock")
    digest.update(
        hashlib.sha256(project_bytes).digest() if project_bytes is not None else b"no project"
    )
    return digest.hexdigest()
