"""The `moodle-xml` format: Moodle's XML question format, read and written.

Read: `<question type="multichoice">` (its `<answer fraction>` with a positive
fraction is correct, `<feedback>` is that choice's `why`, `<generalfeedback>`
the explanation, `<shuffleanswers>`, `<idnumber>` or `<name>` the id, `<tags>`
the tags) and `type="truefalse"`; `type="category"` names the title and tags
the questions after it; every other type is skipped with a warning. HTML is
reduced to the bank's inline tags. Images embedded as `<file encoding="base64">`
and referenced as `@@PLUGINFILE@@/name` are checked and cleaned by Pillow and
written into the media folder. A problem of one question's own (a choice that is
only a picture, an image Pillow cannot read) skips that question, and the images
it embeds, with a warning, not the file.

The XML is parsed with defusedxml and no DTD at all is accepted, so external
entities (XXE) and entity expansion bombs are refused before anything expands.
"""

from __future__ import annotations

import base64
import binascii
import re
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from ankigen.formats.htmltext import (
    Image,
    Link,
    MarkdownProblem,
    html_to_text,
    markdown_to_text,
    tex_delimiters,
)
from ankigen.formats.model import (
    Choice,
    Format,
    Problems,
    Question,
    ReadOptions,
    Source,
    category_levels,
    check_choice_count,
    graded,
    store_image,
    tag_of,
)
from ankigen.formats.moodle_xml_writer import PLUGINFILE, RECALL, write
from ankigen.formats.xmltree import Node, parse_xml
from ankigen.images.process import ImageProblem
from ankigen.text import l10n
from ankigen.text.html import literal

_KINDS = {
    "shortanswer": "a short-answer question",
    "numerical": "a numerical question",
    "essay": "an essay question",
    "description": "a description (no answers)",
    "matching": "a matching question",
    "match": "a matching question",
    "cloze": "a cloze (embedded answers) question",
    "multianswer": "a cloze (embedded answers) question",
    "calculated": "a calculated question",
    "calculatedsimple": "a simple calculated question",
    "calculatedmulti": "a calculated multichoice question",
    "ddwtos": "a drag-and-drop into text question",
    "gapselect": "a select-missing-words question",
    "ordering": "an ordering question",
    "randomsamatch": "a random short-answer matching question",
}


@dataclass
class _Reading:
    problems: Problems
    options: ReadOptions
    media: dict[str, bytes] = field(default_factory=dict)


@dataclass(frozen=True)
class _Text:
    text: str
    image: str = ""
    image_alt: str = ""
    pictures: int = 0
    """The pictures the text had, kept or dropped."""


def read(path: str, data: bytes, options: ReadOptions) -> Source:
    problems = Problems(path)
    root = parse_xml(path, data)
    if root.tag != "quiz":
        raise problems.fail(
            root.line, f"the root element is <{root.tag}>; Moodle XML has <quiz> around questions"
        )
    reading = _Reading(problems, options)
    questions: list[Question] = []
    skipped = 0
    tags: tuple[str, ...] = ()
    title = ""
    for node in root.all("question"):
        kind = node.attrs.get("type", "")
        if kind == "category":
            path_text = node.text_of("category")
            parts = category_levels(path_text)
            tag = tag_of("::".join(parts))
            tags = (tag,) if tag else ()
            title = title or (parts[-1] if parts else "")
        elif kind in ("multichoice", "truefalse"):
            question = _one_question(node, kind, reading, tags)
            if question is not None:
                questions.append(replace(question, place=len(questions) + skipped + 1))
            else:
                skipped += 1
        else:
            what = _KINDS.get(kind, f"a question of type {kind!r}")
            problems.warn(
                node.line,
                f"skipped {what}: only multiple-choice and true/false questions become items",
            )
            skipped += 1
    others = [c for c in root.children if c.tag != "question"]
    for other in others:
        problems.warn(other.line, f"<{other.tag}> is not a question; ignored")
    if not questions and not skipped and not problems.found:
        raise problems.fail(root.line, "no <question> elements found")
    return Source(
        path=path,
        questions=tuple(questions),
        title=title or Path(path).stem,
        skipped=skipped,
        diagnostics=tuple(sorted(problems.found)),
        media=tuple(sorted(reading.media.items())),
    )


