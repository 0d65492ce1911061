"""Modification times: which values can be one, and the time a build gives changed notes.

Apart from `identity` (and free of its imports): every build reads the time first,
even one that finds nothing changed.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Mapping

from ankigen.core.errors import AnkigenError

# Anki was first released in 2006; a build time before 2001-09-09 is a mistake
# (zero, a truncated value), and it would give note ids close to zero.
EARLIEST = 1_000_000_000
# Clocks of a team's machines disagree a little; a day is the same slack that
# Anki's own importer allows for ids.
FUTURE_SLACK = 86_400


class BadTime(AnkigenError):
    """A modification time from the environment or the lock file is not a sane time."""


def time_problem(value: object, now: int) -> str | None:
    """Why `value` cannot be a modification time, or None if it can."""
    if isinstance(value, bool) or not isinstance(value, int):
        return f"{value!r} is not a whole number of seconds"
    if value <= 0:
        return f"{value} is not a time after 1970"
    if value < EARLIEST:
        return f"{value} is before 2001, not a real build time"
    if value > now + FUTURE_SLACK:
        if EARLIEST * 1000 <= value <= (now + FUTURE_SLACK) * 1000:
            return f"{value} looks like milliseconds; times are in seconds since 1970"
        return f"{value} is more than a day in the future"
    return None


def clock() -> int:
    """The real time, in seconds: the limit for 'not in the future'."""
    return int(time.time())


def build_time(environ: Mapping[str, str] | None = None) -> int:
    """The time given to changed notes; SOURCE_DATE_EPOCH pins it for reproducible builds."""
    environ = os.environ if environ is None else environ
    now = clock()
    pinned = environ.get("SOURCE_DATE_EPOCH", "").strip()
    if not pinned:
        return now
    value: object = int(pinned) if re.fullmatch(r"[+-]?[0-9]{1,30}", pinned) else pinned
    problem = time_problem(value, now)
    if problem:
        raise BadTime(
            f"SOURCE_DATE_EPOCH: {problem}; set it to a time in seconds since 1970 "
            "(such as `git log -1 --format=%ct`), or unset it"
        )
    assert isinstance(value, int)
    return value
