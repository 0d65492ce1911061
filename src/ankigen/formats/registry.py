"""The formats by name: the module of each, which can be written, and which one a file
is in (`detect`).

Adding a format is one new module defining `FORMAT` and one line in `_MODULES`.
"""

from __future__ import annotations

import importlib
from functools import cache
from pathlib import PurePath

from ankigen.formats.model import Format, FormatError

# the registry: module names under ankigen.formats, in the order --from lists them
_MODULES = (
    "page",
    "gift",
    "aiken",
    "moodle_xml",
    "csv",
    "apkg",
)


@cache
def formats() -> dict[str, Format]:
    """Every format by its name."""
    found = {}
    for module in _MODULES:
        fmt: Format = importlib.import_module(f"ankigen.formats.{module}").FORMAT
        found[fmt.name] = fmt
    return found


def names() -> list[str]:
    return list(formats())


def writable() -> list[str]:
    return [name for name, fmt in formats().items() if fmt.write is not None]


def get(name: str) -> Format:
    try:
        return formats()[name]
    except KeyError:
        raise FormatError(f"unknown format {name!r}; known: {', '.join(names())}") from None


def detect(path: str, data: bytes) -> tuple[Format, str]:
    """The format of a file from its extension and content, and why it was chosen."""
    head = data[:65536].decode("utf-8", "replace").removeprefix("\ufeff")
    suffix = PurePath(path).suffix.lower()
    scores = {name: fmt.sniff(head) for name, fmt in formats().items()}
    by_extension = [name for name, fmt in formats().items() if suffix in fmt.extensions]
    best = max(scores, key=lambda name: scores[name])
    if len(by_extension) == 1:
        name = by_extension[0]
        # the extension wins unless the content plainly says another format
        if scores[best] >= 90 and scores[name] < 90 and best != name:
            return formats()[best], f"its content, though its extension is {suffix}"
        return formats()[name], f"its extension {suffix}"
    return formats()[best], "its content"
