"""`ankigen build` with nothing to do, answered before the command line is loaded.

Loading click takes longer than the rest of such a build (35 to 60 ms of 90), and a
build with nothing changed is what editors' save hooks, `make` and CI run most. Only
the plainest forms are answered here, and only when the banks' statuses show that
nothing changed (`build.pipeline.unchanged_build`); anything else, including every error, goes
to the command line, which decides it again as if this had not looked.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class BuildArgs:
    banks: Path
    out: Path
    as_json: bool


def build_args(argv: Sequence[str]) -> BuildArgs | None:
    """`build [BANKS] [-o OUT] [--json]` as click parses it, or None for anything else."""
    if not argv or argv[0] != "build":
        return None
    banks: str | None = None
    out: str | None = None
    as_json = False
    rest = list(argv[1:])
    while rest:
        arg = rest.pop(0)
        value: str | None = None
        if arg in ("-o", "--out"):
            value = rest.pop(0) if rest else None
        elif arg.startswith("--out="):
            value = arg.removeprefix("--out=")
        elif arg.startswith("-o") and not arg.startswith("--"):
            value = arg.removeprefix("-o")
        elif arg == "--json" and not as_json:
            as_json = True
            continue
        elif not arg.startswith("-") and banks is None:
            banks = arg
            continue
        else:
            return None
        # an option given twice, or a value click might read otherwise: click decides
        if out is not None or not value or value.startswith("-"):
            return None
        out = value
    if banks == "" or "\0" in (banks or "") + (out or ""):
        return None
    return BuildArgs(Path(banks or "banks"), Path(out or "out"), as_json)


def answer(argv: Sequence[str]) -> int | None:
    """Print what `ankigen build` would print, if it would change nothing and that is
    known without loading the command line, and return its exit status; else None."""
    args = build_args(argv)
    if args is None:
        return None
    # only once the arguments are the plainest: anything else goes to click at once
    from ankigen.build.pipeline import unchanged_build
    from ankigen.cli.output import build_lines

    try:
        result = unchanged_build(args.banks, args.out)
    except Exception:  # an error or a bug: the command line meets it again and reports it
        return None
    if result is None:
        return None
    lines = [
        (sys.stderr if line.to_stderr else sys.stdout, line.text)
        for line in build_lines(result, args.out, args.as_json)
    ]
    for stream, text in lines:
        # click's echo would strip escape codes or replace what the stream cannot encode
        if stream is None or "\x1b" in text or not _encodes(text, stream):
            return None
    try:
        for stream, text in lines:
            stream.write(text + "\n")
            stream.flush()
    except OSError as exc:  # a closed pipe: as the command line reports it
        print(f"error: {exc.strerror or exc}", file=sys.stderr)
        return 1
    return 0


def _encodes(text: str, stream: object) -> bool:
    encoding = getattr(stream, "encoding", None) or "utf-8"
    try:
        text.encode(encoding, getattr(stream, "errors", None) or "strict")
    except (UnicodeEncodeError, LookupError):
        return False
    return True