def _one_question(
    node: Node, kind: str, reading: _Reading, category_tags: tuple[str, ...]
) -> Question | None:
    """A question, or None if a problem of its own skips it (`Problems.skipped_since`),
    and with it the images it embeds."""
    mark = len(reading.problems.found)
    media, reading.media = reading.media, {}
    try:
        question = _question(node, kind, reading, category_tags)
        if reading.problems.skipped_since(mark, node.text_of("name")):
            return None
        assert question is not None
        media.update(reading.media)
        return question
    finally:
        reading.media = media


def _question(
    node: Node, kind: str, reading: _Reading, category_tags: tuple[str, ...]
) -> Question | None:
    problems = reading.problems
    stem_node = node.child("questiontext")
    fmt = (stem_node.attrs.get("format") if stem_node is not None else None) or "html"
    stem = _old_image(node, _field(node, "questiontext", fmt, reading, images=True), reading)
    if not stem.text:
        problems.add(node.line, "the question has no text (<questiontext><text>)")
        return None
    general = _field(node, "generalfeedback", fmt, reading, images=True)
    answers = node.all("answer")
    read = _answers(answers, kind, fmt, reading)
    if read is None:
        return None
    choices, weights, pictures = read
    if kind == "truefalse":
        choices_tf = _true_false(node, answers, choices, reading)
        if choices_tf is None:
            return None
        choices = choices_tf
    if not _choices_hold_text(choices, answers, pictures, problems):
        return None
    if not check_choice_count(problems, node.line, len(choices)):
        return None
    if kind == "multichoice":
        # Moodle's trans_single: "false", "0" and nothing are multiple-answer
        single = node.text_of("single").strip() if node.child("single") else "true"
        language = reading.options.language
        choices = list(
            graded(
                choices, weights, single not in ("false", "0", ""), language, problems, node.line
            )
        )
    if not any(c.correct for c in choices):
        problems.warn(node.line, "no answer has a positive fraction; the answer is left as TODO")
    name = node.text_of("name")
    id_node = node.child("idnumber")
    idnumber = id_node.content.strip() if id_node is not None else ""
    recall = node.text_of(RECALL).strip() in ("true", "1") if node.child(RECALL) else None
    return Question(
        line=node.line,
        question=stem.text,
        choices=tuple(choices),
        name=idnumber or name,
        recall=recall,
        explanation=general.text or None,
        answered=any(c.correct for c in choices),
        tags=_tags(node, category_tags),
        shuffle=_shuffle(node, kind),
        image=stem.image,
        image_alt=stem.image_alt,
        explanation_image=general.image,
        explanation_image_alt=general.image_alt,
    )


def _answers(
    answers: list[Node], kind: str, fmt: str, reading: _Reading
) -> tuple[list[Choice], list[float], list[int]] | None:
    """Each `<answer>`'s choice, its weight (its fraction, 1 for 100 %) and how many
    pictures its text held; None if a fraction is not a number."""
    choices: list[Choice] = []
    weights: list[float] = []
    pictures: list[int] = []
    for answer in answers:
        fraction_text = answer.attrs.get("fraction", "0")
        try:
            fraction = float(fraction_text)
        except ValueError:
            reading.problems.add(answer.line, f"fraction {fraction_text!r} is not a number")
            return None
        answer_fmt = answer.attrs.get("format") or fmt
        text_node = answer.child("text")
        converted = _convert(
            _raw_text(text_node, reading) if text_node is not None else answer.content.strip(),
            answer_fmt,
            answer.line,
            reading,
            None,
            choice=kind == "multichoice",
        )
        why = _field(answer, "feedback", fmt, reading, images=False).text
        choices.append(Choice(converted.text, fraction > 0, why))
        weights.append(fraction / 100)
        pictures.append(converted.pictures)
    return choices, weights, pictures


def _choices_hold_text(
    choices: list[Choice], answers: list[Node], pictures: list[int], problems: Problems
) -> bool:
    for number, choice in enumerate(choices, start=1):
        if not choice.text:
            lacks = "is only a picture, which a choice cannot hold"
            empty = lacks if pictures[number - 1] else "is empty"
            problems.add(answers[number - 1].line, f"choice {number} {empty}")
            return False
    return True


def _shuffle(node: Node, kind: str) -> bool | None:
    """False where Moodle keeps the choices' order; None: the bank's default."""
    if kind == "truefalse":
        return False
    if kind == "multichoice":
        flag = node.text_of("shuffleanswers") if node.child("shuffleanswers") else "false"
        # Moodle reads a missing or "false"/"0" <shuffleanswers> as: keep the order
        if flag in ("", "false", "0"):
            return False
    return None


