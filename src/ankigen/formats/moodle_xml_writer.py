"""Moodle XML written: what `export --to moodle-xml` makes, for Moodle's importer.

One `<question type="multichoice">` per item, with Moodle's grades for its
choices, its explanation as general feedback and its images embedded as
`<file encoding="base64">`, cleaned as a package's are.
"""

from __future__ import annotations

import base64
import urllib.parse
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from ankigen.formats.htmltext import text_to_html
from ankigen.formats.model import Question, Source, fatal, shared_grades
from ankigen.images.process import ImageProblem, kept_or_processed, resolve
from ankigen.images.settings import Settings

PLUGINFILE = "@@PLUGINFILE@@/"
"""How Moodle's texts name a file embedded with them."""

RECALL = "ankigen_recall"
"""A question's `recall: true`, in an element of ankigen's own (Moodle ignores it)."""


def fractions(question: Question) -> list[str]:
    """Moodle's grades: 100 for the one right answer, or shares with several."""
    shared = shared_grades(question)
    return shared or ["100" if c.correct else "0" for c in question.choices]


def write(source: Source, media_dir: Path) -> bytes:
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        # `--` would end the comment
        f"<!-- {escape(source.title).replace('--', '- -')} ({source.language}), "
        f"{source.export_mark} -->",
        "<quiz>",
    ]
    for q in source.questions:
        single = sum(c.correct for c in q.choices) <= 1
        where = (source.path, q.line)
        stem, stem_files = _html_with_image(q.question, q.image, q.image_alt, media_dir, where)
        general, general_files = _html_with_image(
            q.explanation or "", q.explanation_image, q.explanation_image_alt, media_dir, where
        )
        out += [
            '  <question type="multichoice">',
            f"    <name>\n      <text>{escape(q.name)}</text>\n    </name>",
            _raw("questiontext", stem, "    ", stem_files),
            _raw("generalfeedback", general, "    ", general_files),
            "    <defaultgrade>1</defaultgrade>",
            "    <penalty>0.3333333</penalty>",
            "    <hidden>0</hidden>",
            f"    <idnumber>{escape(q.name)}</idnumber>",
            f"    <single>{'true' if single else 'false'}</single>",
            f"    <shuffleanswers>{'false' if q.shuffle is False else 'true'}</shuffleanswers>",
            "    <answernumbering>abc</answernumbering>",
            "    <showstandardinstruction>0</showstandardinstruction>",
            _raw("correctfeedback", "", "    "),
            _raw("partiallycorrectfeedback", "", "    "),
            _raw("incorrectfeedback", "", "    "),
            "    <shownumcorrect/>",
        ]
        for fraction, choice in zip(fractions(q), q.choices, strict=True):
            out += [
                f'    <answer fraction="{fraction}" format="html">',
                f"      <text>{escape(text_to_html(choice.text))}</text>",
                _raw("feedback", text_to_html(choice.why) if choice.why else "", "      "),
                "    </answer>",
            ]
        if q.tags:
            out.append("    <tags>")
            out += [f"      <tag><text>{escape(tag)}</text></tag>" for tag in q.tags]
            out.append("    </tags>")
        if q.recall:
            # Moodle reads only the elements it knows: this one is for ankigen's import
            out.append(f"    <{RECALL}>true</{RECALL}>")
        out.append("  </question>")
    out.append("</quiz>")
    return ("\n".join(out) + "\n").encode("utf-8")


def _raw(tag: str, html_text: str, indent: str, files: str = "") -> str:
    return (
        f'{indent}<{tag} format="html">\n{indent}  <text>{escape(html_text)}</text>\n'
        f"{files}{indent}</{tag}>"
    )


def _html_with_image(
    text: str, image: str, alt: str, media_dir: Path, where: tuple[str, int]
) -> tuple[str, str]:
    """The text as HTML with its image after it, and the `<file>` that embeds the image."""
    # Pillow, only with images
    markup = text_to_html(text) if text else ""
    if not image:
        return markup, ""
    try:
        # cleaned as for a package: no camera, artist or GPS EXIF leaves with the export
        cleaned = kept_or_processed(resolve(media_dir, image).read_bytes(), image, Settings())
    except (ImageProblem, OSError) as problem:
        raise fatal(*where, f"cannot export image {image!r}: {problem}") from None
    data = cleaned.data
    name = f"{Path(image).stem}.{cleaned.name.rsplit('.', 1)[1]}"
    src = PLUGINFILE + urllib.parse.quote(name)
    markup = f"<p>{markup}</p><p><img src={quoteattr(src)} alt={quoteattr(alt)}></p>"
    encoded = base64.b64encode(data).decode("ascii")
    file_xml = f'      <file name={quoteattr(name)} path="/" encoding="base64">{encoded}</file>\n'
    return markup, file_xml
