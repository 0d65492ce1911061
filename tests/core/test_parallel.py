"""Work spread over a worker process and this one: each item once, in order, and no
process left idle while an item waits for another to finish."""

from __future__ import annotations

import functools
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ankigen.core.parallel import Pool, parallel_map
from tests.helpers import run_probe

WAIT = 60  # seconds before a test gives up on a file another process should write


def _square_where(number: int) -> tuple[int, int]:
    return number * number, os.getpid()


def _first_waits_for_the_rest(job: tuple[Path, int, int]) -> str:
    folder, number, count = job
    if number:
        (folder / f"done-{number}").write_text("")
        return f"{number} in {os.getpid()}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if len(list(folder.glob("done-*"))) == count - 1:
            return f"0 after the rest, in {os.getpid()}"
        time.sleep(0.01)
    return "0 gave up waiting"


def _fails_at_three(number: int) -> int:
    if number == 3:
        raise ValueError("three")
    return number


@pytest.fixture
def pool() -> Iterator[Pool]:
    workers = Pool(1)
    yield workers
    workers.shutdown()


def test_results_come_in_order_each_item_once(pool: Pool) -> None:
    results = list(parallel_map(_square_where, range(40), pool))
    assert [square for square, _ in results] == [n * n for n in range(40)]
    assert results[0][1] != os.getpid()  # the first item goes to the worker


def test_no_item_waits_behind_a_busy_worker(tmp_path: Path, pool: Pool) -> None:
    # the worker's first item finishes only once every other item is done: an item
    # queued behind it in the worker would never be done, and this process, idle, would
    # wait for it; instead this process takes every item the worker has not started
    count = 8
    jobs = [(tmp_path, number, count) for number in range(count)]
    results = list(parallel_map(_first_waits_for_the_rest, jobs, pool))
    assert results[0].startswith("0 after the rest, in ")
    assert results[0] != f"0 after the rest, in {os.getpid()}"
    assert results[1:] == [f"{number} in {os.getpid()}" for number in range(1, count)]


def test_a_failure_in_either_process_reaches_the_caller(pool: Pool) -> None:
    with pytest.raises(ValueError, match="three"):
        list(parallel_map(_fails_at_three, range(10), pool))
    with pytest.raises(ValueError, match="three"):
        list(parallel_map(_fails_at_three, range(4), pool))


def test_without_a_pool_everything_runs_here() -> None:
    results = list(parallel_map(_square_where, range(5), None))
    assert results == [(n * n, os.getpid()) for n in range(5)]


def test_the_largest_items_start_first(pool: Pool) -> None:
    # the worker is sent the first item handed out, before this process takes any
    numbers = [1, 2, 9, 3, 4]
    by_size = list(parallel_map(_square_where, numbers, pool, size=int))
    in_order = list(parallel_map(_square_where, numbers, pool))
    assert [square for square, _ in by_size] == [n * n for n in numbers]
    assert by_size[2][1] != os.getpid()  # 9
    assert in_order[0][1] != os.getpid()  # 1


def _wait_for(path: Path) -> bool:
    """Polls for a file the test writes: bounded, so a lost signal fails the follow-up
    (-1) rather than hanging it."""
    deadline = time.monotonic() + WAIT
    while not path.exists():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


class Collecting:
    """Collects follow-ups' outcomes, which may come after the map's results."""

    def __init__(self) -> None:
        self.collected: dict[int, object] = {}
        self.changed = threading.Condition()

    def collect(self, item: int, outcome: object) -> None:
        with self.changed:
            assert item not in self.collected
            self.collected[item] = outcome
            self.changed.notify_all()

    def wait_for(self, count: int) -> dict[int, object]:
        with self.changed:
            arrived = self.changed.wait_for(lambda: len(self.collected) >= count, timeout=WAIT)
            assert arrived, f"{len(self.collected)} of {count} follow-ups in after {WAIT} s"
            return self.collected


class Squares(Collecting):
    """Follows each even number with its square."""

    def after(self, item: int, result: tuple[int, int]) -> Callable[[], object] | None:
        return functools.partial(_square_where, item) if item % 2 == 0 else None


def test_each_result_is_followed_once(pool: Pool) -> None:
    import sys

    interval = sys.getswitchinterval()
    then = Squares()
    results = list(parallel_map(_square_where, range(30), pool, then=then))
    assert [square for square, _ in results] == [n * n for n in range(30)]
    collected = then.wait_for(15)
    assert {n: square for n, (square, _) in collected.items()} == {  # type: ignore[misc]
        n: n * n for n in range(0, 30, 2)
    }
    # lowered while workers were fed, and set back once the last follow-up is in
    deadline = time.monotonic() + WAIT
    while sys.getswitchinterval() != interval and time.monotonic() < deadline:
        time.sleep(0.01)
    assert sys.getswitchinterval() == interval, f"switch interval not restored in {WAIT} s"


