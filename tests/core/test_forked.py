"""The one forked worker of an edit's build (`core.forked`): tasks run in the child, in
order; failures, results that cannot travel and a worker that dies come back as errors;
nothing is printed twice and no process is left behind."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path

import pytest

from ankigen.core.forked import ForkedWorker, WorkerDied, after_result
from tests.helpers import run_probe, until

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="forks only where it can")


def _started() -> None:
    os.environ["ANKIGEN_TEST_WORKER"] = "started"


def where(tag: str) -> tuple[str, int, str]:
    return tag, os.getpid(), os.environ.get("ANKIGEN_TEST_WORKER", "")


def fail(message: str) -> None:
    raise ValueError(message)


def unpicklable(_: object) -> object:
    return lambda: None


def die(status: int) -> None:
    os._exit(status)


def gone(pid: int) -> bool:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True  # reaped: not this process's child any longer
    return False


@pytest.fixture
def worker() -> Iterator[ForkedWorker]:
    made = ForkedWorker(_started, where, "first")
    yield made
    made.shutdown(wait=True, cancel_futures=True)


def test_tasks_run_in_the_child_in_order(worker: ForkedWorker) -> None:
    futures = [worker.first_result, *(worker.submit(where, f"task {n}") for n in range(5))]
    results = [future.result(timeout=60) for future in futures]
    assert [tag for tag, _, _ in results] == ["first", *(f"task {n}" for n in range(5))]
    assert {pid for _, pid, _ in results} == {worker.pid} != {os.getpid()}
    assert {started for _, _, started in results} == {"started"}  # its initializer ran
    assert "ANKIGEN_TEST_WORKER" not in os.environ


def test_a_first_task_larger_than_a_pipe_holds_is_sent_once_forked() -> None:
    worker = ForkedWorker(_started, where, "x" * 100_000)
    try:
        assert worker.first_result.result(timeout=60)[0] == "x" * 100_000
    finally:
        worker.shutdown()


def test_a_failure_is_raised_by_its_future_and_the_worker_goes_on(worker: ForkedWorker) -> None:
    failed = worker.submit(fail, "no good")
    with pytest.raises(ValueError, match="no good"):
        failed.result(timeout=60)
    with pytest.raises(RuntimeError, match=r"pickle|Pickl"):
        worker.submit(unpicklable, None).result(timeout=60)
    assert worker.submit(where, "after").result(timeout=60)[0] == "after"


def test_a_worker_that_dies_fails_what_it_was_given(worker: ForkedWorker) -> None:
    dying = worker.submit(die, 3)
    after = worker.submit(where, "never")
    for future in (dying, after):
        with pytest.raises(WorkerDied):
            future.result(timeout=60)
    worker.shutdown(wait=True)
    assert gone(worker.pid)


def test_shutdown_waits_for_the_results_then_reaps_the_worker(worker: ForkedWorker) -> None:
    future = worker.submit(where, "last")
    worker.shutdown(wait=True)
    assert future.result(timeout=0)[0] == "last"
    assert gone(worker.pid)
    with pytest.raises(RuntimeError, match="after shutdown"):
        worker.submit(where, "late")


def test_what_this_process_has_not_printed_yet_is_printed_once() -> None:
    probe = (
        "import sys\n"
        "from ankigen.core.forked import ForkedWorker\n"
        "print('before the fork')\n"  # held in the buffer of a pipe
        "worker = ForkedWorker(lambda: None, len, 'abc')\n"
        "print(worker.first_result.result(timeout=60))\n"
        "worker.shutdown()\n"
    )
    done = run_probe(probe)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "before the fork\n3\n"


_signal: list[int] = []
"""The read end of a pipe the test writes to, inherited by the forked worker."""


def _wait_for_signal() -> None:
    os.environ["ANKIGEN_TEST_AFTER"] = os.read(_signal[0], 16).decode()


def later(tag: str) -> tuple[str, bool]:
    return tag, after_result(_wait_for_signal)


def after_value() -> str:
    return os.environ.get("ANKIGEN_TEST_AFTER", "")


def test_work_after_a_result_runs_once_it_has_left_and_before_the_next_task() -> None:
    assert after_result(_wait_for_signal) is False  # not in a worker: nothing is done
    read_end, write_end = os.pipe()
    _signal[:] = [read_end]
    worker = ForkedWorker(lambda: None, later, "first")
    try:
        # the work waits for this process's word: the result came before it was done
        assert worker.first_result.result(timeout=60) == ("first", True)
        os.write(write_end, b"go")
        assert worker.submit(after_value).result(timeout=60) == "go"
    finally:
        worker.shutdown(wait=True, cancel_futures=True)
        os.close(read_end)
        os.close(write_end)
        _signal.clear()


def released_by(gate: int) -> str:
    os.read(gate, 1)
    return "first"


def large(size: int) -> bytes:
    return b"r" * size


def writing_to_a_pipe(thread_id: int) -> bool:
    """Whether the thread is blocked writing to a full pipe, as the kernel says."""
    return "pipe_write" in Path(f"/proc/self/task/{thread_id}/wchan").read_text()


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads a thread's state in /proc")
def test_a_large_task_sent_while_a_large_result_comes_back_does_not_deadlock() -> None:
    """A task larger than the pipe holds is written while the worker is still busy; the
    worker then finishes one task and writes a result larger than the pipe holds. The
    result must be read while the task is still being written: a build whose bank cache
    held no usable entry hung for ever there (the results' reader waited for the lock
    the task's sender held, the sender for the worker, the worker for the reader)."""
    gate_out, gate_in = os.pipe()
    worker = ForkedWorker(_started, released_by, gate_out)
    try:
        second = worker.submit(large, 1 << 20)
        sender: list[int] = []
        third: list[Future[int]] = []

        def send() -> None:
            sender.append(threading.get_native_id())
            third.append(worker.submit(len, b"t" * (4 << 20)))

        threading.Thread(target=send, daemon=True).start()
        until(lambda: sender and writing_to_a_pipe(sender[0]), "the large task is being written")
        os.write(gate_in, b"go")
        assert worker.first_result.result(timeout=30) == "first"
        assert second.result(timeout=30) == b"r" * (1 << 20)
        until(lambda: third, "the large task is sent", seconds=30)
        assert third[0].result(timeout=30) == 4 << 20
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(worker.pid, signal.SIGKILL)  # a deadlocked worker is not left behind
        worker.shutdown(wait=False, cancel_futures=True)
        os.close(gate_in)
        os.close(gate_out)
