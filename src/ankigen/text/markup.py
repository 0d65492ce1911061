"""Code blocks and math in author text: found, checked and turned into safe HTML.

A fenced block (a line of three backticks, optionally followed by a language,
then the code, then a closing line of backticks) is highlighted at build time
by Pygments into spans with class names and the note type's CSS; no script.
MathJax delimiters `\\(...\\)` and `\\[...\\]` are left exactly as written for
the client's MathJax; here they are only checked for balance.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

import nh3

from ankigen.core.errors import Severity
from ankigen.text.html import INLINE_TAGS, anki_markup_as_text, inline_html

if TYPE_CHECKING:
    from pygments.lexer import Lexer

# Pygments is imported where it is used: most texts hold no code, and every
# command (and every build worker) would otherwise pay for importing it at start.

CODE_CLASS = "ag-code"
FENCE = "```"
FENCE_LINE = re.compile(r"^[ \t]*(`{3,})[ \t]*([^`\s]*)[ \t]*$")
"""A fence line: its backticks, then its language (empty on a closing fence). A block
ends at a line of as many backticks or more, so code that shows fences sits in a longer
fence."""
_LANGUAGE = re.compile(r"[\w+#.-]+")
# both light and dark are chosen for contrast on the card's own backgrounds
LIGHT_STYLE = "default"
DARK_STYLE = "github-dark"
_NIGHT = (".nightMode", ".night_mode")


@dataclass(frozen=True)
class Segment:
    """Part of a text: prose (`language` is None) or the body of a fenced code block."""

    text: str
    language: str | None = None
    line: int = 0
    """0-based line of the segment's start within the whole text (the fence line for code)."""
    closed: bool = True


def segments(text: str) -> Iterator[Segment]:
    """Prose and code blocks, in order; the newlines around a fence belong to the fence."""
    if FENCE not in text:
        yield Segment(text)
        return
    lines = text.replace("\r\n", "\n").split("\n")
    prose: list[str] = []
    prose_start = 0
    at = 0
    while at < len(lines):
        opening = FENCE_LINE.match(lines[at])
        if opening is None:
            prose.append(lines[at])
            at += 1
            continue
        if prose:
            yield Segment("\n".join(prose), line=prose_start)
        ticks, language = opening[1], opening[2]
        body: list[str] = []
        end = at + 1
        while end < len(lines):
            closing = FENCE_LINE.match(lines[end])
            if closing is not None and not closing[2] and len(closing[1]) >= len(ticks):
                break
            body.append(lines[end])
            end += 1
        indent = len(lines[at]) - len(lines[at].lstrip())
        yield Segment(
            "\n".join(_dedent(line, indent) for line in body),
            language=language,
            line=at,
            closed=end < len(lines),
        )
        at = end + 1
        prose = []
        prose_start = at
    if prose:
        yield Segment("\n".join(prose), line=prose_start)


def _dedent(line: str, indent: int) -> str:
    # a fence indented inside the text takes its indentation off the code
    head = line[:indent]
    return line[indent:] if not head.strip() else line.lstrip()


def prose(text: str) -> str:
    """The text without its code blocks, inline code and math: what a reader reads as words."""
    if "`" not in text and "\\" not in text and "<" not in text:
        return text  # the common case, on every text of every bank
    parts = [s.text for s in segments(text) if s.language is None]
    joined = "\n".join(parts)
    return _MATH_SPAN.sub(" ", _INLINE_CODE.sub(" ", joined))


# ---- math


_INLINE_CODE = re.compile(r"<code>.*?</code>", re.IGNORECASE | re.DOTALL)
_MATH_SPAN = re.compile(r"\\\((.*?)\\\)|\\\[(.*?)\\\]", re.DOTALL)
_DELIMITER = re.compile(r"\\[()\[\]]")
_CLOSER = {"\\(": "\\)", "\\[": "\\]"}


@dataclass(frozen=True)
class Problem:
    """Something wrong with a text's code or math, at a 0-based line within the text."""

    line: int
    severity: Severity
    message: str


def _math_problems(text: str, first_line: int) -> Iterator[Problem]:
    # MathJax skips <code>: delimiters there are code, not math
    masked = _INLINE_CODE.sub(lambda m: re.sub(r"[^\n]", " ", m[0]), text)
    yield from _macro_problems(masked, first_line)
    open_at: tuple[str, int] | None = None
    for match in _DELIMITER.finditer(masked):
        delimiter = match[0]
        line = first_line + masked.count("\n", 0, match.start())
        if open_at is None:
            if delimiter in _CLOSER:
                open_at = (delimiter, line)
            else:
                yield Problem(line, "error", f"math: {delimiter} closes nothing")
        elif delimiter == _CLOSER[open_at[0]]:
            open_at = None
        else:
            opened, opened_line = open_at
            yield Problem(
                line,
                "error",
                f"math: {delimiter} where {_CLOSER[opened]} should close the {opened} "
                f"opened{_on_line(opened_line, line)}",
            )
            open_at = None
    if open_at is not None:
        opened, opened_line = open_at
        yield Problem(opened_line, "error", f"math: {opened} is never closed by {_CLOSER[opened]}")


