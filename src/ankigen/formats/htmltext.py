"""HTML from an LMS reduced to bank text, and bank text written as HTML.

Bank text is text with a few inline tags (`ankigen.text.html`). From HTML we keep
the text, those tags (`<strong>` and `<em>` become `<b>` and `<i>`), line
breaks for `<br>` and block ends, and the images (`<img>` is reported to the
caller, which decides what to do with it; so is an inline `<svg>` picture, whose
shapes and labels are no text). Scripts and styles are dropped with
their content; every other tag is dropped and its text kept. Text is text: what
the HTML shows as characters (`&lt;b&gt;`) is written so that the card shows
those characters (`ankigen.text.html.literal`), never as a tag.
"""

from __future__ import annotations

import base64
import binascii
import html
import re
import urllib.parse
from dataclasses import dataclass
from html.parser import HTMLParser

from ankigen.text import markup
from ankigen.text.html import INLINE_TAGS, inline_html, literal
from ankigen.text.markup import lexer

_ALIASES = {"strong": "b", "em": "i", "tt": "code", "kbd": "code", "samp": "code"}
_BLOCKS = frozenset(
    "p div li ul ol h1 h2 h3 h4 h5 h6 tr table blockquote pre section article "
    "header footer figure figcaption dl dt dd hr".split()
)
_PLAYED = frozenset({"audio", "video", "source", "embed", "iframe", "object", "track"})
_DROPPED_WITH_CONTENT = frozenset({"script", "style", "template", "noscript", "head", "title"})
# white space that comes from the HTML source's layout: a run holding a line break
_LAYOUT_SPACE = re.compile(r"[ \t\r\f\v]*\n[ \t\n\r\f\v]*")
_LAYOUT = "\x01"  # where layout space was, until we know whether it touches a line break


@dataclass(frozen=True)
class Image:
    src: str
    alt: str

    @property
    def inline(self) -> bool:
        """The picture is written into the text itself (`src="data:..."`), as editors
        paste one."""
        return self.src[:5].lower() == "data:"

    @property
    def shown(self) -> str:
        """`src` for a message: an inline picture by its type, not its kilobytes."""
        return self.src.partition(",")[0] + ",..." if self.inline else self.src

    def inline_bytes(self) -> tuple[str, bytes] | None:
        """An inline picture's media type and bytes (RFC 2397: base64 or percent-encoded);
        None for one that is not a well-formed `data:` URL."""
        head, comma, body = self.src[5:].partition(",")
        if not comma:
            return None
        media_type, *parameters = head.split(";")
        try:
            if "base64" in (p.strip().lower() for p in parameters):
                data = base64.b64decode("".join(body.split()), validate=True)
            else:
                data = urllib.parse.unquote_to_bytes(body)
        except (binascii.Error, ValueError):
            return None
        return media_type.strip().lower() or "text/plain", data


@dataclass(frozen=True)
class Link:
    """What a text links to or plays, which bank text cannot carry: `<a href>`, or the
    source of an `<audio>`, `<video>`, `<source>`, `<embed>`, `<iframe>` or `<object>`."""

    target: str
    kind: str
    """"link", or the tag that plays it."""

    def lost(self, name: str = "") -> str:
        """The warning that says it is lost; `name`: the file's name, if embedded."""
        what = "linked" if self.kind == "link" else f"played by <{self.kind}>"
        return (
            f"{name or self.target!r}, {what} in this text, is lost: a bank text carries no "
            "links, sound or video (the words around it stay)"
        )


@dataclass(frozen=True)
class Converted:
    text: str
    images: tuple[Image, ...]
    dropped: tuple[str, ...]
    """Tags whose content was dropped (scripts, styles), for a warning."""
    links: tuple[Link, ...] = ()
    flattened: tuple[str, ...] = ()
    """"list" and "table", where the text has one: written as lines, for a warning."""
    drawings: int = 0
    """Inline `<svg>` pictures, dropped with their content: a bank text holds images
    only as files."""

    @property
    def pictures(self) -> int:
        """The pictures in the text: images and inline drawings."""
        return len(self.images) + self.drawings

    def losses(self) -> list[str]:
        """Warnings for what the text lost on its way: scripts and styles, and the
        structure of lists and tables (links: see `Link.lost`)."""
        found = []
        if self.dropped:
            names = ", ".join(sorted(set(self.dropped)))
            found.append(f"dropped <{names}> and its content from the text")
        if "list" in self.flattened:
            found.append("a list became lines starting with • or its numbers")
        if "table" in self.flattened:
            found.append("a table became lines of text, its cells separated by ' | '")
        return found


