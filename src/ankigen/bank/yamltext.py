"""Text written as YAML the way a bank holds it: the one quoting every writer of bank
YAML uses (a new bank, `formats.bankyaml`; texts replaced in place, `bank.texts`)."""

from __future__ import annotations


def _needs_escape(code: int) -> bool:
    """Characters YAML would not keep as written: controls, line separators, BOM, surrogates."""
    return (
        code < 0x20
        or 0x7F <= code <= 0x9F
        or code in (0x2028, 0x2029, 0xFEFF, 0xFFFE, 0xFFFF)
        or 0xD800 <= code <= 0xDFFF
    )


def yaml_string(text: str) -> str:
    """A YAML double-quoted scalar holding exactly `text`."""
    out = ['"']
    for char in text:
        code = ord(char)
        if char == '"':
            out.append('\\"')
        elif char == "\\":
            out.append("\\\\")
        elif char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif _needs_escape(code):
            out.append(f"\\u{code:04x}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)
