"""Faults: a build killed at any moment, or run twice at once, never leaves a broken package."""

from __future__ import annotations

import hashlib
import os
import random
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from ankigen.checks.incremental import LONE_BANK_FOR_A_WORKER
from ankigen.core.parallel import MIN_PARALLEL_BYTES, workers
from tests.helpers import item, write_bank

TOPICS = [f"t{n}" for n in range(4)]
WAIT = 300  # seconds before a build is taken to hang: subprocess.TimeoutExpired says so


def big_banks(banks: Path, version: str) -> None:
    for topic in TOPICS:
        write_bank(
            banks,
            topic,
            items=[item(f"i{n}", explanation=f"{version} explanation {n}.") for n in range(600)],
        )


def run_build(cwd: Path, extra: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    env = dict(os.environ, SOURCE_DATE_EPOCH="1700000000", **(extra or {}))
    return subprocess.Popen(
        [sys.executable, "-m", "ankigen", "build"],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def digests(out: Path) -> dict[str, str]:
    found = {}
    for package in sorted(out.glob("*.apkg")):
        with zipfile.ZipFile(package) as archive:
            assert archive.testzip() is None, package
        found[package.name] = hashlib.sha256(package.read_bytes()).hexdigest()
    return found


def test_sigkill_at_any_moment_leaves_old_or_new_packages(tmp_path: Path) -> None:
    project = tmp_path / "p"
    banks = project / "banks"
    big_banks(banks, "old")
    started = time.monotonic()
    assert run_build(project).wait(timeout=WAIT) == 0
    duration = time.monotonic() - started
    old = digests(project / "out")
    assert len(old) == len(TOPICS)

    big_banks(banks, "new")
    rng = random.Random(1)
    seen = []
    for _ in range(8):
        build = run_build(project)
        time.sleep(rng.uniform(0.05, duration))
        build.send_signal(signal.SIGKILL)
        build.wait(timeout=WAIT)
        seen.append(digests(project / "out"))

    assert run_build(project).wait(timeout=WAIT) == 0
    new = digests(project / "out")
    assert set(new) == set(old) and all(new[k] != old[k] for k in new)
    for snapshot in seen:
        assert set(snapshot) == set(old)
        assert all(digest in (old[name], new[name]) for name, digest in snapshot.items())
    assert not list((project / "out").glob(".ankigen-tmp-*"))


def test_concurrent_builds_into_one_folder(tmp_path: Path) -> None:
    reference = tmp_path / "reference"
    big_banks(reference / "banks", "v")
    assert run_build(reference).wait(timeout=WAIT) == 0
    expected = digests(reference / "out")

    project = tmp_path / "p"
    big_banks(project / "banks", "v")
    builds = [run_build(project) for _ in range(3)]
    assert [b.wait(timeout=WAIT) for b in builds] == [0, 0, 0]
    assert digests(project / "out") == expected
    assert not list((project / "out").glob(".ankigen-tmp-*"))


def test_without_a_place_to_keep_the_cache_key_builds_still_work(tmp_path: Path) -> None:
    """A read-only home: the key is this process's own, handed to its workers, and the
    next build, with another key, finds the entries not its own and reads the banks."""
    project = tmp_path / "p"
    big_banks(project / "banks", "v")
    not_a_folder = tmp_path / "a-file"
    not_a_folder.write_text("")
    env = {"XDG_CACHE_HOME": str(not_a_folder / "cache")}
    first = run_build(project, env)
    assert first.wait(timeout=WAIT) == 0
    packages = digests(project / "out")
    assert len(packages) == len(TOPICS)
    entries = sorted((project / "out" / ".ankigen-banks").glob("*.json"))
    assert entries  # made, by the workers too
    for topic in TOPICS:
        write_bank(
            project / "banks",
            topic,
            items=[item(f"i{n}", explanation=f"v explanation {n}.") for n in range(600)],
        )
    assert run_build(project, env).wait(timeout=WAIT) == 0
    assert digests(project / "out") == packages
    assert not (not_a_folder.parent / "cache").exists()


def test_an_edit_finishes_when_no_bank_cache_entry_can_be_used(tmp_path: Path) -> None:
    """Entries a build cannot vouch for (emptied by a power cut, or signed with another
    key where the home is read-only) are checked again, after the edited bank, in the
    one worker forked for it. Each bank and each result is larger than a pipe holds: the
    build hung there for ever, its threads waiting for each other (`core.forked`)."""
    if workers() < 2:
        pytest.skip("a build starts workers only with two cores or more")
    project = tmp_path / "p"
    long = " ".join(["a longer explanation"] * 8)

    def bank(topic: str, version: str = "v") -> None:
        write_bank(
            project / "banks",
            topic,
            items=[item(f"i{n}", explanation=f"{version} {long} {n}.") for n in range(1200)],
        )

    for topic in TOPICS:
        bank(topic)
    sizes = [path.stat().st_size for path in (project / "banks").rglob("*.yaml")]
    # the build's own thresholds: a worker of its own for the edited bank, workers at all
    assert min(sizes) >= LONE_BANK_FOR_A_WORKER and sum(sizes) >= MIN_PARALLEL_BYTES
    assert run_build(project).wait(timeout=WAIT) == 0
    for entry in (project / "out" / ".ankigen-banks").glob("*.json"):
        entry.write_bytes(b"")
    bank(TOPICS[0], "edited")
    build = run_build(project)
    try:
        assert build.wait(timeout=120) == 0
    finally:
        build.kill()  # with its workers: a hung build is not left behind
    with zipfile.ZipFile(project / "out" / f"{TOPICS[0]}.en.apkg") as package:
        assert b"edited a longer explanation" in package.read("collection.anki2")


def test_a_worker_killed_mid_build_is_said_plainly_and_changes_nothing(tmp_path: Path) -> None:
    """The worker forked for an edit, killed (by the out-of-memory killer, say) while it
    checks the banks: the build stops with a plain message, not as a bug of ankigen, and
    leaves the packages and the lock as they were."""
    if workers() < 2:
        pytest.skip("a build starts workers only with two cores or more")
    project = tmp_path / "p"
    long = " ".join(["a longer explanation"] * 8)
    for topic in TOPICS:
        items = [item(f"i{n}", explanation=f"{long} {n}.") for n in range(1200)]
        write_bank(project / "banks", topic, items=items)
    assert run_build(project).wait(timeout=WAIT) == 0
    for entry in (project / "out" / ".ankigen-banks").glob("*.json"):
        entry.write_bytes(b"")  # the other banks are checked in the worker too: it lives longer
    edited = [item(f"i{n}", explanation=f"edited {long} {n}.") for n in range(1200)]
    write_bank(project / "banks", TOPICS[0], items=edited)
    before = digests(project / "out"), (project / "banks" / "ankigen.lock").read_bytes()
    build = subprocess.Popen(
        [sys.executable, "-m", "ankigen", "build"],
        cwd=project,
        env=dict(os.environ, SOURCE_DATE_EPOCH="1700000000"),
        stderr=subprocess.PIPE,
        text=True,
    )
    children = Path(f"/proc/{build.pid}/task/{build.pid}/children")
    deadline = time.monotonic() + WAIT
    while not (worker := children.read_text().split()) and build.poll() is None:
        assert time.monotonic() < deadline, "no worker was started"
        time.sleep(0.001)
    assert worker, "the build ended before its worker was seen"
    os.kill(int(worker[0]), signal.SIGKILL)
    _, said = build.communicate(timeout=WAIT)
    assert build.returncode == 1, said
    assert said.strip().splitlines()[-1] == (
        "error: a worker process ended before it gave its results (killed, or out of memory?)"
    )
    assert (digests(project / "out"), (project / "banks" / "ankigen.lock").read_bytes()) == before