def test_in_one_process_nothing_is_followed() -> None:
    # the caller then does the work in its turn: a follow-up would overlap nothing
    then = Squares()
    assert [r for r, _ in parallel_map(_square_where, range(6), None, then=then)] == [
        n * n for n in range(6)
    ]
    assert then.collected == {}


def _follow_where(number: int) -> tuple[int, int]:
    return -number, os.getpid()


class FollowWhere(Collecting):
    """Follows each item; records where each item ran."""

    def __init__(self) -> None:
        super().__init__()
        self.made: dict[int, int] = {}

    def after(self, item: int, result: tuple[int, int]) -> Callable[[], object] | None:
        self.made[item] = result[1]
        return functools.partial(_follow_where, item)


def test_a_follow_up_runs_where_its_result_was_made(pool: Pool) -> None:
    # there, what the item made may still be at hand (a bank just checked)
    then = FollowWhere()
    list(parallel_map(_square_where, range(12), pool, then=then))
    followed = then.wait_for(12)
    assert followed == {n: (-n, then.made[n]) for n in range(12)}
    assert set(then.made.values()) > {os.getpid()}  # the worker did some


def _slow_follow(folder: Path) -> int:
    """Done only once the caller has its results (it writes `results-in`)."""
    if not _wait_for(folder / "results-in"):
        return -1
    return os.getpid()


class FollowSlowly(Collecting):
    def __init__(self, folder: Path) -> None:
        super().__init__()
        self.folder = folder

    def after(self, item: int, result: tuple[int, int]) -> Callable[[], object] | None:
        return functools.partial(_slow_follow, self.folder)


def test_a_single_item_and_its_follow_up_go_to_a_worker_and_outlast_the_map(
    tmp_path: Path, pool: Pool
) -> None:
    # this process is free for other work meanwhile: the results come without waiting
    # for the follow-up, which finishes after them
    then = FollowSlowly(tmp_path)
    [(square, where)] = parallel_map(_square_where, [7], pool, then=then)
    assert square == 49 and where != os.getpid()
    assert then.collected == {}
    (tmp_path / "results-in").write_text("")
    assert then.wait_for(1) == {7: where}


FORKED_WHILE_LOCKED = """
import fcntl, os, sys
from pathlib import Path
from ankigen.core.folderlock import LOCK_FILE, exclusive
from ankigen.core.parallel import Pool, parallel_map

folder = Path(sys.argv[1])
pool = Pool(1, fork=True)
with exclusive(folder):
    list(parallel_map(abs, range(-4, 0), pool))  # the worker is started here, forked
handle = open(folder / LOCK_FILE, "a+b")
try:
    fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    print(pool.started_by, "free")
except BlockingIOError:
    print(pool.started_by, "still held")
pool.shutdown()
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forking needs a POSIX system")
def test_a_forked_worker_never_holds_the_output_folders_lock(tmp_path: Path) -> None:
    """A worker forked while this process holds the lock would keep its copy of it alive,
    and a build killed meanwhile would block every later one until the worker exits.
    Run in a fresh interpreter: this one may have threads, which rule out forking."""
    import subprocess
    import sys

    script = tmp_path / "forked.py"
    script.write_text(FORKED_WHILE_LOCKED, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    expected = "fork free" if sys.platform == "linux" else "spawn free"
    assert done.stdout.strip() == expected


def _frozen(_: int) -> int:
    import gc

    return gc.get_freeze_count()


def test_a_worker_never_collects_what_it_started_with(pool: Pool) -> None:
    # a forked worker shares this process's pages until it writes to them, and the
    # collector writes to every object it looks at
    counts = list(parallel_map(_frozen, [1, 2], pool))
    assert counts[0] > 0  # the first item goes to the worker


def test_workers_are_forked_for_a_small_build_or_one_bank_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A large build's workers start afresh (a forked one would count the banks read
    twice in its size); one checking a bank alone, an edit's, is forked whatever the size:
    its start is most of the wait, and there is only one (a forked pool starts all its
    workers at once)."""
    import ankigen.core.parallel
    from ankigen.core.parallel import FORK_MAX_BYTES, MIN_PARALLEL_BYTES, worker_pool

    monkeypatch.setattr(ankigen.core.parallel, "workers", lambda: 4)
    forked = {}
    for total, alone in [
        (MIN_PARALLEL_BYTES, False),
        (FORK_MAX_BYTES + 1, False),
        (FORK_MAX_BYTES + 1, True),
    ]:
        with worker_pool(total, 10, alone) as pool:
            assert pool is not None
            forked[total, alone] = pool.fork, pool.max_workers
    assert forked == {
        (MIN_PARALLEL_BYTES, False): (True, 3),
        (FORK_MAX_BYTES + 1, False): (False, 3),
        (FORK_MAX_BYTES + 1, True): (True, 1),
    }


