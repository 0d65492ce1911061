"""The build's output for fixed inputs, as a manifest of hashes: what a restructuring of
the code must leave byte for byte as it was (`tests/test_reproducible.py`).

Run `python -m tests.reproducible` to write `tests/data/build-manifest.json` afresh,
only when a change is meant to change the packages (and say so in CHANGES.md)."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

from ankigen.checks.verdicts import NAME as VERDICTS_NAME

REPO = Path(__file__).resolve().parent.parent
MANIFEST = REPO / "tests" / "data" / "build-manifest.json"
EPOCH = "1700000000"
# the statuses (inode, size, time) of the files that one build records for the next
# (the build cache, the replay's record): another copy of the same banks has others,
# the replay names the working folder, and the MAC is each user's own
UNSTABLE = {".ankigen-cache.json", ".ankigen-replay.json"}
# what the bytes of a package depend on, besides ankigen
LIBRARIES = ("genanki", "Pygments", "deflate", "PyYAML", "nh3", "Pillow", "Markdown")


def environment() -> dict[str, str]:
    found = {name: importlib.metadata.version(name) for name in LIBRARIES}
    found["sqlite"] = sqlite3.sqlite_version
    return found


def build(project: Path) -> dict[str, str]:
    """Hashes of the lock and of every file the build writes into OUT."""
    env = dict(os.environ, SOURCE_DATE_EPOCH=EPOCH)
    done = subprocess.run(
        [sys.executable, "-m", "ankigen", "build"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    files = [project / "banks" / "ankigen.lock"]
    files += [p for p in sorted((project / "out").rglob("*")) if p.is_file()]
    return {
        path.relative_to(project).as_posix(): hashlib.sha256(_unkeyed(path)).hexdigest()
        for path in files
        if path.name not in UNSTABLE
    }


def _unkeyed(path: Path) -> bytes:
    """The file's bytes, but the MACs of the bank cache, made with each user's own key
    (`core.secret`): everything they authenticate is still compared."""
    data = path.read_bytes()
    if path.parent.name != ".ankigen-banks":
        return data
    if path.name == "across.json":
        memo = json.loads(data)
        memo.pop("mac")
        return json.dumps(memo, sort_keys=True).encode()
    head, _, payload = data.partition(b"\n")
    header = json.loads(head)
    header.pop("mac" if path.name == VERDICTS_NAME else "checksum")
    return json.dumps(header, sort_keys=True).encode() + b"\n" + payload


def shipped(work: Path) -> dict[str, str]:
    project = work / "shipped"
    shutil.copytree(REPO / "banks", project / "banks")
    shutil.copytree(REPO / "media", project / "media")
    return build(project)


def benchmark(work: Path) -> dict[str, str]:
    """The benchmark's banks (10 languages), at a small size: every path of its build."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import bench  # type: ignore[import-not-found]
    finally:
        sys.path.pop(0)
    project = work / "bench"
    bench.write_banks(project / "banks", 60)
    return build(project)


def manifest(work: Path) -> dict[str, object]:
    return {
        "environment": environment(),
        "shipped": shipped(work),
        "benchmark": benchmark(work),
    }


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        made = manifest(Path(folder))
    MANIFEST.write_text(json.dumps(made, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {MANIFEST}")
