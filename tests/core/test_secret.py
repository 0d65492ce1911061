"""The key that authenticates what ankigen caches in OUT (`core.secret`): kept outside
every output folder, private to the user, and the same in a build's worker processes."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

KEY_OF_A_PROCESS_AND_ITS_CHILD = """
import subprocess, sys
from ankigen.core.secret import cache_key
mine = cache_key().hex()
child = subprocess.run(
    [sys.executable, "-c", "from ankigen.core.secret import cache_key; print(cache_key().hex())"],
    capture_output=True, text=True, check=True,
).stdout.strip()
print(mine, child)
"""


def keys(cache_home: Path) -> tuple[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "ANKIGEN_PROCESS_CACHE_KEY"}
    env["XDG_CACHE_HOME"] = str(cache_home)
    done = subprocess.run(
        [sys.executable, "-c", KEY_OF_A_PROCESS_AND_ITS_CHILD],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    mine, child = done.stdout.split()
    return mine, child


def test_the_key_is_kept_private_outside_out_and_reused(tmp_path: Path) -> None:
    first = keys(tmp_path / "cache")
    key_file = tmp_path / "cache" / "ankigen" / "cache-key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert key_file.read_bytes().hex() == first[0] == first[1]
    assert keys(tmp_path / "cache") == first  # the next command's is the same


def test_without_a_place_to_keep_it_a_process_hands_its_own_to_its_workers(
    tmp_path: Path,
) -> None:
    not_a_folder = tmp_path / "a-file"
    not_a_folder.write_text("")
    mine, child = keys(not_a_folder / "cache")
    assert mine == child  # a worker's entries are its process's
    assert keys(not_a_folder / "cache")[0] != mine  # and last only as long as it does


def test_a_key_left_short_is_made_again_once(tmp_path: Path) -> None:
    """A full disk, or a kill, while the key was written left it empty or short: it
    authenticates nothing, and every later build found its caches unusable, silently.
    It is replaced by a whole key, in one step, which the next command keeps."""
    key_file = tmp_path / "cache" / "ankigen" / "cache-key"
    key_file.parent.mkdir(parents=True)
    for short in (b"", b"\x01" * 7):
        key_file.write_bytes(short)
        first = keys(tmp_path / "cache")
        assert key_file.read_bytes().hex() == first[0] == first[1]
        assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
        assert keys(tmp_path / "cache") == first
        assert [p.name for p in key_file.parent.iterdir()] == ["cache-key"]  # no part left


def test_a_relative_cache_home_is_ignored_as_the_xdg_spec_says(tmp_path: Path) -> None:
    """XDG_CACHE_HOME=relcache made a key in whatever folder a command ran in."""
    env = {k: v for k, v in os.environ.items() if k != "ANKIGEN_PROCESS_CACHE_KEY"}
    env |= {"XDG_CACHE_HOME": "relcache", "HOME": str(tmp_path / "home")}
    probe = "from ankigen.core.secret import key_path; print(key_path())"
    done = subprocess.run(
        [sys.executable, "-c", probe], env=env, cwd=tmp_path, capture_output=True, text=True
    )
    assert done.stdout.strip() == str(tmp_path / "home" / ".cache" / "ankigen" / "cache-key")
