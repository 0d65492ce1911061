"""ankigen's own processes (the command and its workers): the cycle collector's tuning.

Python's cycle collector runs every 700 new objects, and now and then walks every live
object. A build makes millions (nodes, items, notes), and reference counting frees
them: at 10 x 1,000 items it ran about a thousand times, seven of them over the whole
heap, to find a few hundred objects, for 10 to 25% of the CPU time. Rarer runs still
collect every cycle; only this short-lived command and its own worker processes are
tuned, never a program that imports ankigen."""

from __future__ import annotations

GC_THRESHOLDS = (100_000, 50, 100)
