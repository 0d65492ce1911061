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

import re
from pathlib import Path

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
    placed,
    tag_of,
)
from ankigen.formats.moodle_text import Reading, convert, field_text, old_image, raw_text
from ankigen.formats.moodle_xml_writer import RECALL, write
from ankigen.formats.xmltree import Node, parse_xml
from ankigen.text import l10n

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


def read(path: str, data: bytes, options: ReadOptions) -> Source:
    problems = Problems(path)
    root = parse_xml(path, data)
    if root.tag != "quiz":
        raise problems.fail(
            root.line, f"the root element is <{root.tag}>; Moodle XML has <quiz> around questions"
        )
    reading = Reading(problems, options)
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
                questions.append(placed(question, len(questions), skipped))
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
    node: Node, kind: str, reading: Reading, category_tags: tuple[str, ...]
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
    node: Node, kind: str, reading: Reading, category_tags: tuple[str, ...]
) -> Question | None:
    problems = reading.problems
    stem_node = node.child("questiontext")
    fmt = (stem_node.attrs.get("format") if stem_node is not None else None) or "html"
    stem = old_image(node, field_text(node, "questiontext", fmt, reading, images=True), reading)
    if not stem.text:
        problems.add(node.line, "the question has no text (<questiontext><text>)")
        return None
    general = field_text(node, "generalfeedback", fmt, reading, images=True)
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
        if single != "false" and single.lower() == "false":
            problems.warn(
                node.line,
                f"<single>{single}</single> is read as true (a single-answer question), as "
                "Moodle reads it: only 'false', '0' or nothing is false; write 'false' for "
                "multiple answers",
            )
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
    answers: list[Node], kind: str, fmt: str, reading: Reading
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
        converted = convert(
            raw_text(text_node, reading) if text_node is not None else answer.content.strip(),
            answer_fmt,
            answer.line,
            reading,
            None,
            choice=kind == "multichoice",
        )
        why = field_text(answer, "feedback", fmt, reading, images=False).text
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
    node: Node, answers: list[Node], parsed: list[Choice], reading: Reading
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
