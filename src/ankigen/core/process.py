"""ankigen's own processes (the command and its workers): the cycle collector's tuning.

Python's cycle collector runs every 700 new objects, and now and then walks every live
object. A build makes millions (nodes, items, notes), and reference counting frees
them: at 10 x 1,000 items it ran about a thousand times, seven of them over the whole
heap, to find a few hundred objects, for 10 to 25% of the CPU time. Rarer runs still
collect every cycle; only this short-lived command and its own worker processes are
tuned, never a program that imports ankigen."""

from __future__ import annotations

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
