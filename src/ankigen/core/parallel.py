"""Spreading independent per-bank and per-deck work over the machine's cores."""

from __future__ import annotations

import contextlib
import functools
import gc
import itertools
import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar, cast

from ankigen.core.forked import ForkedWorker, after_result
from ankigen.core.process import GC_THRESHOLDS, ignore_stops, stops_held

if TYPE_CHECKING:  # concurrent.futures is imported with the first worker (see `Pool`)
    from concurrent.futures import Executor, Future

T = TypeVar("T")
R = TypeVar("R")
S = TypeVar("S")
T_in = TypeVar("T_in", contravariant=True)
R_in = TypeVar("R_in", contravariant=True)

# Below this much input, starting processes costs more than it saves.
MIN_PARALLEL_BYTES = 1 << 20


def workers() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


_worker = False


def in_worker() -> bool:
    """Whether this process is one of a pool's workers."""
    return _worker


def _start_worker() -> None:
    global _worker
    _worker = True
    # the command stops its workers on Ctrl-C or SIGTERM, which reach them too when sent
    # to the whole process group (a terminal, a CI runner, systemd)
    ignore_stops()
    gc.set_threshold(*GC_THRESHOLDS)  # a worker is ankigen's own process, like the command
    # what a worker has before its first task (a forked one: this process's whole heap)
    # is never collected there: the collector would write to every inherited object,
    # copying each page this process shares with it (a forked worker's tasks took half
    # as long again, a cold build 7% more CPU)
    gc.freeze()


def _start_pool_worker() -> None:
    _start_worker()
    _leave_with_parent()


def _leave_with_parent() -> None:
    """A pool's worker ends when the command's process does, however it ends (SIGKILL,
    out of memory): the pool's queues are pipes whose both ends each worker holds, so it
    would otherwise never see the command go, and wait for its next task, or to send a
    result no one reads, for ever."""
    import multiprocessing  # loaded already: this is one of its processes
    from multiprocessing.connection import wait

    parent = multiprocessing.parent_process()
    if parent is None or parent.sentinel is None:
        return

    def watch(sentinel: int) -> None:
        wait([sentinel])
        os._exit(1)

    threading.Thread(target=watch, args=(parent.sentinel,), daemon=True).start()


def _start_forked_worker(prepare: Callable[[], object] | None) -> None:
    _start_worker()
    if prepare is not None:
        after_result(prepare)


def _start_quiet_resource_tracker() -> None:
    """multiprocessing's resource tracker unlinks the semaphores of a pool whose process
    left at once (Ctrl-C) and reports each on standard error: that is its job, not news
    for the user, so it is started with standard error going nowhere."""
    from multiprocessing import resource_tracker

    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        # held again after it, as they were: it ends by letting Ctrl-C and SIGTERM in,
        # and the workers started next would start hearing them (a traceback each)
        with stops_held():
            resource_tracker.ensure_running()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


# Up to this much input a worker is forked from this process, where it can be (Linux,
# no other thread running): it starts in milliseconds with everything imported, where a
# fresh interpreter takes 0.2 s, most of a worker's time in a small build. A larger
# build's workers start afresh: their start-up is paid back, and a forked one would
# share this process's memory (the banks read), which counts twice in its size. A build
# that checks one bank alone (an edit) forks one worker, whatever the size: its start is
# most of the wait, and the banks count twice once only. One: a forked pool starts all
# its workers at once, and most of that build's work is the one bank and its deck.
FORK_MAX_BYTES = 32 << 20


_inherited: dict[int, object] = {}
"""Arguments a forked worker finds in the memory it was forked with (see `Pool.submit`)."""
_tokens = itertools.count()


def _call_inherited(fn: Callable[[T], R], token: int) -> R:
    return fn(cast(T, _inherited.pop(token)))


