"""ankigen's own processes (the command and its workers): the cycle collector's tuning.

Python's cycle collector runs every 700 new objects, and now and then walks every live
object. A build makes millions (nodes, items, notes), and reference counting frees
them: at 10 x 1,000 items it ran about a thousand times, seven of them over the whole
heap, to find a few hundred objects, for 10 to 25% of the CPU time. Rarer runs still
collect every cycle; only this short-lived command and its own worker processes are
tuned, never a program that imports ankigen."""

from __future__ import annotations

import contextlib
import signal

TYPE_CHECKING = False  # not typing's: on the replay's path, as `core.jsondata` explains
if TYPE_CHECKING:
    from collections.abc import Iterator
    from types import FrameType

GC_THRESHOLDS = (100_000, 50, 100)


_left_to_exit: list[object] | None = None
"""What the command keeps until it leaves (`keep_until_exit`); None in a program that
imports ankigen, which frees as usual."""


def ends_without_teardown() -> None:
    """Said by the command line, which leaves without Python's teardown (`cli.entry.leave`):
    from now on `keep_until_exit` keeps what it is given."""
    global _left_to_exit
    _left_to_exit = []


def keep_until_exit(*objects: object) -> None:
    """In the command, keep `objects` until the process leaves: they are then never freed
    one by one, as Python's teardown would not free them either. Freeing a build's
    working state as it returned (the lock's and the issued record's stamps, the banks'
    outlines, the cache) took 2 ms at the end of an edit at 10 x 1,000 items. Anywhere
    else, nothing."""
    if _left_to_exit is not None:
        _left_to_exit.append(objects)


_stopped_by: int = signal.SIGINT
"""The signal that stopped the command: Ctrl-C's (SIGINT), or SIGTERM's (`kill`,
`timeout`, a cancelled CI job) once `stop_on_sigterm` has taken one."""

_STOPS = (signal.SIGINT, signal.SIGTERM)


def stop_on_sigterm() -> None:
    """Said by the command line: SIGTERM stops the command as Ctrl-C does (workers
    stopped, no temporary file or directory left, one line), where by default it killed
    the process at once and left its pool's workers running with no one to stop them.
    It goes through whatever SIGINT does at that moment, so it is held back or
    remembered wherever Ctrl-C is; where ankigen ignores Ctrl-C it ignores both
    (`ignore_stops`). A Ctrl-C the process was started ignoring (a shell's background
    job) stays ignored, and SIGTERM still stops it."""

    def as_interrupt(number: int, frame: FrameType | None) -> None:
        global _stopped_by
        _stopped_by = number
        handler = signal.getsignal(signal.SIGINT)
        (handler if callable(handler) else signal.default_int_handler)(signal.SIGINT, frame)

    signal.signal(signal.SIGTERM, as_interrupt)


def ignore_stops() -> None:
    """Ctrl-C and SIGTERM ignored from now on, and no longer held back if they were (a
    worker started while its command held them, `stops_held`)."""
    for number in _STOPS:
        signal.signal(number, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPS)


@contextlib.contextmanager
def stops_held() -> Iterator[None]:
    """Ctrl-C and SIGTERM held back in this thread while the block runs, and taken as
    soon as it ends: blocked, not ignored, so none is lost. A process started in the
    block starts with them held back, until it ignores them (`ignore_stops`)."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def stopped() -> tuple[str, int]:
    """The line and the exit status of a command stopped by a signal: 128 and its number,
    as a shell reports a process the signal killed."""
    return ("interrupted" if _stopped_by == signal.SIGINT else "terminated"), 128 + _stopped_by


def from_an_interrupt(exc: BaseException) -> bool:
    """Whether `exc` wraps a Ctrl-C (or SIGTERM): Python 3.11 turns a KeyboardInterrupt
    raised while a class is made, as a frozen dataclass's fields are, into a RuntimeError
    ("Error calling __set_name__"), which must stop the command as the interrupt does,
    not be reported as a bug."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False
