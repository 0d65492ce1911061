"""Author text to safe HTML.

Author text is text: `<`, `&` and quotes are shown as written. Only these
exact tags, without attributes, are formatting: <b> <i> <u> <sub> <sup>
<code> <br>. Everything else is escaped, and nh3 (the ammonia sanitizer)
then balances and cleans the result, so no markup an author writes can become
script, style or an event handler on a learner's card.
"""

from __future__ import annotations

import html
import re

import nh3

INLINE_TAGS = frozenset({"b", "i", "u", "sub", "sup", "code", "br"})

_ESCAPED_TAG = re.compile(
    r"&lt;(/?)(" + "|".join(sorted(INLINE_TAGS)) + r")\s*(/?)&gt;", re.IGNORECASE
)


def _restore_tag(match: re.Match[str]) -> str:
    closing, name, _ = match.groups()
    name = name.lower()
    if name == "br":
        return "<br>"
    return f"<{closing}{name}>"


def inline_html(text: str) -> str:
    """Sanitized HTML for one piece of author text; newlines become <br>."""
    escaped = html.escape(text, quote=True)
    # only the allowed tags, exactly as spelled, come back to life
    restored = _ESCAPED_TAG.sub(_restore_tag, escaped) if "&lt;" in escaped else escaped
    restored = restored.replace("\r\n", "\n").replace("\n", "<br>")
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
