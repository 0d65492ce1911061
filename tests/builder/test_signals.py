"""A build stopped by a signal, with its worker processes running: Ctrl-C and SIGTERM
stop it cleanly, and no worker outlives the command, SIGKILL included."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from ankigen.core.parallel import workers
from tests.helpers import item, write_bank

pytestmark = pytest.mark.skipif(workers() < 2, reason="a build uses workers only with 2 CPUs")


def big_banks(banks: Path) -> None:
    for topic in ("a", "b", "c", "d"):
        write_bank(
            banks,
            topic,
            items=[item(f"i{n}", explanation=f"A long explanation {n}. " * 8) for n in range(900)],
        )


# `ankigen build`, its workers started afresh (as for banks over FORK_MAX_BYTES), not forked
SPAWNING = (
    "import sys, ankigen.core.parallel as parallel; parallel.FORK_MAX_BYTES = -1; "
    "from ankigen.cli.entry import main; main()"
)


def build(
    project: Path, mark: str = "", spawn: bool = False, **options: object
) -> subprocess.Popen[bytes]:
    shutil.rmtree(project / "out", ignore_errors=True)
    env = dict(os.environ, SOURCE_DATE_EPOCH="1700000000", PYTHONUNBUFFERED="1")
    env["ANKIGEN_TEST_MARK"] = mark
    return subprocess.Popen(
        [sys.executable, *(["-c", SPAWNING] if spawn else ["-m", "ankigen"]), "build"],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        **options,  # type: ignore[call-overload]
    )


def marked(mark: str) -> list[int]:
    """The processes started with `mark` in their environment (the build and its workers)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:  # not a process, or gone
            continue
        if f"ANKIGEN_TEST_MARK={mark}".encode() in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def wait_for(condition: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


@pytest.mark.parametrize(
    ("sent", "line", "status", "ignored_at_start"),
    [
        (signal.SIGINT, "interrupted", 130, False),
        (signal.SIGTERM, "terminated", 143, False),
        # a shell's background job starts with Ctrl-C ignored: SIGTERM still stops it
        (signal.SIGTERM, "terminated", 143, True),
    ],
    ids=["ctrl-c", "sigterm", "sigterm-background-job"],
)
def test_a_signal_during_a_parallel_build_is_one_line(
    tmp_path: Path, sent: signal.Signals, line: str, status: int, ignored_at_start: bool
) -> None:
    project = tmp_path / "p"
    big_banks(project / "banks")

    def start() -> subprocess.Popen[bytes]:
        def ignore_ctrl_c() -> None:
            signal.signal(signal.SIGINT, signal.SIG_IGN)

        # a terminal's Ctrl-C, and a CI runner's or systemd's SIGTERM, go to the whole
        # process group
        return build(
            project, start_new_session=True, preexec_fn=ignore_ctrl_c if ignored_at_start else None
        )

    # signal at moments spread over a whole build, however fast this machine is
    started = time.monotonic()
    first = start()
    first.communicate(timeout=300)
    assert first.returncode == 0
    duration = time.monotonic() - started
    # the moments are a spread, not a race: every outcome is checked, and a build that
    # finished first (a busy machine's first build was slower) is signalled again
    # earlier, until three were stopped; bounded, so the test cannot loop
    fractions = [0.1, 0.25, 0.4, 0.55, 0.7, 0.85]
    stopped = finished = 0
    for attempt in range(16):
        if stopped >= 3:
            break
        running = start()
        time.sleep(duration * fractions[attempt % len(fractions)] / 2**finished)
        os.killpg(running.pid, sent)
        _, stderr = running.communicate(timeout=300)
        if running.returncode == 0:
            finished += 1  # finished first, or the signal came while workers were starting
            continue
        assert running.returncode == status, stderr
        assert stderr.decode().strip() == line  # after the newline that ends ^C
        assert list(project.rglob(".ankigen-tmp-*")) == []
        stopped += 1
    assert stopped >= 3, f"only {stopped} of 16 builds were stopped; {finished} finished"


@pytest.mark.parametrize("spawn", [False, True], ids=["forked", "spawned"])
def test_no_worker_outlives_a_build_killed_with_sigkill(tmp_path: Path, spawn: bool) -> None:
    """SIGKILL cannot be handled: the workers must see the command gone by themselves.
    A pool's queues are pipes whose both ends each worker holds, so without that the
    spawned ones waited for their next task, or to send a result, for ever."""
    project = tmp_path / "p"
    big_banks(project / "banks")
    mark = uuid.uuid4().hex
    running = build(project, mark, spawn)
    try:
        # once a worker runs beside the command, kill the command alone
        def workers() -> list[str]:
            others = [command_line(pid) for pid in marked(mark) if pid != running.pid]
            return [line for line in others if "resource_tracker" not in line]

        # a spawned worker shows the command's own command line between its fork and its
        # exec: wait until the ones seen are what they will stay (forked ones never exec)
        kinds: list[str] = []

        def settled() -> bool:
            kinds[:] = workers()
            return kinds != [] and (not spawn or all("spawn_main" in line for line in kinds))

        worked = wait_for(settled, 120)
        os.kill(running.pid, signal.SIGKILL)
        # not `communicate`: a worker left running would hold its output open
        running.wait(60)
        assert worked, "the build finished before a worker was seen"
        assert kinds and all(("spawn_main" in kind) == spawn for kind in kinds), kinds
        assert wait_for(lambda: marked(mark) == [], 60), f"workers left: {marked(mark)}"
    finally:
        for pid in marked(mark):
            os.kill(pid, signal.SIGKILL)
        for stream in (running.stdout, running.stderr):
            assert stream is not None
            stream.close()


def command_line(pid: int) -> str:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().decode(errors="replace")
    except OSError:  # gone
        return ""