def _tags(node: Node, category_tags: tuple[str, ...]) -> tuple[str, ...]:
    """The category's tags, then the question's own, each once."""
    tags = list(category_tags)
    tags_node = node.child("tags")
    for tag_node in tags_node.all("tag") if tags_node is not None else []:
        tag = tag_of(tag_node.text_of("text") if tag_node.child("text") else tag_node.content)
        if tag and tag not in tags:
            tags.append(tag)
    return tuple(tags)


def _true_false(
    node: Node, answers: list[Node], parsed: list[Choice], reading: _Reading
) -> list[Choice] | None:
    if len(answers) != 2:
        reading.problems.add(
            node.line, f"a true/false question needs 2 answers, not {len(answers)}"
        )
        return None
    true_word, false_word = l10n.true_false(reading.options.language)
    texts = [a.text_of("text").lower() if a.child("text") else "" for a in answers]
    if sorted(texts) != ["false", "true"]:
        texts = ["true", "false"]  # old Moodle exports: localized words, true first
        reading.problems.warn(
            node.line,
            "true/false answers are not 'true' and 'false'; took the first as true, as Moodle does",
        )
    by_text = dict(zip(texts, parsed, strict=True))
    true, false = by_text["true"], by_text["false"]
    truth = float(answers[texts.index("true")].attrs.get("fraction", "0") or 0) == 100
    return [Choice(true_word, truth, true.why), Choice(false_word, not truth, false.why)]


def _field(node: Node, tag: str, fmt: str, reading: _Reading, *, images: bool) -> _Text:
    holder = node.child(tag)
    if holder is None:
        return _Text("")
    text_node = holder.child("text")
    raw = _raw_text(text_node, reading) if text_node is not None else ""
    files = _files(holder, reading) if images else None
    return _convert(raw, holder.attrs.get("format") or fmt, holder.line, reading, files)


def _raw_text(text_node: Node, reading: _Reading) -> str:
    """The content of a `<text>`; markup inside it must be escaped or in CDATA."""
    if text_node.children:
        names = ", ".join(sorted({f"<{c.tag}>" for c in text_node.children}))
        reading.problems.warn(
            text_node.line,
            f"{names} inside <text> is XML, not text: write HTML in <![CDATA[...]]> "
            "or escaped; it was dropped",
        )
    return text_node.content.strip()


def _files(holder: Node, reading: _Reading) -> dict[str, tuple[bytes, int]]:
    found: dict[str, tuple[bytes, int]] = {}
    for file_node in holder.all("file"):
        name = file_node.attrs.get("name", "")
        folder = file_node.attrs.get("path", "/") or "/"
        if file_node.attrs.get("encoding", "base64") != "base64":
            reading.problems.add(file_node.line, f"file {name!r}: only base64 encoding is known")
            continue
        try:
            data = base64.b64decode("".join(file_node.content.split()), validate=True)
        except (binascii.Error, ValueError):
            reading.problems.add(file_node.line, f"file {name!r} is not valid base64")
            continue
        found[(folder.strip("/") + "/" + name).lstrip("/")] = (data, file_node.line)
    return found


