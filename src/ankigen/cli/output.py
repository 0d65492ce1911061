"""What `ankigen build` prints about a build, as lines for standard output or error.

Written without click, so that a build with nothing to do can print it before the
command line is loaded (`quick`); `cli` echoes the same lines."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

TYPE_CHECKING = False  # as typing's, without importing typing (see `errors`)
if TYPE_CHECKING:
    from ankigen.build.result import BuildResult


@dataclass(frozen=True)
class Line:
    text: str
    to_stderr: bool = False


def count(number: int, word: str) -> str:
    return f"{number} {word}{'' if number == 1 else 's'}"


def warning_summary(warnings: int) -> str | None:
    if not warnings:
        return None
    return f"{count(warnings, 'warning')} in the banks; 'ankigen lint' lists them"


def build_lines(result: BuildResult, out: Path, as_json: bool) -> list[Line]:
    """The notices (standard error), then each deck or the JSON report (standard output)."""
    summary = warning_summary(len(result.warnings))
    lines = [Line(summary, True)] if summary else []
    lines += [Line(f"pruned deck {key!r} from the lock", True) for key in result.pruned]
    lines += [Line(str(change), True) for change in result.changes]
    if as_json:
        import json

        decks = [d.as_json() | {"path": str(out / d.path)} for d in result.decks]
        return [*lines, Line(json.dumps({"decks": decks}, indent=1))]
    for deck in result.decks:
        if not deck.written:
            lines.append(
                Line(
                    f"up to date {out / deck.path}: {count(deck.notes, 'note')}, "
                    f"version {deck.version}"
                )
            )
            continue
        retired = f", {deck.retired} retired" if deck.retired else ""
        lines.append(
            Line(
                f"wrote {out / deck.path}: {count(deck.notes, 'note')} "
                f"({deck.new} new, {deck.changed} changed, {deck.unchanged} unchanged, "
                f"{deck.removed} removed{retired}), version {deck.version}"
            )
        )
    return lines
