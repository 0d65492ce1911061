"""One worker process forked from this one and fed through two pipes: the pool of a build
that checks one bank alone (an edit).

A `ProcessPoolExecutor` of one forked worker does the same, but loading multiprocessing
and the executor's process pool took 15 to 20 ms before the worker could start, a
twentieth of an edit at 10 x 1,000 items; and each task and result passed through two
more threads of this process. Here a task is pickled onto one pipe and its result read
from the other by one thread, in order: the worker does one task at a time.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import struct
import sys
import threading
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from ankigen.core.errors import WorkerDied

if TYPE_CHECKING:
    from concurrent.futures import Future

R = TypeVar("R")

_HEADER = struct.Struct("<Q")
_PAGE = 4096
"""What a pipe holds at least (Linux gives a user over their quota pipes of one page)."""


_serving = False
"""Whether this process is a forked worker serving its tasks (`_serve`)."""

_after_result: list[Callable[[], object]] = []


def after_result(work: Callable[[], object]) -> bool:
    """In a forked worker, from its initializer or a task: do `work` once the (first)
    task's result has left, before the next task is read. The main process is then
    taking the result in and preparing what follows from it, and the worker would wait
    for that idle. False anywhere else, and `work` is not done."""
    if not _serving:
        return False
    _after_result.append(work)
    return True


class ForkedWorker:
    """`submit`, `shutdown` and `max_workers` as a pool of one worker has them. Fork only
    where no other thread runs: a child inherits their locks held."""

    max_workers = 1

    def __init__(
        self, initializer: Callable[[], None], first: Callable[..., object], *args: Any
    ) -> None:
        """Fork the worker with its `first` task (`first(*args)`) already sent: it starts
        on it at once, while this process goes on (`first_result`)."""
        tasks_in, tasks_out = os.pipe()
        results_in, results_out = os.pipe()
        self._tasks = open(tasks_out, "wb")  # noqa: SIM115  (closed by `shutdown`)
        message = pickle.dumps((first, args), protocol=pickle.HIGHEST_PROTOCOL)
        # written before the fork only where the pipe surely holds it, with no one reading
        # yet (a pipe holds at least a page; the task is a function and its few arguments)
        early = _HEADER.size + len(message) <= _PAGE
        if early:
            _write_message(self._tasks, message)
        # what this process has yet to print is printed once, not again by the child
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        pid = os.fork()
        if pid == 0:  # the worker: it never returns from here
            status = 1
            try:
                self._tasks.close()
                os.close(results_in)
                _serve(tasks_in, results_out, initializer)
                status = 0
            finally:
                os._exit(status)
        os.close(tasks_in)
        os.close(results_out)
        if not early:
            _write_message(self._tasks, message)
        from concurrent.futures import Future  # while the worker starts on its task

        self.pid = pid
        self._results = open(results_in, "rb")  # noqa: SIM115  (closed by the reader)
        self.first_result: Future[Any] = Future()
        self._pending: deque[Future[Any]] = deque([self.first_result])
        self._lock = threading.Lock()
        """Held while the futures waiting for results change."""
        self._sending = threading.Lock()
        """Held while a task is written, and while the tasks' pipe is closed."""
        self._closed = False
        self._reader = threading.Thread(target=self._read, name="ankigen-results", daemon=True)
        self._reader.start()

    def submit(self, fn: Callable[..., R], *args: Any) -> Future[R]:
        from concurrent.futures import Future

        future: Future[R] = Future()
        message = pickle.dumps((fn, args), protocol=pickle.HIGHEST_PROTOCOL)
        # the tasks leave in the order their futures are queued; a task is written
        # without the lock the reader takes for each result: a task larger than the pipe
        # holds waits for the worker to read it, and the worker may be writing a result
        # larger than the pipe holds first (the three waited for each other for ever)
        with self._sending:
            with self._lock:
                if self._closed:
                    raise RuntimeError("cannot schedule new futures after shutdown")
                self._pending.append(future)  # before its task: its result cannot come first
            try:
                _write_message(self._tasks, message)
            except OSError:  # the worker is gone; the results it gave are still read
                with self._lock:
                    ours = future in self._pending  # else the reader has failed it
                    if ours:
                        self._pending.remove(future)
                if ours and future.set_running_or_notify_cancel():
                    future.set_exception(WorkerDied())
        return future

    def _read(self) -> None:
        try:
            while (message := _read_message(self._results)) is not None:
                failed, value = pickle.loads(message)
                with self._lock:
                    future = self._pending.popleft()
                if future.set_running_or_notify_cancel():
                    if failed:
                        future.set_exception(value)
                    else:
                        future.set_result(value)
        except Exception as exc:  # a result that cannot be read: the worker is of no use
            self._fail(exc)
        finally:
            self._results.close()
            self._fail(WorkerDied())
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self.pid, 0)

    def _fail(self, exc: BaseException) -> None:
        with self._lock:
            pending = list(self._pending)
            self._pending.clear()
        for future in pending:
            if future.set_running_or_notify_cancel():
                future.set_exception(exc)

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        """No more tasks: the worker ends once it has given the results of those sent. With
        `cancel_futures`, the results not in yet are not waited for by anyone."""
        with self._lock:
            closing, self._closed = not self._closed, True
            pending = list(self._pending) if cancel_futures else []
        if closing:
            with self._sending, contextlib.suppress(OSError):
                self._tasks.close()
        for future in pending:
            future.cancel()
        if wait:
            self._reader.join()


def _write_message(stream: Any, message: bytes) -> None:
    stream.write(_HEADER.pack(len(message)) + message)
    stream.flush()


def _read_message(stream: Any) -> bytes | None:
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None  # the other end is closed
    (size,) = _HEADER.unpack(header)
    message: bytes = stream.read(size)
    return message if len(message) == size else None


def _serve(tasks_in: int, results_out: int, initializer: Callable[[], None]) -> None:
    """In the worker: each task, in turn, until this process closes its end."""
    global _serving
    _serving = True
    initializer()
    with open(tasks_in, "rb") as tasks, open(results_out, "wb") as results:
        while (message := _read_message(tasks)) is not None:
            try:
                fn, args = pickle.loads(message)
                outcome: tuple[bool, object] = (False, fn(*args))
            except BaseException as exc:  # its future raises it
                outcome = (True, exc)
            try:
                answer = pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL)
            except Exception as exc:  # a result or an error that cannot travel
                answer = pickle.dumps((True, RuntimeError(f"{type(exc).__name__}: {exc}")))
            _write_message(results, answer)
            while _after_result:
                _after_result.pop(0)()
