"""The `ankigen` command's entry point: tiny, so a Ctrl-C while Python starts lands here."""

from __future__ import annotations

import gc
import os
import signal
import sys

# Python's cycle collector runs every 700 new objects, and now and then walks every live
# object. A build makes millions (nodes, items, notes), and reference counting frees
# them: at 10 x 1,000 items it ran about a thousand times, seven of them over the whole
# heap, to find a few hundred objects, for 10 to 25% of the CPU time. Rarer runs
# still collect every cycle; only this short-lived command and its own worker
# processes are tuned, never a program that imports ankigen.
GC_THRESHOLDS = (100_000, 50, 100)


def main() -> None:
    gc.set_threshold(*GC_THRESHOLDS)
    try:
        from ankigen.cli import main as run
    except KeyboardInterrupt:
        # nothing was started yet; exit handlers are skipped so that a second Ctrl-C
        # has no traceback to print
        print("interrupted", file=sys.stderr, flush=True)
        os._exit(130)
    try:
        run()
    finally:
        # the command is done (a Ctrl-C during it was handled); while Python tears down
        # it puts back the default SIGINT action, and a Ctrl-C then would kill the process
        # with status -2 and no message after a finished build; an ignored one stays so
        signal.signal(signal.SIGINT, signal.SIG_IGN)