def _convert(
    raw: str,
    fmt: str,
    line: int,
    reading: _Reading,
    files: dict[str, tuple[bytes, int]] | None,
    *,
    choice: bool = False,
) -> _Text:
    """The text in bank form, its image stored; `files`: the images embedded with it, or
    None where a text holds none. A choice left empty by its pictures is the caller's
    to report: its pictures are not dropped from an item that is not made."""
    problems = reading.problems
    if fmt in ("plain_text", "wiki_like"):
        return _Text(tex_delimiters(literal(raw)))
    if fmt == "markdown":
        try:
            converted = markdown_to_text(raw)
        except MarkdownProblem as problem:
            problems.add(line, str(problem))
            return _Text("")
    else:
        # moodle_auto_format is HTML whose line breaks are breaks
        markup = raw.replace("\n", "<br>") if fmt == "moodle_auto_format" else raw
        converted = html_to_text(markup)
    for loss in converted.losses():
        problems.warn(line, loss)
    linked = set(_lost_links(converted.links, line, problems))
    if files is None:
        text = tex_delimiters(converted.text)
        if choice and not text:
            return _Text("", pictures=converted.pictures)
        for img in converted.images:
            problems.warn(
                line,
                f"image {_file_name(img.src)!r} in a choice or its feedback was dropped: "
                "choices and their feedback are text",
            )
        if converted.drawings:
            problems.warn(
                line,
                "an inline <svg> picture in a choice or its feedback was dropped: choices "
                "and their feedback are text",
            )
        return _Text(text, pictures=converted.pictures)
    if converted.drawings:
        problems.warn(
            line,
            "an inline <svg> picture was dropped: an item's image is an embedded image file "
            '(<img src="@@PLUGINFILE@@/...">)',
        )
    if not converted.images:
        for name in sorted(set(files) - linked):
            problems.warn(line, f"embedded file {name!r} is not shown in the text; ignored")
        return _Text(tex_delimiters(converted.text), pictures=converted.drawings)
    image, alt = "", ""
    for number, img in enumerate(converted.images):
        if number:
            problems.warn(line, f"only one image per text: dropped {img.shown!r}")
            continue
        if img.inline:
            image, alt = _inline(img, line, reading), img.alt
            continue
        if not img.src.startswith(PLUGINFILE):
            problems.warn(
                line,
                f"image {img.src!r} is not embedded in the file; dropped (ankigen never downloads)",
            )
            continue
        wanted = _file_name(img.src)
        found = files.get(wanted)
        if found is None:
            problems.warn(
                line, f"image {wanted!r} is not embedded in the file (<file name=...>); dropped"
            )
            continue
        image, alt = _store(wanted, found[0], found[1], reading), img.alt
    return _Text(tex_delimiters(converted.text), image, alt, converted.pictures)


def _inline(img: Image, line: int, reading: _Reading) -> str:
    """A picture written into the text (`data:image/png;base64,...`, as editors paste
    one), stored as an embedded file is; SVG, like an inline `<svg>`, is dropped."""
    kind, data = img.inline_bytes() or ("", b"")
    if not kind.startswith("image/") or kind == "image/svg+xml":
        what = "an SVG drawing" if kind == "image/svg+xml" else "not a picture"
        reading.problems.warn(line, f"inline image {img.shown!r} is {what}; dropped")
        return ""
    return _store(img.shown, data, line, reading)


def _old_image(node: Node, stem: _Text, reading: _Reading) -> _Text:
    """The picture of a Moodle 1.9 question, `<image>` with its bytes in `<image_base64>`,
    which Moodle still imports: after the question's text, as its image."""
    named, data_node = node.child("image"), node.child("image_base64")
    name = named.content.strip() if named is not None else ""
    encoded = "".join(data_node.content.split()) if data_node is not None else ""
    if not name:
        return stem
    line = named.line if named is not None else node.line
    if not encoded:
        reading.problems.warn(
            line,
            f"<image> {name!r} is a file of the course it came from, not in this file; dropped",
        )
        return stem
    if stem.image:
        reading.problems.warn(line, f"only one image per text: dropped <image> {name!r}")
        return stem
    try:
        data = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        reading.problems.add(line, f"<image_base64> of {name!r} is not valid base64")
        return stem
    stored = _store(name.replace("/", "_"), data, line, reading)
    return replace(stem, image=stored) if stored else stem


def _file_name(src: str) -> str:
    """The name of a file embedded with the text (`@@PLUGINFILE@@/NAME`), else `src`."""
    if not src.startswith(PLUGINFILE):
        return Image(src, "").shown
    return urllib.parse.unquote(src[len(PLUGINFILE) :].split("?")[0]).lstrip("/")


def _lost_links(links: tuple[Link, ...], line: int, problems: Problems) -> Iterator[str]:
    """A warning for each link or sound a bank text cannot carry (its words stay); the
    names of the embedded files they use."""
    for link in links:
        name = _file_name(link.target)
        problems.warn(line, link.lost(name))
        if link.target.startswith(PLUGINFILE):
            yield name


def _store(name: str, data: bytes, line: int, reading: _Reading) -> str:
    try:
        return store_image(data, name, reading.options.media_prefix, reading.media)
    except ImageProblem as problem:
        reading.problems.add(line, str(problem))
        return ""


def sniff(text: str) -> int:
    head = text.lstrip()[:2000]
    if re.search(r"<quiz[\s>]", head):
        return 95
    return 40 if head.startswith("<?xml") else 0


FORMAT = Format(
    name="moodle-xml",
    title="Moodle XML",
    extensions=(".xml",),
    read=read,
    sniff=sniff,
    write=write,
    export_extension=".xml",
)
