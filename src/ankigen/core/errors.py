"""One exception hierarchy; every error a user can cause is an AnkigenError.

The library knows nothing of the command line: `cli` shows these errors and exits
with their status, and a build with nothing to do never loads click at all (`quick`)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal, NamedTuple

Severity = Literal["error", "warning"]


class Diagnostic(NamedTuple):
    """One problem at one line of one file: a named tuple, ordered by its fields, the
    one record of the package that is not a frozen dataclass. A bank half translated
    has a warning for every other text, and a build holds, sorts and sends them all: as
    a tuple one is made in a third of a frozen dataclass's time (45,000 read from the
    bank cache at 10 x 10,000 items: 0.04 s less), compared and pickled in C."""

    path: str
    line: int
    severity: Severity
    message: str
    column: int = 0
    """Where in the line, from 1, if the reader knows it (the YAML node's start); 0 when
    a problem is with a whole item or line. Last, so that diagnostics still sort by line
    and read as `PATH:LINE: severity: message`."""

    def __str__(self) -> str:
        # line 0: a problem with the file itself (its name, its type), not a line in it
        where = f"{self.path}:{self.line}" if self.line else self.path
        return printable(f"{where}: {self.severity}: {self.message}")


_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """`text` with its control characters escaped (`\\n`, `\\x1b`), for one line of a
    terminal or a log: a file's name with a line break printed one problem as two lines,
    the first of them no problem at all, and one with an escape sequence could set the
    terminal's title (a name quoted in a message too); bidirectional controls reorder
    what follows."""
    return _CONTROL.sub(_escaped, text) if _CONTROL.search(text) else text


def _escaped(found: re.Match[str]) -> str:
    return found.group().encode("unicode_escape").decode("ascii")


class AnkigenError(Exception):
    """Base class: a clear message and exit status 1, never a traceback."""

    exit_code = 1

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message

    def format_message(self) -> str:
        return f"error: {self.message}"


class InvalidBanks(AnkigenError):
    """One or more banks have errors; nothing was written."""

    def __init__(self, diagnostics: Iterable[Diagnostic]) -> None:
        self.diagnostics = sorted(diagnostics)
        errors = sum(d.severity == "error" for d in self.diagnostics)
        lines = [str(d) for d in self.diagnostics]
        lines.append(f"{errors} error{'s' if errors != 1 else ''}; nothing was written")
        super().__init__("\n".join(lines))

    def format_message(self) -> str:
        return self.message


class LockError(AnkigenError):
    """The lock file is unreadable, damaged or from an unknown version."""

    def __init__(self, message: str, problem: Diagnostic | None = None) -> None:
        super().__init__(message)
        self.problem = problem
        """The same as a problem at a line of the lock, as `lint` reports it, where it
        was made so (`at`)."""

    @classmethod
    def at(cls, path: str, line: int, message: str) -> LockError:
        """The error `message` at `line` of the lock at `path` (0: the whole file)."""
        problem = Diagnostic(path, line, "error", message)
        return cls(f"{path}:{line}: {message}" if line else f"{path}: {message}", problem)


WORKER_DIED = "a worker process ended before it gave its results (killed, or out of memory?)"


class WorkerDied(AnkigenError):
    """A worker process ended before it gave a task's result (killed, or out of memory):
    the command stops before it writes anything."""

    def __init__(self, message: str = WORKER_DIED) -> None:
        super().__init__(message)


class OutputError(AnkigenError):
    """A package or the lock file could not be written."""
