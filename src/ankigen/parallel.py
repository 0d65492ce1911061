"""Spreading independent per-bank and per-deck work over the machine's cores."""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, Future
from typing import TypeVar

from ankigen.entry import GC_THRESHOLDS

T = TypeVar("T")
R = TypeVar("R")

# Below this much input, starting processes costs more than it saves.
MIN_PARALLEL_BYTES = 1 << 20


def workers() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _start_worker() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    gc.set_threshold(*GC_THRESHOLDS)  # a worker is ankigen's own process, like the command


@contextlib.contextmanager
def _interrupts_ignored() -> Iterator[None]:
    """While workers start: a process started with SIGINT ignored keeps ignoring it, so
    Ctrl-C reaches only this process, which stops them cleanly and says one line."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _start_quiet_resource_tracker() -> None:
    """multiprocessing's resource tracker unlinks the semaphores of a pool whose process
    left at once (Ctrl-C) and reports each on standard error: that is its job, not news
    for the user, so it is started with standard error going nowhere."""
    from multiprocessing import resource_tracker

    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        resource_tracker.ensure_running()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


class _Pool(Executor):
    """A process pool made on its first task: a build that turns out to need no worker
    (an edit to one small bank) neither loads multiprocessing nor starts its helper
    process."""

    def __init__(self, max_workers: int) -> None:
        self.max_workers = max_workers
        self.pool: Executor | None = None

    def submit(self, fn: Callable[..., R], /, *args: object, **kwargs: object) -> Future[R]:
        if self.pool is None:
            # imported here: a build too small for workers never loads multiprocessing
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            # spawn, not fork: a forked worker would inherit the output folder's lock,
            # and outlive a build killed with SIGKILL while still holding it
            context = multiprocessing.get_context("spawn")
            _start_quiet_resource_tracker()
            self.pool = ProcessPoolExecutor(
                max_workers=self.max_workers, mp_context=context, initializer=_start_worker
            )
        return self.pool.submit(fn, *args, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=wait, cancel_futures=cancel_futures)


@contextlib.contextmanager
def worker_pool(total_bytes: int, jobs: int) -> Iterator[Executor | None]:
    """Processes for a build big enough to gain from them, else None (run in this process)."""
    if jobs < 2 or total_bytes < MIN_PARALLEL_BYTES or workers() < 2:
        yield None
        return
    # this process works too (see `_results`): one process fewer to start and feed
    pool = _Pool(min(workers(), jobs) - 1)
    try:
        yield pool
    finally:
        # on Ctrl-C too: queued work is dropped, running work finishes and cleans up
        pool.shutdown(wait=True, cancel_futures=True)


def parallel_map(func: Callable[[T], R], items: Sequence[T], pool: Executor | None) -> Iterator[R]:
    """`func(x) for x in items`, in the pool's processes and this one if there is a pool;
    in order."""
    if pool is None or len(items) < 2:
        return map(func, items)
    with _interrupts_ignored():
        # every submit may start a worker process: they start with SIGINT ignored
        futures = [pool.submit(func, item) for item in items]
    return _results(func, items, futures)


def _results(func: Callable[[T], R], items: Sequence[T], futures: list[Future[R]]) -> Iterator[R]:
    """The workers take items from the front; meanwhile this process, which would
    otherwise only wait, takes those no worker has started from the back."""
    here: dict[int, R] = {}
    try:
        for index in range(len(items) - 1, -1, -1):
            if not futures[index].cancel():
                break  # a worker has it, and all before it
            here[index] = func(items[index])
        for index, future in enumerate(futures):
            yield here.pop(index) if index in here else future.result()
    finally:
        for future in futures:
            future.cancel()
