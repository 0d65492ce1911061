"""Author text to safe HTML.

Author text is text: `<`, `&` and quotes are shown as written. Only these
exact tags, without attributes, are formatting: <b> <i> <u> <sub> <sup>
<code> <br>. Everything else is escaped, and nh3 (the ammonia sanitizer)
then balances and cleans the result, so no markup an author writes can become
script, style or an event handler on a learner's card.

Three entities stand for the characters they name: `&lt;`, `&gt;` and `&amp;`.
They are how a text shows a tag's name as text ("What does &lt;br&gt; do?");
`literal` writes them where a text needs them. Any other `&` is shown as written.
"""

from __future__ import annotations

import html
import re

import nh3

INLINE_TAGS = frozenset({"b", "i", "u", "sub", "sup", "code", "br"})

_ESCAPED_TAG = re.compile(
    r"&lt;(/?)(" + "|".join(sorted(INLINE_TAGS)) + r")\s*(/?)&gt;", re.IGNORECASE
)


_BANK_ENTITY = re.compile(r"&amp;(lt|gt|amp);")
_WOULD_BE_ENTITY = re.compile(r"&(?=(?:lt|gt|amp);)")
_WOULD_BE_TAG = re.compile(r"<(/?(?:" + "|".join(sorted(INLINE_TAGS)) + r")\s*/?)>", re.IGNORECASE)


def literal(text: str) -> str:
    """Author text that shows `text` exactly as it is: the `<` that would open an inline
    tag, and the `&` that would start one of the three entities, written as entities.
    What every importer makes of text that is not markup (see the module's description)."""
    if "&" in text:
        text = _WOULD_BE_ENTITY.sub("&amp;", text)
    if "<" in text:
        text = _WOULD_BE_TAG.sub(r"&lt;\1&gt;", text)
    return text


def _restore_tag(match: re.Match[str]) -> str:
    closing, name, _ = match.groups()
    name = name.lower()
    if name == "br":
        return "<br>"
    return f"<{closing}{name}>"


# Anki reads its own markup in field text: [sound:x] plays a file from the
# learner's media folder, [latex], [$] and [$$] make LaTeX images, [anki:tts]
# speaks. In author text they are text: the bracket becomes an entity, which
# Anki's patterns do not match and every browser shows as "[".
_ANKI_MARKUP = re.compile(r"\[(?=/?(?:sound:|latex\]|\$\$?\]|anki:))", re.IGNORECASE)


def anki_markup_as_text(markup: str) -> str:
    return _ANKI_MARKUP.sub("&#91;", markup) if "[" in markup else markup


def inline_html(text: str) -> str:
    """Sanitized HTML for one piece of author text; newlines become <br>."""
    if _MARKED.search(text) is None:
        return text  # escaping it and restoring what may stay would give it back as it is
    return anki_markup_as_text(_inline_html(text))


# what escaping, restoring tags, line breaks and Anki's markup change: text without any
# of these comes back as it is (quotes are escaped and put back, see `_normalize_entities`;
# a carriage return counts only before a line feed)
_MARKED = re.compile(r"[&<>\n\[]")


def _inline_html(text: str) -> str:
    escaped = html.escape(text, quote=True)
    # only the allowed tags, exactly as spelled, come back to life
    restored = _ESCAPED_TAG.sub(_restore_tag, escaped) if "&lt;" in escaped else escaped
    restored = restored.replace("\r\n", "\n").replace("\n", "<br>")
    if "&amp;" in restored:
        restored = _BANK_ENTITY.sub(r"&\1;", restored)
    if "<" not in restored.replace("<br>", ""):
        # nothing but escaped text and line breaks: already safe and balanced
        return _normalize_entities(restored)
    return nh3.clean(restored, tags=set(INLINE_TAGS), attributes=_NO_ATTRIBUTES, link_rel=None)


_NO_ATTRIBUTES: dict[str, set[str]] = {}


def _normalize_entities(escaped: str) -> str:
    # the same spelling nh3 produces, so both paths give identical fields
    return escaped.replace("&quot;", '"').replace("&#x27;", "'")


def plain_text(text: str) -> str:
    """Text with the inline tags removed, for places that take no markup."""
    rendered = inline_html(text)
    if "<" not in rendered:
        return html.unescape(rendered)
    return html.unescape(nh3.clean(rendered, tags=set(), attributes=_NO_ATTRIBUTES))


# Characters that take no space: a text made of these and tags is visually empty.
INVISIBLE = frozenset(
    "\u200b\u200c\u200d\u2060\ufeff\u00ad\u180e\u2061\u2062\u2063\u2064"
    # fillers and blanks that draw nothing: braille blank, Hangul fillers, the
    # combining grapheme joiner, Khmer's inherent vowels
    "\u2800\u3164\u115f\u1160\uffa0\u034f\u17b4\u17b5"
    # direction marks, embeddings and isolates
    "\u200e\u200f\u061c\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
    # variation selectors (an emoji's presentation: `yes` and `yes` + U+FE0F look alike)
    + "".join(map(chr, range(0xFE00, 0xFE10)))
    + "".join(map(chr, range(0xE0100, 0xE01F0)))
    # tag characters
    + "".join(map(chr, range(0xE0000, 0xE0080)))
)
"""Characters that draw nothing: a text of only these (and tags, and spaces) is
visually empty, and two choices that differ only by them look the same."""


def visible_text(text: str) -> str:
    """What a reader sees of author text: tags, invisible characters and spacing dropped."""
    shown = plain_text(text)
    return "".join(ch for ch in shown if ch not in INVISIBLE and not ch.isspace())
