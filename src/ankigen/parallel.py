"""Spreading independent per-bank and per-deck work over the machine's cores."""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait
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


class Pool:
    """Worker processes, started on the first task: a build that turns out to need no
    worker (an edit to one small bank) neither loads multiprocessing nor starts its
    helper process."""

    def __init__(self, max_workers: int) -> None:
        self.max_workers = max_workers
        self.pool: Executor | None = None

    def submit(self, fn: Callable[[T], R], arg: T) -> Future[R]:
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
        return self.pool.submit(fn, arg)

    def close(self) -> None:
        """No more work: the workers exit while this process goes on."""
        if self.pool is not None:
            self.pool.shutdown(wait=False)

    def shutdown(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)


@contextlib.contextmanager
def worker_pool(total_bytes: int, jobs: int) -> Iterator[Pool | None]:
    """Processes for a build big enough to gain from them, else None (run in this process)."""
    if jobs < 2 or total_bytes < MIN_PARALLEL_BYTES or workers() < 2:
        yield None
        return
    # this process works too (see `parallel_map`): one process fewer to start and feed
    pool = Pool(min(workers(), jobs) - 1)
    try:
        yield pool
    finally:
        # on Ctrl-C too: queued work is dropped, running work finishes and cleans up
        pool.shutdown()


def parallel_map(
    func: Callable[[T], R],
    items: Sequence[T],
    pool: Pool | None,
    size: Callable[[T], int] | None = None,
) -> Iterator[R]:
    """`func(x) for x in items`, in the pool's processes and this one if there is a pool;
    in order. With `size`, the largest items are started first: the last to finish is
    then a small one, and no process waits long for another at the end."""
    if pool is None or len(items) < 2:
        return map(func, items)
    order = range(len(items))
    handout = _Handout(sorted(order, key=lambda i: -size(items[i])) if size else list(order))
    with _interrupts_ignored():
        # the first tasks start the worker processes, which start with SIGINT ignored
        running = {pool.submit(func, items[index]): index for index in handout.take_some(pool)}
    return _shared(func, items, pool, handout, running)


class _Handout:
    """The numbers of the items, in the order given, to whichever process asks next."""

    def __init__(self, order: list[int]) -> None:
        self.lock = threading.Lock()
        self.order = order
        self.next = 0
        self.count = len(order)

    def take(self) -> int | None:
        with self.lock:
            if self.next >= self.count:
                return None
            self.next += 1
            return self.order[self.next - 1]

    def take_some(self, pool: Pool) -> list[int]:
        """One for each worker."""
        return [i for i in (self.take() for _ in range(pool.max_workers)) if i is not None]

    def stop(self) -> None:
        with self.lock:
            self.next = self.count


def _shared(
    func: Callable[[T], R],
    items: Sequence[T],
    pool: Pool,
    handout: _Handout,
    running: dict[Future[R], int],
) -> Iterator[R]:
    """Each process takes the next item when it is free: this one between its own items,
    a worker as soon as it returns one (a thread here sends it). A worker is never sent
    an item ahead, to wait behind the one it is working on: once sent, this process
    could no longer take it, and would sit idle at the end while the worker did two."""
    done: dict[int, Future[R]] = {}
    failures: list[BaseException] = []

    def feed() -> None:
        try:
            while running:
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in finished:
                    done[running.pop(future)] = future
                    if future.cancelled() or future.exception() is not None:
                        handout.stop()  # the map fails: no more work for it
                    index = handout.take()
                    if index is not None:
                        running[pool.submit(func, items[index])] = index
        except BaseException as exc:  # a broken or shut down pool: raised in the caller
            handout.stop()
            failures.append(exc)

    feeder = threading.Thread(target=feed, name="ankigen-feeder", daemon=True)
    feeder.start()
    here: dict[int, R] = {}
    try:
        while (index := handout.take()) is not None:
            here[index] = func(items[index])
        feeder.join()
        if failures:
            raise failures[0]
        for index in range(len(items)):
            yield here.pop(index) if index in here else done[index].result()
    finally:
        handout.stop()
        for future in [*running, *done.values()]:
            future.cancel()