# MathJax's html, unicode and require extensions (in Anki's full bundle) turn TeX into
# links, inline styles, classes, ids, data attributes, fonts and loaded code: script
# and overlays on the card. \bbox takes CSS too. Refused whatever their case or the
# space after the backslash, anywhere outside code. The card's script defuses the same
# pattern (notetype fills it in), for notes edited in Anki that never met this check:
# it is written to mean the same in Python's and JavaScript's regular expressions.
UNSAFE_MACRO_PATTERN = (
    r"\\\s*(href|style|class|cssid|unicode|require|data|html|mmltoken|bbox\s*\[[^\]]*[:;])"
)
_UNSAFE_MACRO = re.compile(UNSAFE_MACRO_PATTERN, re.IGNORECASE)


def _macro_problems(masked: str, first_line: int) -> Iterator[Problem]:
    for match in _UNSAFE_MACRO.finditer(masked):
        name = re.sub(r"\s+", "", match[1]).split("[")[0]
        yield Problem(
            first_line + masked.count("\n", 0, match.start()),
            "error",
            f"math: \\{name} is not allowed: MathJax would turn it into a link, a style, "
            "an element or loaded code on the card",
        )


def _on_line(opened: int, here: int) -> str:
    return "" if opened == here else f" {here - opened} line(s) above"


def problems(text: str) -> Iterator[Problem]:
    """Unclosed code blocks, unknown code languages and unbalanced math delimiters."""
    for segment in segments(text):
        if segment.language is None:
            yield from _math_problems(segment.text, segment.line)
            continue
        if not segment.closed:
            yield Problem(segment.line, "error", f"code block opened with {FENCE} is never closed")
        if segment.language and lexer(segment.language) is None:
            yield Problem(
                segment.line,
                "warning",
                f"code block: unknown language {segment.language!r}; shown without highlighting",
            )


# ---- HTML


@cache
def lexer(language: str) -> Lexer | None:
    """Pygments' lexer for a language name or alias such as `python` or `sh`, if it has one."""
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    if not _LANGUAGE.fullmatch(language):
        return None
    try:
        return get_lexer_by_name(language.lower(), stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


_CODE_TAGS = INLINE_TAGS | {"div", "pre", "span"}
_NO_ATTRIBUTES: dict[str, set[str]] = {}


@cache
def _allowed_classes() -> dict[str, set[str]]:
    """Our wrapper's class and Pygments' short token class names: nothing else survives."""
    from pygments.token import STANDARD_TYPES

    return {"div": {CODE_CLASS}, "span": {c for c in STANDARD_TYPES.values() if c}}


def code_html(code: str, language: str | None) -> str:
    """A highlighted block, passed through the sanitizer: only Pygments' class names survive."""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import TextLexer

    found = lexer(language) if language else None
    formatter = HtmlFormatter(cssclass=CODE_CLASS, wrapcode=True)
    raw = highlight(code, found or TextLexer(stripnl=False, ensurenl=False), formatter)
    clean = nh3.clean(
        raw.strip(),
        tags=set(_CODE_TAGS),
        attributes=_NO_ATTRIBUTES,
        allowed_classes=_allowed_classes(),
        link_rel=None,
    )
    # [sound:...] in code is code too: Anki must not play it
    return anki_markup_as_text(clean)


def rich_html(text: str) -> str:
    """Author text as safe HTML: inline tags, line breaks, and highlighted code blocks."""
    if FENCE not in text:
        return inline_html(text)
    out: list[str] = []
    for segment in segments(text):
        if segment.language is None:
            if segment.text.strip():
                out.append(inline_html(segment.text))
        else:
            out.append(code_html(segment.text, segment.language))
    return "".join(out)


def highlight_css() -> str:
    """Token colours for light and night mode, scoped to code blocks, as Pygments makes
    them. The note type ships them made (`templates/code.css`, see `code_css_file`):
    the same CSS whatever Pygments is installed, and no Pygments to load for it."""
    from pygments.formatters import HtmlFormatter

    # typed as Any: the stubs leave these two methods unannotated
    light: Any = HtmlFormatter(style=LIGHT_STYLE)
    dark: Any = HtmlFormatter(style=DARK_STYLE)
    scope = f".{CODE_CLASS}"
    night = [f"{mode} {scope}" for mode in _NIGHT]
    rules = [
        *light.get_background_style_defs(scope),
        *light.get_token_style_defs(scope),
        *dark.get_background_style_defs(night),
        *dark.get_token_style_defs(night),
    ]
    # the comments name each token type: useful to read, but every card carries this
    return "\n".join(re.sub(r"\s*/\*.*?\*/", "", rule) for rule in rules) + "\n"


def code_css_file() -> str:
    """The text of `templates/code.css`: `highlight_css` under a line naming its maker.

        python -c "import ankigen.text.markup as m; print(m.code_css_file(), end='')" \\
            > src/ankigen/apkg/templates/code.css
    """
    from pygments import __version__ as pygments_version

    # the function's name when the shipped CSS was made: the note type's CSS, and so
    # every package, keeps its bytes
    return (
        f"/* made by Pygments {pygments_version} (styles {LIGHT_STYLE}, night "
        f"{DARK_STYLE}) with ankigen.markup.code_css_file */\n" + highlight_css()
    )