def test_a_build_that_checks_one_bank_alone_forks_its_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bank edited alone: its worker may be forked, however large the banks are."""
    import ankigen.checks.incremental
    import ankigen.checks.run
    import ankigen.core.parallel
    from ankigen.builder.pipeline import build
    from tests.helpers import item, write_bank

    banks = tmp_path / "banks"
    for topic in ("a", "b", "c"):
        write_bank(banks, topic, items=[item(f"{topic}{n}") for n in range(5)])
    monkeypatch.setattr(ankigen.core.parallel, "MIN_PARALLEL_BYTES", 0)
    monkeypatch.setattr(ankigen.core.parallel, "FORK_MAX_BYTES", 0)  # every build counts as large
    monkeypatch.setattr(ankigen.checks.incremental, "LONE_BANK_FOR_A_WORKER", 0)
    monkeypatch.setattr(ankigen.core.parallel, "workers", lambda: 2)
    pools: list[tuple[bool, bool]] = []
    real = ankigen.core.parallel.Pool.__init__

    def noting(
        self: Pool,
        max_workers: int,
        fork: bool = False,
        prepare: Callable[[], object] | None = None,
    ) -> None:
        pools.append((fork, prepare is not None))
        real(self, max_workers, fork, prepare)

    monkeypatch.setattr(ankigen.core.parallel.Pool, "__init__", noting)
    build(banks, tmp_path / "out")
    write_bank(banks, "b", items=[item(f"b{n}") for n in range(6)])
    build(banks, tmp_path / "out")
    # the lone worker prepares the package's making once it has sent its check
    assert pools == [(False, False), (True, True)]


FIRST_TASK_INHERITED = """
import threading
from ankigen.core.parallel import Pool

pool = Pool(1, fork=True)
first = pool.submit(str, threading.Lock()).result()  # a lock cannot be pickled
try:
    pool.submit(str, threading.Lock()).result()
    second = "sent"
except Exception:
    second = "could not be sent"
