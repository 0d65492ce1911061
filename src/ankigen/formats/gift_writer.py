"""GIFT written: what `export --to gift` makes, for Moodle's importer (`formats.gift`
reads it back): one question per item, `::id::` names, each choice's feedback and the
explanation as `####` general feedback, categories from the items' first tags."""

from __future__ import annotations

from pathlib import Path

from ankigen.formats.htmltext import text_to_html
from ankigen.formats.model import Question, Source, shared_grades


def escape(text: str) -> str:
    """Bank text as GIFT text in Moodle's default format, which is HTML: the text as the
    card's HTML, then GIFT's reserved characters escaped.

    GIFT has no escape for a leading `[` (a format name) or `%` (a weight); an
    explicit `[moodle]` in front keeps such text as written.
    """
    out = text_to_html(text).replace("\\", "\\\\")
    for char in "~=#{}:":
        out = out.replace(char, "\\" + char)
    out = out.replace("\r", "").replace("\n", "\\n")
    return "[moodle]" + out if out.startswith(("[", "%")) else out


def _weights(question: Question) -> list[str]:
    """Each choice's prefix: `=`/`~` with one right answer; percentages with several."""
    shared = shared_grades(question)
    if shared is None:
        return ["=" if c.correct else "~" for c in question.choices]
    return [f"~%{grade}%" for grade in shared]


def write(source: Source, media_dir: Path) -> bytes:
    """The bank as GIFT: one question per item, `::id::` names, feedback and `####` explanation."""
    title = " ".join(source.title.split())  # a comment is one line
    out = [f"// {title} ({source.language}), {source.export_mark}", ""]
    category = ""
    for question in source.questions:
        # a `/` within a level doubled, as Moodle's `assemble_category_path` writes it
        levels = question.tags[0].split("::") if question.tags else []
        wanted = "/".join(level.replace("/", "//") for level in levels)
        if wanted != category:
            out += [
                f"$CATEGORY: $course$/top/{wanted}" if wanted else "$CATEGORY: $course$/top",
                "",
            ]
            category = wanted
        if question.image or question.explanation_image:
            out.append("// its images are not here: GIFT files carry none")
        out.append(f"::{escape(question.name)}::{escape(question.question)}{{")
        for prefix, choice in zip(_weights(question), question.choices, strict=True):
            why = f"#{escape(choice.why)}" if choice.why else ""
            out.append(f"\t{prefix}{escape(choice.text)}{why}")
        if question.explanation:
            out.append(f"\t####{escape(question.explanation)}")
        out += ["}", ""]
    return "\n".join(out).encode("utf-8")
