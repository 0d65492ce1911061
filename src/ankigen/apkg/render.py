"""Card HTML as Anki renders it, for our templates: fields, and {{#F}}/{{^F}} sections.

`preview` uses this so authors see the real templates and scripts; a test
checks that it matches what the Anki backend renders, byte for byte.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ankigen.apkg import notetype

_SECTION = re.compile(r"\{\{([#^])([^}]+)\}\}(.*?)\{\{/\2\}\}", re.DOTALL)
_FIELD = re.compile(r"\{\{([^#^/}][^}]*)\}\}")
_EMPTY = re.compile(r"^(?:\s|<br\s*/?>|<div>\s*</div>)*$", re.IGNORECASE)


def _is_empty(value: str) -> bool:
    return _EMPTY.match(value) is not None


def render_template(template: str, fields: Mapping[str, str]) -> str:
    def section(match: re.Match[str]) -> str:
        kind, name, body = match.groups()
        empty = _is_empty(fields[name.strip()])
        return body if (kind == "#") != empty else ""

    out = _SECTION.sub(section, template)
    return _FIELD.sub(lambda m: fields[m[1].strip()], out)


def card_sides(field_values: tuple[str, ...]) -> tuple[str, str]:
    """The question and answer HTML of a note, as Anki's card.question() and card.answer()."""
    fields = dict(zip(notetype.FIELDS, field_values, strict=True))
    t = notetype.templates()
    style = f"<style>{t.css}</style>"
    return style + render_template(t.front, fields), style + render_template(t.back, fields)
