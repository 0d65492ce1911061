"""`ankigen build` itself, for both of its callers: the quick path (`quick`), which
answers its plainest forms before click is loaded, and the command line's `build`
(`commands.build`), which parses every other form. The two differ only in who read
the arguments."""

from __future__ import annotations

from pathlib import Path

from ankigen.bank.project import outside_project
from ankigen.builder import replay
from ankigen.builder.pipeline import build
from ankigen.builder.result import Watched
from ankigen.cli.output import build_lines, media_line
from ankigen.cli.plain import terminal_progress, write_lines
from ankigen.images.settings import Settings


def build_command(
    banks: Path,
    out: Path,
    as_json: bool = False,
    media: Path | None = None,
    max_image_size: int = 1600,
    prune: bool = False,
) -> None:
    """`ankigen build`: check BANKS, write a package per bank into OUT, print the report."""
    if media is not None and outside_project(banks, media):
        write_lines([media_line(media)])
    result = build(
        banks,
        out,
        progress=terminal_progress(),
        media_dir=media,
        image_settings=Settings(max_side=max_image_size),
        prune=prune,
    )
    if result.watched is not None:
        _record_replay(banks, out, result.watched)
    write_lines(build_lines(result, out, as_json))


def _record_replay(banks: Path, out: Path, watched: Watched) -> None:
    """What the next build prints if it has nothing to do, in both forms `quick` replays
    (`builder.replay`)."""
    outputs = {
        form: [[line.text, line.to_stderr] for line in build_lines(watched.unchanged, out, as_json)]
        for form, as_json in (("plain", False), ("json", True))
    }
    replay.record(str(banks), str(out), watched.banks, watched.files, outputs)