_FENCE = "```"
_BACKTICKS = re.compile("`+")


class _Reducer(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.images: list[Image] = []
        self.links: list[Link] = []
        self.dropped: list[str] = []
        self.flattened: set[str] = set()
        self._skip = 0
        self._pre = 0
        self._fence_at = -1  # the part that opens the code block, to name its language
        self._lists: list[list[int]] = []  # per open list: [next number], or [] unnumbered
        self._cells = 0  # cells begun in the current table row
        self._in_cell = 0  # open table cells: a row is one line, so a break there is a space
        self.drawings = 0
        self._svg = 0  # depth inside an inline <svg>: its content is the picture's

    def _break(self) -> None:
        self.parts.append("\x00")  # a block boundary, resolved into line breaks later

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._svg or (tag == "svg" and not self._skip):
            self.drawings += not self._svg
            self._svg += tag == "svg"
            return
        if tag in _DROPPED_WITH_CONTENT:
            self._skip += 1
            self.dropped.append(tag)
            return
        if self._skip:
            return
        name = _ALIASES.get(tag, tag)
        values = dict(attrs)
        if self._pre:
            self._open_in_code(name, tag, values)
        elif name == "br":
            # an editor's `<td>1 kg<br></td>` would break the row across lines
            self.parts.append(_LAYOUT if self._in_cell else "\n")
        elif name == "img":
            self.images.append(Image(values.get("src") or "", (values.get("alt") or "").strip()))
        elif name in _PLAYED or name == "a":
            target = values.get("href" if name == "a" else "data" if name == "object" else "src")
            if target and target.strip():
                self.links.append(Link(target.strip(), "link" if name == "a" else name))
        elif name in INLINE_TAGS:
            self.parts.append(f"<{name}>")
        else:
            self._open_block(tag, values)

    def _open_in_code(self, name: str, tag: str, values: dict[str, str | None]) -> None:
        # a code block is text: only its line breaks and its language count
        if name == "br":
            self.parts.append("\n")
        elif tag == "code" and self._fence_at >= 0:
            self.parts[self._fence_at] = _FENCE + _language(values.get("class") or "")

    def _fence_around(self, code: list[str]) -> str:
        """The fence of the code block just read, longer than any run of backticks in it
        (code about Markdown shows fences: a line of three would end a block of three),
        set on its opening line too."""
        if self._fence_at < 0:
            return _FENCE
        longest = max((len(run) for run in _BACKTICKS.findall("".join(code))), default=0)
        fence = "`" * max(len(_FENCE), longest + 1)
        self.parts[self._fence_at] = fence + self.parts[self._fence_at].lstrip("`")
        return fence

    def _open_block(self, tag: str, values: dict[str, str | None]) -> None:
        if tag == "pre":
            self._pre += 1
            self._break()
            self._fence_at = len(self.parts)
            self.parts += [_FENCE, "\n"]
        elif tag in ("ul", "ol"):
            self.flattened.add("list")
            self._lists.append([_start(values.get("start"))] if tag == "ol" else [])
            self._break()
        elif tag == "li":
            self._break()
            numbered = self._lists[-1] if self._lists else []
            if numbered:
                self.parts.append(f"{numbered[0]}. ")
                numbered[0] += 1
            else:
                self.parts.append("• ")
        elif tag in ("td", "th"):
            self.flattened.add("table")
            if self._cells:
                self.parts.append(" | ")
            self._cells += 1
            self._in_cell += 1
        elif tag in _BLOCKS:
            if tag == "tr":
                self._cells = 0
            self._break()

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._svg:
            return
        if tag == "svg" and not self._skip:
            self.drawings += 1  # `<svg .../>`: a picture with nothing in it, still not text
        elif tag in ("br", "img", "code") or tag in _PLAYED or tag == "a":
            self.handle_starttag(tag, attrs)
        elif tag in _BLOCKS:
            self._break()

    def handle_endtag(self, tag: str) -> None:
        if self._svg:
            self._svg -= tag == "svg"
            return
        if tag in _DROPPED_WITH_CONTENT:
            self._skip = max(0, self._skip - 1)
            return
        if self._skip or (self._pre and tag != "pre"):
            return
        name = _ALIASES.get(tag, tag)
        if name in INLINE_TAGS and name != "br":
            self.parts.append(f"</{name}>")
        elif tag == "pre":
            self._pre = max(0, self._pre - 1)
            if self.parts and not self.parts[-1].endswith("\n"):
                self.parts.append("\n")
            self.parts.append(self._fence_around(self.parts[self._fence_at + 2 :]))
            self._fence_at = -1
            self._break()
        elif tag in ("ul", "ol"):
            if self._lists:
                self._lists.pop()
            self._break()
        elif tag in ("td", "th"):
            self._in_cell = max(0, self._in_cell - 1)
        elif tag in _BLOCKS:
            if tag in ("tr", "table"):
                self._in_cell = 0  # a cell left open (HTML lets `</td>` go unsaid) ends here
            self._break()

    def handle_data(self, data: str) -> None:
        if self._skip or self._svg:
            return
        if self._pre:
            self.parts.append(data)  # code is shown as written, entities and all
            return
        data = _LAYOUT_SPACE.sub(_LAYOUT, data)
        self.parts.append(literal(data))


def _language(classes: str) -> str:
    """The language of `<code class="language-python">` (Markdown's spelling) or
    `class="python"`, if ankigen highlights it; else none."""
    for name in classes.split():
        name = name.removeprefix("language-").removeprefix("lang-")
        if name and lexer(name) is not None:
            return name
    return ""


def _start(value: str | None) -> int:
    try:
        return int(value or 1)
    except ValueError:
        return 1


def html_to_text(markup: str) -> Converted:
    """Bank text from HTML: see the module's description."""
    if "<" not in markup and "&" not in markup:
        # no tag and no entity (most texts of a GIFT file): only the source's layout space
        # to undo, as the reducer below would; 28 us a text saved, 3 s of 20,000 questions
        return Converted(_LAYOUT_SPACE.sub(" ", markup).strip(), (), ())
    return reduced(markup)


def reduced(markup: str) -> Converted:
    """`html_to_text` by the reducer, whatever the markup."""
    reducer = _Reducer()
    reducer.feed(markup)
    reducer.close()
    text = "".join(reducer.parts)
    # layout space next to a break is nothing; elsewhere it is one space
    text = re.sub(r"\x01+(?=[\n\x00])|(?<=[\n\x00])\x01+", "", text)
    text = re.sub(r" *\x01[ \x01]*", " ", text)
    # block boundaries: one line break between blocks, none at the ends
    text = re.sub(r"\s*\x00[\s\x00]*", "\n", text).strip()
    return Converted(
        text,
        tuple(reducer.images),
        tuple(reducer.dropped),
        tuple(reducer.links),
        tuple(sorted(reducer.flattened)),
        reducer.drawings,
    )


_DOLLAR_MATH = re.compile(r"\$\$(?=\S)(.+?)(?<=\S)\$\$", re.DOTALL)


def tex_delimiters(text: str) -> str:
    """Moodle's TeX and MathJax filters typeset `$$...$$` as display math; Anki's MathJax
    reads only `\\(...\\)` and `\\[...\\]`: such formulas are written with the latter."""
    return _DOLLAR_MATH.sub(lambda m: f"\\[{m[1]}\\]", text) if "$$" in text else text


def text_to_html(text: str) -> str:
    """Bank text as HTML for an LMS: escaped, inline tags kept, `<br>` for line breaks, and
    a fenced code block as `<pre><code>` (its language as the class the import reads), not
    its backticks, which Moodle showed as they are, the code's indentation collapsed."""
    if markup.FENCE not in text:
        return inline_html(text)
    parts = []
    for segment in markup.segments(text):
        if segment.language is None:
            parts.append(inline_html(segment.text))
            continue
        language = f' class="language-{html.escape(segment.language)}"' if segment.language else ""
        code = html.escape(segment.text, quote=False).replace("\n", "<br>")
        parts.append(f"<pre><code{language}>{code}</code></pre>")
    return "".join(parts)


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
        # Moodle renders Markdown Extra: fenced code blocks and tables are Markdown there
        rendered = markdown.markdown(source, extensions=["fenced_code", "tables"])
    except RecursionError:
        raise MarkdownProblem("a Markdown text nested too deep to render") from None
    return html_to_text(rendered)
