"""A secret of this user's, kept outside every output folder, that authenticates what
ankigen caches there.

An output folder may come from elsewhere (a CI cache restored from another job, a shared
folder), and whoever writes it can recompute a plain checksum. A cache entry is used
only if its MAC was made with this key: one made elsewhere is simply not used. The key
is `$XDG_CACHE_HOME/ankigen/cache-key` (`~/.cache/...` by default), 32 random bytes,
mode 0600, made at first use. Where it cannot be kept, the process uses one of its own,
which its worker processes inherit: its caches then last only as long as it does.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
from pathlib import Path

from ankigen.core.jsondata import parse_json
from ankigen.core.reading import read_regular
from ankigen.core.version import __version__

KEY_BYTES = 32


def key_path() -> Path:
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):  # unset, or relative, which the XDG spec says to ignore
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ankigen" / "cache-key"


_INHERITED = "ANKIGEN_PROCESS_CACHE_KEY"
"""Where a key that could not be kept is handed to worker processes, which inherit the
environment: the entries they make must be this process's."""


@functools.cache
def cache_key() -> bytes:
    inherited = os.environ.get(_INHERITED, "")
    if len(inherited) == 2 * KEY_BYTES:
        with contextlib.suppress(ValueError):
            return bytes.fromhex(inherited)
    key = _kept_key()
    if key is None:
        key = os.urandom(KEY_BYTES)
        os.environ[_INHERITED] = key.hex()
    return key


def _kept_key() -> bytes | None:
    """The key kept in the user's cache folder, made if there is none; None where none
    can be kept (a read-only home, a full disk)."""
    path = key_path()
    try:
        key: bytes | None = read_regular(path)
    except FileNotFoundError:
        key = None
    except OSError:
        return None
    if key is not None and len(key) == KEY_BYTES:
        return key
    # none yet, or one a full disk or a kill left short (it authenticates nothing): a
    # whole key takes its place in one step, never a part of one (a short key stayed,
    # and every later build found its caches unusable without a word)
    made = path.with_name(f".{path.name}-{os.getpid()}-{os.urandom(6).hex()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(made, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(os.urandom(KEY_BYTES))
            if key is not None:
                os.replace(made, path)
            else:
                # of two processes making it at once, one key wins and both read it
                with contextlib.suppress(FileExistsError):
                    os.link(made, path)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(made)
        kept = read_regular(path)
    except OSError:
        return None
    return kept if len(kept) == KEY_BYTES else None


def mac(*parts: bytes) -> str:
    """The MAC of the parts with this user's key, in hex: BLAKE2b in its keyed mode, a MAC
    by design, which spares a build with nothing to do importing hmac and secrets."""
    digest = hashlib.blake2b(key=cache_key(), digest_size=32)
    for part in parts:
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    return digest.hexdigest()


def json_mac(value: object) -> str:
    """The MAC of a JSON value as its text with sorted keys, which reading it back and
    dumping it again gives."""
    return mac(json.dumps(value, sort_keys=True, ensure_ascii=False).encode())


def signed_record(record: dict[str, object]) -> bytes:
    """The cache file's bytes for this record, with its MAC made with this user's key."""
    body = json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()
    header = json.dumps({"mac": mac(body), "version": __version__}, sort_keys=True).encode()
    return header + b"\n" + body


def verified_record(data: bytes) -> dict[str, object]:
    """The record in a cache file's bytes; empty unless this version wrote it with this
    user's key (above): an OUT from elsewhere could otherwise pass packages of
    its own for up to date. Anything of the wrong shape is empty too."""
    header, _, body = data.partition(b"\n")
    try:
        fields = parse_json(header.decode())
        if not isinstance(fields, dict) or fields.get("version") != __version__:
            return {}
        if fields.get("mac") != mac(body):
            return {}
        record = parse_json(body.decode())
    except (ValueError, UnicodeDecodeError):
        return {}
    return record if isinstance(record, dict) else {}
