"""The `ankigen` command's entry point: tiny, so a Ctrl-C while Python starts lands here."""

from __future__ import annotations

import os
import sys


def main() -> None:
    try:
        from ankigen.cli import main as run
    except KeyboardInterrupt:
        # nothing was started yet; exit handlers are skipped so that a second Ctrl-C
        # has no traceback to print
        print("interrupted", file=sys.stderr, flush=True)
        os._exit(130)
    run()
