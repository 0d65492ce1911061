"""HTML from an LMS reduced to bank text, and bank text written as HTML.

Bank text is text with a few inline tags (`ankigen.text.html`). From HTML we keep
the text, those tags (`<strong>` and `<em>` become `<b>` and `<i>`), line
breaks for `<br>` and block ends, and the images (`<img>` is reported to the
caller, which decides what to do with it). Scripts and styles are dropped with
their content; every other tag is dropped and its text kept. Text is text: what
the HTML shows as characters (`&lt;b&gt;`) is written so that the card shows
those characters (`ankigen.text.html.literal`), never as a tag.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser

from ankigen.text.html import INLINE_TAGS, inline_html, literal

_ALIASES = {"strong": "b", "em": "i", "tt": "code", "kbd": "code", "samp": "code"}
_BLOCKS = frozenset(
    "p div li ul ol h1 h2 h3 h4 h5 h6 tr table blockquote pre section article "
    "header footer figure figcaption dl dt dd hr".split()
)
_DROPPED_WITH_CONTENT = frozenset({"script", "style", "template", "noscript", "head", "title"})
# white space that comes from the HTML source's layout: a run holding a line break
_LAYOUT_SPACE = re.compile(r"[ \t\r\f\v]*\n[ \t\n\r\f\v]*")
_LAYOUT = "\x01"  # where layout space was, until we know whether it touches a line break


@dataclass(frozen=True)
class Image:
    src: str
    alt: str


@dataclass(frozen=True)
class Converted:
    text: str
    images: tuple[Image, ...]
    dropped: tuple[str, ...]
    """Tags whose content was dropped (scripts, styles), for a warning."""


class _Reducer(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.images: list[Image] = []
        self.dropped: list[str] = []
        self._skip = 0
        self._pre = 0

    def _break(self) -> None:
        self.parts.append("\x00")  # a block boundary, resolved into line breaks later

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _DROPPED_WITH_CONTENT:
            self._skip += 1
            self.dropped.append(tag)
            return
        if self._skip:
            return
        name = _ALIASES.get(tag, tag)
        if name == "br":
            self.parts.append("\n")
        elif name == "img":
            values = dict(attrs)
            self.images.append(Image(values.get("src") or "", (values.get("alt") or "").strip()))
        elif name in INLINE_TAGS:
            self.parts.append(f"<{name}>")
        elif tag in _BLOCKS:
            if tag == "pre":
                self._pre += 1
            self._break()

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("br", "img"):
            self.handle_starttag(tag, attrs)
        elif tag in _BLOCKS:
            self._break()

    def handle_endtag(self, tag: str) -> None:
        if tag in _DROPPED_WITH_CONTENT:
            self._skip = max(0, self._skip - 1)
            return
        if self._skip:
            return
        name = _ALIASES.get(tag, tag)
        if name in INLINE_TAGS and name != "br":
            self.parts.append(f"</{name}>")
        elif tag in _BLOCKS:
            if tag == "pre":
                self._pre = max(0, self._pre - 1)
            self._break()

    def handle_data(self, data: str) -> None:
        if self._skip:
            return
        if not self._pre:
            data = _LAYOUT_SPACE.sub(_LAYOUT, data)
        self.parts.append(literal(data))


def html_to_text(markup: str) -> Converted:
    """Bank text from HTML: see the module's description."""
    reducer = _Reducer()
    reducer.feed(markup)
    reducer.close()
    text = "".join(reducer.parts)
    # layout space next to a break is nothing; elsewhere it is one space
    text = re.sub(r"\x01+(?=[\n\x00])|(?<=[\n\x00])\x01+", "", text)
    text = re.sub(r" *\x01[ \x01]*", " ", text)
    # block boundaries: one line break between blocks, none at the ends
    text = re.sub(r"\s*\x00[\s\x00]*", "\n", text).strip()
    return Converted(text, tuple(reducer.images), tuple(reducer.dropped))


def text_to_html(text: str) -> str:
    """Bank text as the HTML a card shows: escaped, inline tags kept, `<br>` for line breaks."""
    return inline_html(text)


MAX_MARKDOWN = 32 * 1024
"""Longest Markdown text rendered: Python-Markdown's time grows faster than linearly with
list nesting (4 MB of nested list took over a minute), and no question is this long."""


class MarkdownProblem(Exception):
    """A Markdown text too long or nested too deep to render."""


def markdown_to_text(source: str) -> Converted:
    """Markdown (GIFT `[markdown]`, Moodle `format="markdown"`) rendered, then reduced;
    MarkdownProblem if it is too long or nested too deep."""
    import markdown

    if len(source) > MAX_MARKDOWN:
        raise MarkdownProblem(
            f"a Markdown text of {len(source):,} characters; at most {MAX_MARKDOWN:,} are read"
        )
    try:
        rendered = markdown.markdown(source)
    except RecursionError:
        raise MarkdownProblem("a Markdown text nested too deep to render") from None
    return html_to_text(rendered)
