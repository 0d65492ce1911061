"""One exception hierarchy; every error a user can cause is an AnkigenError."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import IO, Any, Literal

import click

Severity = Literal["error", "warning"]


@dataclass(frozen=True, order=True)
class Diagnostic:
    """One problem at one line of one file."""

    path: str
    line: int
    severity: Severity
    message: str

    def __str__(self) -> str:
        # line 0: a problem with the file itself (its name, its type), not a line in it
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.severity}: {self.message}"


class AnkigenError(click.ClickException):
    """Base class: a clear message and exit status 1, never a traceback."""

    exit_code = 1

    def format_message(self) -> str:
        return f"error: {self.message}"

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo(self.format_message(), err=True, file=file)


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


class OutputError(AnkigenError):
    """A package or the lock file could not be written."""
