"""Lines onto standard output and error, as click's echo would print them, for the
commands that print before click is loaded or without it (`quick`, `plain`)."""

from __future__ import annotations

import sys


def plain_stream(text: str, to_stderr: bool) -> object | None:
    """The stream a line goes to, if it can take the line as it is; None when only
    click's echo can print it: a line with an escape code (which echo strips from a
    file), or text the stream cannot encode (which echo writes as UTF-8)."""
    stream = sys.stderr if to_stderr else sys.stdout
    if stream is None or "\x1b" in text:
        return None
    encoding = getattr(stream, "encoding", None) or "utf-8"
    try:
        text.encode(encoding, getattr(stream, "errors", None) or "strict")
    except (UnicodeEncodeError, LookupError):
        return None
    return stream


def write_plain(stream: object, text: str) -> None:
    stream.write(text + "\n")  # type: ignore[attr-defined]
    stream.flush()  # type: ignore[attr-defined]
