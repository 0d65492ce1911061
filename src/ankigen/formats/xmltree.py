"""Safe XML with line numbers, as far as the Moodle XML importer needs it: DTDs, external
entities and entity bombs refused (defusedxml), each element with its line."""

from __future__ import annotations

import re
import xml.sax
from dataclasses import dataclass, field

import defusedxml
import defusedxml.sax

from ankigen.formats.model import (
    MAX_FILE_BYTES,
    fatal,
)


@dataclass
class Node:
    """An XML element with its line, as far as this importer needs one."""

    tag: str
    attrs: dict[str, str]
    line: int
    children: list[Node] = field(default_factory=list)
    parts: list[str] = field(default_factory=list)

    @property
    def content(self) -> str:
        return "".join(self.parts)

    def child(self, tag: str) -> Node | None:
        return next((c for c in self.children if c.tag == tag), None)

    def all(self, tag: str) -> list[Node]:
        return [c for c in self.children if c.tag == tag]

    def text_of(self, tag: str) -> str:
        """`<tag><text>...</text></tag>`, trimmed as Moodle does; '' when absent."""
        node = self.child(tag)
        if node is None:
            return ""
        text = node.child("text")
        return (text.content if text is not None else node.content).strip()


# expat's words for a document that stops before its end; and for a CDATA section no
# `]]>` closes, said at the end too, though it is mostly a `]]>` mistyped
_CUT_SHORT = ("no element found", "unclosed token")
_UNCLOSED_CDATA = "unclosed CDATA section"


def _unclosed_cdata_line(data: bytes) -> int | None:
    """The line of the `<![CDATA[` that no `]]>` closes, read as XML reads them."""
    start = data.find(b"<![CDATA[")
    while start >= 0:
        end = data.find(b"]]>", start + 9)
        if end < 0:
            return data[:start].count(b"\n") + 1
        start = data.find(b"<![CDATA[", end + 3)
    return None


def _not_well_formed(error: xml.sax.SAXParseException) -> str:
    """What expat found, where in the line, and what usually causes it."""
    message = error.getMessage()
    if message == _UNCLOSED_CDATA:
        return (
            "a CDATA section is not closed: no ']]>' after this '<![CDATA[' (or the file is "
            "cut short)"
        )
    if message in _CUT_SHORT:
        return f"not well-formed XML ({message}); is the file truncated?"
    at = f"not well-formed XML at column {(error.getColumnNumber() or 0) + 1}"
    if message == "not well-formed (invalid token)":
        return (
            f"{at}: a character XML does not allow there (an attribute's value without "
            "quotes, or one not closed? a bare & or < in text, which XML writes &amp; and "
            "&lt;?)"
        )
    if message == "mismatched tag":
        return f"{at}: this closing tag is not that of the element open here"
    return f"{at} ({message})"


class _TreeBuilder(xml.sax.handler.ContentHandler):
    def __init__(self) -> None:
        super().__init__()
        self.root: Node | None = None
        self.stack: list[Node] = []
        self.locator: xml.sax.xmlreader.Locator | None = None

    def setDocumentLocator(self, locator: xml.sax.xmlreader.Locator) -> None:
        self.locator = locator

    def startElement(self, name: str, attrs: xml.sax.xmlreader.AttributesImpl) -> None:
        line = self.locator.getLineNumber() if self.locator is not None else 1
        node = Node(name, dict(attrs), line or 1)
        if self.stack:
            self.stack[-1].children.append(node)
        else:
            self.root = node
        self.stack.append(node)

    def endElement(self, name: str) -> None:
        self.stack.pop()

    def characters(self, content: str) -> None:
        if self.stack:
            self.stack[-1].parts.append(content)


def parse_xml(path: str, data: bytes) -> Node:
    """The document's tree; any DTD, entity or malformed XML is an error at its line."""
    if len(data) > MAX_FILE_BYTES:
        raise fatal(path, 1, f"{len(data)} bytes is too large for a Moodle XML file")
    if not data.strip():
        raise fatal(path, 1, "the file is empty")
    builder = _TreeBuilder()
    try:
        defusedxml.sax.parseString(data, builder, forbid_dtd=True)
    except defusedxml.DTDForbidden:
        line = _line_of_bytes(data, b"<!DOCTYPE")
        raise fatal(
            path,
            line,
            "the file has a DTD (<!DOCTYPE ...>); Moodle XML has none, and ankigen "
            "refuses DTDs because their entities can read local files or expand without end",
        ) from None
    except (defusedxml.EntitiesForbidden, defusedxml.ExternalReferenceForbidden):
        line = _line_of_bytes(data, b"<!ENTITY")
        raise fatal(
            path,
            line,
            "the file declares XML entities; ankigen refuses them "
            "(they can read local files or expand without end)",
        ) from None
    except xml.sax.SAXParseException as error:
        line = error.getLineNumber() or 1
        if error.getMessage() == _UNCLOSED_CDATA:  # expat says so at the end
            line = _unclosed_cdata_line(data) or line
        raise fatal(path, line, _not_well_formed(error)) from None
    except (LookupError, ValueError):  # UnicodeError too: an encoding expat can't read
        declared = re.match(rb"\s*<\?xml[^>]*encoding=[\"']([^\"']*)", data)
        if declared is None:
            raise  # not the encoding: a bug, reported as one
        name = declared[1].decode("ascii", "replace")
        raise fatal(
            path,
            1,
            f"the file declares the encoding {name!r}, which can't be read; save it as UTF-8",
        ) from None
    if builder.root is None:
        raise fatal(path, 1, "no XML element found")
    return builder.root


def _line_of_bytes(data: bytes, needle: bytes) -> int:
    at = data.find(needle)
    return data[:at].count(b"\n") + 1 if at >= 0 else 1
