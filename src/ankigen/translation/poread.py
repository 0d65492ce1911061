"""Reading a PO file as gettext reads it: in the charset its header names, each string
closed on its line, line breaks other than \\n kept inside strings."""

from __future__ import annotations

import codecs
import hashlib
import re
from pathlib import Path

import polib

from ankigen.core.errors import AnkigenError


class PoError(AnkigenError):
    """A PO file cannot be read or does not fit the banks."""


BANK_TEXT = "bank text: "
"""The extracted comment that records the digest of the bank's text when the entry was
made: an import never writes older PO text over a newer edit made in the bank since."""


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def recorded_digest(entry: polib.POEntry) -> str | None:
    for line in (entry.comment or "").splitlines():
        if line.startswith(BANK_TEXT):
            return line.removeprefix(BANK_TEXT).strip()
    return None


def parse_po(shown: str, data: bytes) -> polib.POFile:
    charset = _charset(data)
    try:
        text = data.decode(charset)
    except UnicodeError as exc:
        raise PoError(f"{shown}: not a readable PO file: {exc}") from None
    _check_strings(shown, text)
    # polib splits lines as str.splitlines, at U+2028, U+0085 ... too, which gettext
    # keeps inside a string: held apart while it parses
    hidden = {c: chr(0xF0000 + n) for n, c in enumerate(_OTHER_BREAKS) if c in text}
    for char, stand_in in hidden.items():
        text = text.replace(char, stand_in)
    try:
        po = polib.pofile(text, encoding="utf-8", wrapwidth=0)
    except (OSError, ValueError) as exc:
        raise PoError(f"{shown}: not a readable PO file: {exc}") from None
    for entry in po if hidden else ():
        for attribute in ("msgid", "msgstr", "msgctxt", "tcomment", "comment"):
            value = getattr(entry, attribute)
            for char, stand_in in hidden.items():
                value = value.replace(stand_in, char) if value else value
            setattr(entry, attribute, value)
    return po


_CHARSET = re.compile(rb'^"Content-Type:[^"\n]*charset=([A-Za-z0-9_.:-]+)', re.MULTILINE)


def _charset(data: bytes) -> str:
    """The encoding the header's Content-Type names (gettext reads a file so: an older
    tool's ISO-8859-1), if Python knows it as a text encoding and the file is not UTF-8;
    else UTF-8 (a template's `CHARSET`, none)."""
    declared = _CHARSET.search(data[:4096])
    if declared is None:
        return "utf-8"
    try:
        data.decode("utf-8")
        return "utf-8"  # a header that says otherwise is wrong: Latin-1 text is seldom UTF-8
    except UnicodeDecodeError:
        pass
    try:
        codec = codecs.lookup(declared[1].decode("ascii"))
    except LookupError:
        return "utf-8"
    # `base64`, `rot13`, `zlib` are codecs too, but not of text
    return codec.name if getattr(codec, "_is_text_encoding", True) else "utf-8"


# what str.splitlines breaks at beyond \n and \r; a PO string holds them as they are
_OTHER_BREAKS = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_OPEN_STRING = re.compile(
    r'^\s*(?:#~\s*)?(?:(?:msgid|msgid_plural|msgctxt|msgstr(?:\[\d+\])?)\s+)?"'
)
_CLOSED = re.compile(r'(?<!\\)(?:\\\\)*"\s*$')


def _check_strings(shown: str, text: str) -> None:
    """Each string of the file closed on its line, as gettext requires (`msgfmt`: "end
    of file within string"): a file cut short is refused, not half a sentence written."""
    for number, line in enumerate(text.split("\n"), start=1):
        opened = _OPEN_STRING.match(line)
        if opened and not _CLOSED.search(line[opened.end() :]):
            raise PoError(
                f"{shown}:{number}: error: a string is not closed (is the file cut short?)"
            )


def read_po(path: Path) -> polib.POFile:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise PoError(f"{path}: cannot read: {exc.strerror}") from None
    return parse_po(str(path), data)