class Pool:
    """Worker processes, started on the first task: a build that turns out to need no
    worker (an edit to one small bank) loads neither multiprocessing nor
    concurrent.futures (with logging, a hundredth of that edit), nor starts a helper
    process."""

    def __init__(
        self, max_workers: int, fork: bool = False, prepare: Callable[[], object] | None = None
    ) -> None:
        self.max_workers = max_workers
        self.fork = fork
        """Whether the workers may be forked (see FORK_MAX_BYTES)."""
        self.prepare = prepare
        """What a lone forked worker does once its first result has left, while this
        process takes it in: what its next tasks need loaded (`forked.after_result`)."""
        self.started_by = ""
        """How the workers were started, "fork" or "spawn", once they are."""
        self.pool: Executor | ForkedWorker | None = None

    def submit(self, fn: Callable[[T], R], arg: T) -> Future[R]:
        if self.pool is not None:
            return self.pool.submit(fn, arg)
        # forked only without other threads, whose locks a child would inherit held;
        # a forked worker closes its copy of the output folder's lock (see folderlock)
        forking = self.fork and sys.platform == "linux" and threading.active_count() == 1
        self.started_by = "fork" if forking else "spawn"
        if not forking:
            self.pool = _process_pool(self.max_workers, self.started_by)
            return self.pool.submit(fn, arg)
        # every worker of this pool is forked from now on, with this process's memory:
        # the first task's argument is not sent but found there, by its number, kept
        # here until the task is done. A bank edited alone, 6 MB, was sent by a thread
        # that waited for this process to let it run, busy reading the lock meanwhile
        token = next(_tokens)
        _inherited[token] = arg
        if self.max_workers == 1:
            started = functools.partial(_start_forked_worker, self.prepare)
            worker = ForkedWorker(started, _call_inherited, fn, token)
            self.pool, future = worker, worker.first_result
        else:
            self.pool = _process_pool(self.max_workers, self.started_by)
            future = self.pool.submit(_call_inherited, fn, token)
        future.add_done_callback(lambda _: _inherited.pop(token, None))
        return future

    @property
    def started(self) -> bool:
        """Whether the workers were started (by the first task)."""
        return self.pool is not None

    def close(self) -> None:
        """No more work: the workers exit while this process goes on."""
        if self.pool is not None:
            self.pool.shutdown(wait=False)

    def shutdown(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)


def _process_pool(workers: int, started_by: str) -> Executor:
    # imported here: a build too small for workers never loads multiprocessing
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    if started_by == "spawn":  # a forked pool's semaphores are unnamed: nothing to track
        _start_quiet_resource_tracker()
    return ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context(started_by),
        initializer=_start_pool_worker,
    )


@contextlib.contextmanager
def worker_pool(
    total_bytes: int, jobs: int, alone: bool = False, prepare: Callable[[], object] | None = None
) -> Iterator[Pool | None]:
    """Processes for a build big enough to gain from them, else None (run in this process).
    `alone`: the build checks one bank alone (see FORK_MAX_BYTES), in one worker that does
    `prepare` once it has sent its check (see `Pool.prepare`)."""
    if jobs < 2 or total_bytes < MIN_PARALLEL_BYTES or workers() < 2:
        yield None
        return
    # this process works too (see `parallel_map`): one process fewer to start and feed
    count = 1 if alone else min(workers(), jobs) - 1
    pool = Pool(count, fork=total_bytes <= FORK_MAX_BYTES or alone, prepare=prepare)
    try:
        yield pool
    finally:
        # on Ctrl-C too: queued work is dropped, running work finishes and cleans up
        pool.shutdown()


class Then(Protocol[T_in, R_in]):
    """Work that can start as soon as one item's result is in (a deck's plan once its bank
    is checked): no process then waits for the slowest item of the first stage before
    the second, and the process that made the result has it at hand."""

    def after(self, item: T_in, result: R_in) -> Callable[[], object] | None:
        """The follow-up of one result, or None: picklable (a `functools.partial` of a
        module-level function), as it may run in a worker. Called in this process."""

    def collect(self, item: T_in, outcome: object) -> None:
        """A follow-up's outcome, or None if it failed or never ran: in whichever thread
        of this process sees it first, maybe after the map has given its results."""


def parallel_map(
    func: Callable[[T], R],
    items: Sequence[T],
    pool: Pool | None,
    size: Callable[[T], int] | None = None,
    then: Then[T, R] | None = None,
    fed: threading.Event | None = None,
) -> Iterator[R]:
    """`func(x) for x in items`, in the pool's processes and this one if there is a pool;
    in order. With `size`, the largest items are started first: the last to finish is
    then a small one, and no process waits long for another at the end.

    With `then` and a pool, each result's follow-up runs as soon as the result is in, in
    the process that made it, and may outlast the map: its outcome is collected when it
    comes (`Then.collect`). The workers start on the items at once, so the caller can
    work on something else before it asks for the results; even a single item then
    goes to a worker, its follow-up too, while this process goes on.

    `fed` is set once no worker works on an item: each result made in a worker is in and
    its follow-up sent, and the items left (if any) wait for this process to ask for the
    results (or the map failed); at once without a pool. Work this process does before
    then competes for the interpreter lock with the thread that feeds the workers."""
    if pool is None or not items or (len(items) < 2 and then is None):
        # one process: a follow-up would overlap nothing, and only hold its result longer
        if fed is not None:
            fed.set()
        return map(func, items)
    order = range(len(items))
    handout = _Handout(sorted(order, key=lambda i: -size(items[i])) if size else list(order))
    # the first tasks start the worker processes: meanwhile Ctrl-C and SIGTERM are held
    # back, and a worker starts with them held and ignores them from its first line, so
    # one sent to the process group reaches only this process, which takes it once they
    # are started and stops them cleanly (ignored here meanwhile, one was lost, and the
    # build ran to its end). A task for workers already started waits for none of that
    # but may wait for a busy worker: sent with them heard
    with stops_held() if not pool.started else contextlib.nullcontext():
        running: dict[Future[object], int] = {
            pool.submit(func, items[index]): index for index in handout.take_some(pool)
        }
    return _Shared(func, items, pool, handout, running, then, fed).results()


