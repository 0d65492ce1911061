"""The note type: frozen fields, templates Anki can parse, words for every language."""

from __future__ import annotations

import re

from ankigen.apkg import notetype
from ankigen.apkg.notetype import NOTETYPE_ID, NOTETYPE_NAME
from ankigen.apkg.package import genanki_model
from ankigen.text import l10n

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
    assert (NOTETYPE_ID, NOTETYPE_NAME) == (1_732_416_907, "ankigen multiple choice v1")
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
    assert required <= set(l10n.card_words())
    for code, words in l10n.card_words().items():
        assert tuple(words) == l10n.card_keys(), code
        assert all(w.strip() for w in words.values()), code


def test_scripts_are_wrapped_and_never_assign_window_onload() -> None:
    script = notetype.templates().front
    body = script[script.index("<script>") :]
    assert "onload" not in body
    assert body.strip().startswith("<script>\n(function () {")
    assert body.rstrip().endswith("})();\n</script>")


def _shipped_code_css() -> str:
    from importlib import resources

    return resources.files("ankigen.apkg").joinpath("templates", "code.css").read_text("utf-8")


def test_shipped_code_css_is_what_pygments_makes() -> None:
    """The token colours ship made, so the note type does not depend on the Pygments
    installed; with the Pygments that made them, making them again gives the same."""
    import pygments
    import pytest

    from ankigen.text import markup

    shipped = _shipped_code_css()
    made_by = re.match(r"/\* made by Pygments (\S+) ", shipped)
    assert made_by, "code.css names the Pygments that made it on its first line"
    if made_by[1] != pygments.__version__:
        pytest.skip(
            f"code.css was made by Pygments {made_by[1]}, this is {pygments.__version__}: "
            "make it again as `ankigen.text.markup.code_css_file` says"
        )
    assert shipped == markup.code_css_file()
    assert notetype.templates().css.endswith(markup.highlight_css())


def test_every_token_the_highlighter_marks_has_a_colour() -> None:
    from ankigen.text import markup

    samples = {
        "python": 'def f(x: int) -> str:\n    return f"{x!r}"  # note\n@cache\nclass A: pass',
        "c": "#include <stdio.h>\nint main(void) { return 0x1F; /* c */ }",
        "bash": 'for f in *.yaml; do echo "$f" | grep -c x; done',
        "json": '{"a": [1, 2.5, true, null]}',
        "yaml": "key: [a, 'b']\n# c\nn: 1",
    }
    css = _shipped_code_css()
    for language, code in samples.items():
        html = markup.rich_html(f"```{language}\n{code}\n```")
        classes = set(re.findall(r'<span class="([\w-]+)"', html))
        assert len(classes) > 3, language
        # Pygments leaves white space ("w") uncoloured
        missing = {c for c in classes - {"w"} if f".ag-code .{c} " not in css}
        assert not missing, (language, missing)


def test_a_build_with_nothing_to_do_knows_the_templates_by_every_file_they_are_made_of() -> None:
    """`sources_digest` stands for `schema_hash` in the build's fingerprint: a template file
    it did not read could change while builds report the decks up to date."""
    from ankigen.apkg import notetype

    assert set(notetype._SOURCES) == {path.name for path in notetype._TEMPLATES.iterdir()}
