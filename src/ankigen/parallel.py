"""Spreading independent per-bank and per-deck work over the machine's cores."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

# Below this much input, starting processes costs more than it saves.
MIN_PARALLEL_BYTES = 1 << 20


def workers() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


@contextlib.contextmanager
def worker_pool(total_bytes: int, jobs: int) -> Iterator[Executor | None]:
    """Processes for a build big enough to gain from them, else None (run in this process)."""
    if jobs < 2 or total_bytes < MIN_PARALLEL_BYTES or workers() < 2:
        yield None
        return
    # spawn, not fork: a forked worker would inherit the output folder's lock, and
    # outlive a build killed with SIGKILL while still holding it
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=min(workers(), jobs), mp_context=context) as pool:
        yield pool


def parallel_map(func: Callable[[T], R], items: Sequence[T], pool: Executor | None) -> Iterator[R]:
    """`func(x) for x in items`, in the pool's processes if there is one; in order."""
    if pool is None or len(items) < 2:
        return map(func, items)
    return pool.map(func, items)
