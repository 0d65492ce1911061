"""How close a package is to what AnkiWeb accepts.

Decks are shared through AnkiWeb by syncing the collection that holds them,
so AnkiWeb's sync limits are the ones that count (Anki's source,
rslib/src/sync/request/mod.rs and rslib/src/sync/media/mod.rs):

- a sync payload of at most 100 MiB compressed, and a collection of at most
  300 MiB uncompressed (3 x the payload limit), checked before uploading;
- at most 100 MiB for any one media file; larger files are not synced.

A package holds one deck, so it is only part of a learner's collection: the
build warns from `WARN_AT` of a limit on.
"""

from __future__ import annotations

import io
import zipfile

from ankigen.bank.model import Bank
from ankigen.core.errors import Diagnostic

MIB = 1024 * 1024
MAX_COMPRESSED = 100 * MIB
MAX_COLLECTION = 300 * MIB
MAX_MEDIA_FILE = 100 * MIB
WARN_AT = 0.8
COLLECTION_NAMES = ("collection.anki21b", "collection.anki21", "collection.anki2")


def _mib(size: int) -> str:
    return f"{size / MIB:.1f} MiB"


def check_package(bank: Bank, package: str, data: bytes) -> list[Diagnostic]:
    """Warnings for a package near or over AnkiWeb's limits."""
    found: list[str] = []
    if len(data) >= MAX_COMPRESSED * WARN_AT:
        found.append(
            f"{package} is {_mib(len(data))}; AnkiWeb syncs at most {_mib(MAX_COMPRESSED)} "
            "(compressed) at once"
        )
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for info in archive.infolist():
            if info.filename in COLLECTION_NAMES:
                if info.file_size >= MAX_COLLECTION * WARN_AT:
                    found.append(
                        f"{package}: its collection is {_mib(info.file_size)} uncompressed; "
                        f"AnkiWeb accepts collections up to {_mib(MAX_COLLECTION)}"
                    )
            elif info.file_size >= MAX_MEDIA_FILE * WARN_AT:
                found.append(
                    f"{package}: a media file is {_mib(info.file_size)}; AnkiWeb does not sync "
                    f"media files over {_mib(MAX_MEDIA_FILE)}"
                )
    return [
        Diagnostic(
            bank.path,
            bank.lines.get("items", 1),
            "warning",
            f"{message}: split the bank, or use fewer or smaller images",
        )
        for message in found
    ]
