"""Builds that use worker processes even where a real build would not, to test them."""

from __future__ import annotations

import threading
import time

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
        others = [t.name for t in threading.enumerate() if t is not threading.current_thread()]
        assert time.monotonic() < deadline, f"threads of an earlier build still run: {others}"
        time.sleep(0.01)
