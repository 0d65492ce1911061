"""Builds that use worker processes even where a real build would not, to test them."""

from __future__ import annotations

import sys
import threading
import time
import traceback

import pytest

import ankigen.checks.incremental
import ankigen.core.parallel


def with_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Worker processes even for small banks, and even for one: decks are planned early
    only where several processes share the work (in one, it would overlap nothing).

    A pool forks its workers only while this process has no other thread (a child
    would inherit their locks held), and a test's patches reach forked workers only:
    the threads a previous build left to finish (its feeder, an entry made late) are
    waited for, so that the workers are forked however busy the machine is."""
    monkeypatch.setattr(ankigen.core.parallel, "MIN_PARALLEL_BYTES", 0)
    monkeypatch.setattr(ankigen.checks.incremental, "LONE_BANK_FOR_A_WORKER", 0)
    deadline = time.monotonic() + 60
    while threading.active_count() > 1:
        assert time.monotonic() < deadline, f"threads of an earlier build still run:\n{_stacks()}"
        time.sleep(0.01)


def _stacks() -> str:
    """Where each other thread is: a thread that never ends is found where it waits."""
    frames = sys._current_frames()
    return "".join(
        f"--- {thread.name}\n" + "".join(traceback.format_stack(frames[thread.ident]))
        for thread in threading.enumerate()
        if thread is not threading.current_thread() and thread.ident in frames
    )