print(pool.started_by, "unlocked" in first, second)
pool.shutdown()
"""


@pytest.mark.skipif(sys.platform != "linux", reason="workers are forked on Linux only")
def test_a_forked_pools_first_task_is_found_in_the_worker_not_sent(tmp_path: Path) -> None:
    """The argument of a forked pool's first task (a bank edited alone) is in the memory
    its worker is forked with: it is never pickled, while a later task's argument is.
    Run in a fresh interpreter, which has no other thread and so can fork."""
    import subprocess

    script = tmp_path / "inherited.py"
    script.write_text(FIRST_TASK_INHERITED, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "fork True could not be sent"


def _slow_follow_unless_in(folder: Path, caller: int) -> int:
    """`_slow_follow` in a worker; done at once in the process `caller` (the test's).
    The caller's pid is an argument: a module-level one would be the worker's own in a
    spawned worker, which imports this module afresh."""
    return os.getpid() if os.getpid() == caller else _slow_follow(folder)


class FollowOnceNoted(Collecting):
    """Follows each item, slowly in a worker (see `_slow_follow_unless_in`); notes each
    item handed on, and whether `fed` was already set when its follow-up was made."""

    def __init__(self, folder: Path, fed: threading.Event) -> None:
        super().__init__()
        self.folder = folder
        self.fed = fed
        self.handed: list[int] = []
        self.fed_before_handed: list[bool] = []

    def after(self, item: int, result: tuple[int, int]) -> Callable[[], object] | None:
        self.fed_before_handed.append(self.fed.is_set())
        self.handed.append(item)
        return functools.partial(_slow_follow_unless_in, self.folder, os.getpid())


def test_fed_is_set_once_every_follow_up_is_sent_not_before(tmp_path: Path, pool: Pool) -> None:
    """What this process does after `fed` no longer competes with the thread that makes
    and sends the follow-ups; the follow-up itself may still run."""
    fed = threading.Event()
    then = FollowOnceNoted(tmp_path, fed)
    results = parallel_map(_square_where, [3, 4], pool, then=then, fed=fed)
    assert fed.wait(WAIT), f"fed was not set within {WAIT} s"
    # the worker's item is followed up, `fed` unset until then; the other item waits
    # for this process, its worker busy with the follow-up until `results-in`
    assert then.handed == [3]
    assert then.fed_before_handed == [False]
    assert then.collected == {}
    # the worker is busy with the follow-up until the results are in: the item left is
    # this process's
    assert [(square, where == os.getpid()) for square, where in results] == [
        (9, False),
        (16, True),
    ]
    (tmp_path / "results-in").write_text("")
    assert set(then.wait_for(2)) == {3, 4}


def test_fed_is_set_when_the_map_fails_or_runs_here(pool: Pool) -> None:
    fed = threading.Event()
    results = parallel_map(_fails_at_three, [3], pool, then=Squares(), fed=fed)
    assert fed.wait(WAIT), f"fed was not set within {WAIT} s"
    with pytest.raises(ValueError):
        list(results)
    here = threading.Event()
    assert list(parallel_map(abs, [-1], None, fed=here)) == [1] and here.is_set()


STOP_WHILE_SENDING = """
import os, signal, threading
from pathlib import Path
from ankigen.core.parallel import Pool, parallel_map

class Stopped(Exception):
    pass

def stop(number, frame):
    raise Stopped()

gate_out, gate_in = os.pipe()

def held(number):
    if number == 0:  # in the worker: busy until the probe lets it go, or has ended
        os.close(gate_in)
        os.read(gate_out, 1)
    return number

def sending_blocked(thread_id):
    return "pipe_write" in Path(f"/proc/self/task/{thread_id}/wchan").read_text()

def stop_then_release(main_id):
    while not sending_blocked(main_id):
        pass
    os.kill(os.getpid(), signal.SIGTERM)
    os.write(gate_in, b"go")

signal.signal(signal.SIGTERM, stop)
pool = Pool(1, fork=True)
busy = parallel_map(held, [0, 1], pool)  # the worker takes 0 and waits
threading.Thread(target=stop_then_release, args=(threading.get_native_id(),)).start()
try:
    list(parallel_map(len, [b"x" * (4 << 20), b"y"], pool))  # more than a pipe holds
    print("not stopped")
except Stopped:
    print("stopped")
os._exit(0)
"""


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads a thread's state in /proc")
def test_a_stop_while_a_task_waits_for_a_busy_worker_is_not_lost() -> None:
    """Ctrl-C and SIGTERM are ignored while a map starts the workers (they start ignoring
    them), not while it sends a task to workers already started: a build whose second
    round of checks waited there for its busy worker ran to its end after a SIGTERM."""
    probe = run_probe(STOP_WHILE_SENDING)
    assert probe.stdout.strip() == "stopped", probe.stderr


HELD_THEN_TAKEN = """
import os, signal
from ankigen.core.process import ignore_stops, stops_held

taken = []
signal.signal(signal.SIGTERM, lambda number, frame: taken.append(number))
with stops_held():
    child = os.fork()
    if child == 0:  # a worker started meanwhile: it holds them too, until it ignores them
        os.kill(os.getpid(), signal.SIGTERM)
        ignore_stops()
        os._exit(0)
    os.kill(os.getpid(), signal.SIGTERM)
    print("inside", taken)
print("after", taken)
print("child", os.waitpid(child, 0)[1])
"""


def test_a_stop_while_workers_start_is_held_back_and_then_taken() -> None:
    """What a map does while it starts its workers: a Ctrl-C or SIGTERM that comes then
    is taken once they are started (it used to be ignored, and lost), and the workers,
    started with it held, ignore it."""
    probe = run_probe(HELD_THEN_TAKEN)
    assert probe.stdout.splitlines() == ["inside []", "after [15]", "child 0"], probe.stderr


HELD_THROUGH_THE_TRACKER = """
import signal
from ankigen.core import parallel
from ankigen.core.process import stops_held

with stops_held():
    parallel._start_quiet_resource_tracker()
    held = signal.pthread_sigmask(signal.SIG_BLOCK, set())
print(sorted(int(number) for number in held & {signal.SIGINT, signal.SIGTERM}))
"""


def test_stops_stay_held_while_the_resource_tracker_starts() -> None:
    """multiprocessing's `resource_tracker.ensure_running` ends by unblocking Ctrl-C and
    SIGTERM: a spawned pool's workers, started after it, printed a traceback each on a
    Ctrl-C to the process group."""
    probe = run_probe(HELD_THROUGH_THE_TRACKER)
    assert probe.stdout.strip() == "[2, 15]", probe.stderr
