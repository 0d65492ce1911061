"""The note type: frozen fields, templates Anki can parse, words for every language."""

from __future__ import annotations

import re

from ankigen import ids, l10n, notetype
from ankigen.package import genanki_model

FROZEN_FIELDS = (
    "Question",
    "Choices",
    "Answer",
    "Explanation",
    "Correct",
    "Shuffle",
    "ItemId",
    "Language",
    "Direction",
    "Image",
    "ExplanationImage",
)


def test_fields_and_ids_are_frozen() -> None:
    # changing any of these makes every updated note "conflicting" in Anki
    assert notetype.FIELDS == FROZEN_FIELDS
    assert (ids.NOTETYPE_ID, ids.NOTETYPE_NAME) == (1_732_416_907, "ankigen multiple choice v1")
    assert notetype.TEMPLATE_NAME == "Multiple choice"
    model = genanki_model()
    assert [f["name"] for f in model.fields] == list(FROZEN_FIELDS)


def test_templates_reference_only_our_fields() -> None:
    t = notetype.templates()
    for template in (t.front, t.back):
        tags = re.findall(r"\{\{([^}]*)\}\}", template)
        names = {tag.lstrip("#^/") for tag in tags}
        assert names <= set(FROZEN_FIELDS)
        # a stray "{{" in the script or CSS would be read by Anki as a field
        assert template.count("{{") == len(tags)
    assert "{{" not in t.css
    assert "<!--ankigen:" not in t.front + t.back


def test_every_language_has_every_phrase() -> None:
    required = {"en", "bn", "yo", "hi", "ur", "wo", "de", "es", "fr", "ar"}
    assert required <= set(l10n.STRINGS)
    for code, words in l10n.STRINGS.items():
        assert len(words) == len(l10n.KEYS), code
        assert all(w.strip() for w in words), code


def test_scripts_are_wrapped_and_never_assign_window_onload() -> None:
    script = notetype.templates().front
    body = script[script.index("<script>") :]
    assert "onload" not in body
    assert body.strip().startswith("<script>\n(function () {")
    assert body.rstrip().endswith("})();\n</script>")