def _call(follow: Callable[[], S]) -> S:
    return follow()


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


# while workers are fed: the thread that feeds them waits for the interpreter lock at most
# this long, not the default 5 ms, when this process's own work holds it (measured:
# workers idle 60 to 80 ms between items at the default, 6 to 20 ms at this)
FEED_SWITCH_INTERVAL = 0.0005


class _Feeding:
    """The threads feeding workers now: the interpreter's switch interval is lowered
    while there is one, and set back when the last one ends (maps may overlap: a map's
    follow-ups may outlast it)."""

    lock = threading.Lock()
    count = 0
    restore = 0.0

    @classmethod
    def begin(cls) -> None:
        with cls.lock:
            if cls.count == 0:
                cls.restore = sys.getswitchinterval()
                sys.setswitchinterval(FEED_SWITCH_INTERVAL)
            cls.count += 1

    @classmethod
    def end(cls) -> None:
        with cls.lock:
            cls.count -= 1
            if cls.count == 0:
                sys.setswitchinterval(cls.restore)


class _Shared(Generic[T, R]):
    """Each process takes the next item when it is free: this one between its own items,
    a worker as soon as it returns one (a thread here sends it). A worker is never sent
    an item ahead, to wait behind the one it is working on: once sent, this process
    could no longer take it, and would sit idle at the end while the worker did two.
    A result's follow-up is done next by the process that made the result, which may
    have what it needs at hand (a bank it has just checked)."""

    def __init__(
        self,
        func: Callable[[T], R],
        items: Sequence[T],
        pool: Pool,
        handout: _Handout,
        running: dict[Future[object], int],
        then: Then[T, R] | None,
        fed: threading.Event | None = None,
    ) -> None:
        self.func, self.items, self.pool, self.then = func, items, pool, then
        self.fed = fed
        self.handout = handout
        self.running = running
        self.count = len(items)
        self.done: dict[int, Future[object]] = {}
        self.failures: list[BaseException] = []
        self.changed = threading.Condition()
        self.waiting = len(items)
        """Items whose results are not in yet."""
        _Feeding.begin()
        self.feeder = threading.Thread(target=self._feed, name="ankigen-feeder", daemon=True)
        self.feeder.start()

    def _item_done(self) -> None:
        with self.changed:
            self.waiting -= 1
            self.changed.notify_all()

    def _feed(self) -> None:
        from concurrent.futures import FIRST_COMPLETED, wait

        running, items, count, then = self.running, self.items, self.count, self.then
        try:
            free = 0
            while running:
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in finished:
                    index = running.pop(future)
                    failed = future.cancelled() or future.exception() is not None
                    if index >= count:  # a follow-up's outcome, None if it failed
                        assert then is not None
                        then.collect(items[index - count], None if failed else future.result())
                        free += 1
                        continue
                    self.done[index] = future
                    follow = None
                    if failed:
                        self.handout.stop()  # the map fails: no more work for it
                    elif then is not None:
                        follow = then.after(items[index], future.result())  # type: ignore[arg-type]
                    if follow is None:
                        free += 1
                    else:  # to the worker just freed: the only one waiting for work
                        running[self.pool.submit(_call, follow)] = count + index
                    self._item_done()
                while free and (taken := self.handout.take()) is not None:
                    running[self.pool.submit(self.func, items[taken])] = taken
                    free -= 1
                if self.fed is not None and all(index >= count for index in running.values()):
                    self.fed.set()
        except BaseException as exc:  # a broken or shut down pool: raised in the caller
            self.handout.stop()
            self.failures.append(exc)
        finally:
            for future, index in list(running.items()):
                future.cancel()
                if index >= count and then is not None:
                    then.collect(items[index - count], None)  # never to come
            with self.changed:
                self.waiting = 0
                self.changed.notify_all()
            if self.fed is not None:
                self.fed.set()
            _Feeding.end()

    def results(self) -> Iterator[R]:
        items, count, then = self.items, self.count, self.then
        here: dict[int, object] = {}
        try:
            while (index := self.handout.take()) is not None:
                result = here[index] = self.func(items[index])
                self._item_done()
                follow = then.after(items[index], result) if then is not None else None
                if then is not None and follow is not None:
                    then.collect(items[index], follow())
            with self.changed:
                self.changed.wait_for(lambda: self.waiting <= 0 or bool(self.failures))
            if self.failures:
                raise self.failures[0]
            for future in self.done.values():
                if future.cancelled() or future.exception() is not None:
                    future.result()  # the first item that failed: raised here
            for number in range(count):
                yield here.pop(number) if number in here else self.done.pop(number).result()  # type: ignore[misc]
        finally:
            self.handout.stop()
            for future in self.done.values():
                future.cancel()
