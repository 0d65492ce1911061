"""Our note type: frozen fields, and the card templates shipped as package data.

The field names and their order are frozen since 0.1.0: Anki matches a note
type by id plus the names of its fields and templates, and a changed schema
makes every updated note "conflicting". Templates and CSS may change; Anki
updates them when the note type's modification time moves forward.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ankigen.core.hashing import content_hash
from ankigen.text import l10n
from ankigen.text.l10n import WORDS_PATH

# Fixed forever: changing the fields means a new note type with a new id and name.
NOTETYPE_ID = 1_732_416_907
NOTETYPE_NAME = "ankigen multiple choice v1"

FIELDS = (
    "Question",  # sanitized HTML
    "Choices",  # <ol> in the author's order: <li data-choice="K">, data-correct="true" if right
    "Answer",  # the text of the correct choice(s), for clients without JavaScript
    "Explanation",
    "Correct",  # the 1-based numbers of the correct choices, such as "2" or "1 3"
    "Shuffle",  # space-separated flags: "shuffle", "recall", both or none
    "ItemId",
    "Language",  # BCP 47 tag
    "Direction",  # ltr or rtl
    "Image",  # <img> shown with the question, or empty
    "ExplanationImage",  # <img> shown in the explanation, or empty
)
TEMPLATE_NAME = "Multiple choice"


@dataclass(frozen=True)
class Templates:
    front: str
    back: str
    css: str


_TEMPLATES = Path(__file__).with_name("templates")


def _read(name: str) -> str:
    # beside this module, as setuptools installs package data; importlib.resources
    # (for zipped packages, which ankigen is not) cost a build with nothing changed 5 %
    return (_TEMPLATES / name).read_text(encoding="utf-8")


_PHRASE = re.compile(r"<!--ankigen:phrase (\w+)-->")


_COMMENT_LINE = re.compile(r"^\s*//.*\n", re.MULTILINE)
_CSS_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
_INDENT = re.compile(r"^[ \t]+", re.MULTILINE)


def compact_script(script: str) -> str:
    """Comment lines and indentation out: every note type copy in every package carries it."""
    return _INDENT.sub("", _COMMENT_LINE.sub("", script)).strip()


def compact_css(css: str) -> str:
    return _INDENT.sub("", _CSS_COMMENT.sub("", css)).strip() + "\n"


def _assemble(template: str, script: str) -> str:
    out = _PHRASE.sub(lambda m: l10n.phrase(m[1]), template)
    out = out.replace("<!--ankigen:phrases-->", l10n.phrases_block())
    return _INDENT.sub("", out.replace("<!--ankigen:script-->", compact_script(script)))


_templates: Templates | None = None


def templates() -> Templates:
    """The card templates as Anki stores them: phrases, script and CSS filled in. Made once
    a process, or given by the process that made them (`adopt_templates`)."""
    global _templates
    if _templates is None:
        _templates = _made_templates()
    return _templates


def adopt_templates(made: Templates) -> None:
    """Take the templates another process of this build made from the same files (the
    one worker of an edit gets them with its deck's job): making them again took that
    worker 4 to 7 ms, between its check and its deck's plan."""
    global _templates
    if _templates is None:
        _templates = made


def _made_templates() -> Templates:
    # here, not at the top: markup loads Pygments, which only making the templates needs
    from ankigen.text import markup

    script = _read("card.js").replace(
        '/*ankigen:unsafe-macro*/""', json.dumps(markup.UNSAFE_MACRO_PATTERN)
    )
    return Templates(
        front=_assemble(_read("front.html"), script),
        back=_assemble(_read("back.html"), script),
        css=compact_css(_read("card.css")) + l10n.css() + compact_css(_read("code.css")),
    )


@cache
def kept_script() -> str:
    """The script a kept note type's card runs before ours (`apkg.kept`)."""
    return compact_script(_read("kept.js"))


@cache
def schema_hash() -> str:
    """Changes whenever anything Anki stores in the note type changes, or in a kept note
    type (`apkg.kept`), whose time in packages follows ours."""
    t = templates()
    own = content_hash(NOTETYPE_NAME, *FIELDS, TEMPLATE_NAME, t.front, t.back, t.css)
    return content_hash(own, kept_script())


_SOURCES = ("front.html", "back.html", "card.js", "card.css", "code.css", "kept.js")


def source_paths() -> tuple[Path, ...]:
    """The files the templates are made from: a build with nothing to do replays only
    while they are as they were (`builder.replay`)."""
    return (*(_TEMPLATES / name for name in _SOURCES), WORDS_PATH)


def sources_digest() -> str:
    """A digest of the files the templates are made from, which with ankigen's version
    decides `schema_hash`: read in a fraction of the time it takes to make them."""
    return content_hash(*(path.read_text("utf-8") for path in source_paths()))
