r"""The `gift` format: Moodle's GIFT, read and written as Moodle's own importer does.

Questions are separated by blank lines; `//` lines are comments. A question is
`::title::[format]text{answers}`; the answer block decides the kind:
`~` makes a multiple-choice question (`=` the right answer, `~%50%` a weighted
one, `#` a choice's feedback, `####` the general feedback), `T`/`TRUE`/`F`/`FALSE`
a true/false one. Every other kind (essay, numerical, matching, short answer,
description) is skipped with a warning. `\`, `\~`, `\=`, `\#`, `\{`, `\}`, `\:`
escape those characters and `
` is a line break. Of two answer blocks, the
first is the answers and the rest is text, as in Moodle. A problem of one
question's own (an unclosed brace, an empty choice) skips that question with a
warning, not the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ankigen.formats.gift_writer import write
from ankigen.formats.htmltext import (
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
    decode,
    graded,
    placed,
    tag_of,
)
from ankigen.text import l10n
from ankigen.text.html import literal

# The escapes, as placeholders that cannot occur in decoded text (NUL is refused).
_ESCAPES = {"\\": "\x00b", ":": "\x00c", "#": "\x00h", "=": "\x00e", "{": "\x00o"}
_ESCAPES |= {"}": "\x00C", "~": "\x00t", "n": "\x00n"}
_UNESCAPE = {v: ("\n" if k == "n" else k) for k, v in _ESCAPES.items()}
_ESCAPE_RE = re.compile(r"\\([\\:#={}~n])")
_PLACEHOLDER = re.compile("\x00[bcheoCtn]")
_WEIGHT = re.compile(r"^%(-?[0-9]+(?:\.[0-9]*)?)%")
_FORMATS = ("moodle", "html", "plain", "markdown")
# a block of Moodle's embedded answers (qtype_multianswer's ANSWER_START_REGEX)
_CLOZE = re.compile(
    r"\{[0-9]*:(?:NUMERICAL|NM|SHORTANSWER(?:_C)?|SAC?|MWC?|MULTICHOICE(?:_[VH]?S|_[VH])?"
    r"|MC[VH]?S?|MULTIRESPONSE(?:_H?S|_H)?|MR[H]?S?):"
)
_TRUE = ("T", "TRUE")
_FALSE = ("F", "FALSE")


def _protect(text: str) -> str:
    return _ESCAPE_RE.sub(lambda m: _ESCAPES[m[1]], text)


def _restore(text: str) -> str:
    return _PLACEHOLDER.sub(lambda m: _UNESCAPE[m[0]], text)


@dataclass
class _Block:
    line: int
    lines: list[str]

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    def line_at(self, offset: int) -> int:
        return self.line + self.text.count("\n", 0, offset)


def _blocks(text: str) -> list[_Block]:
    """Questions, as Moodle splits them: at blank lines, with `//` comment lines blanked
    and every line trimmed (qformat_default::readquestions); and, beyond Moodle, before a
    `$CATEGORY:` line that follows a question's lines, where Moodle would read the whole
    block as a category and lose its questions."""
    blocks: list[_Block] = []
    current: _Block | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not stripped:
            current = None
            continue
        line = "" if stripped.startswith("//") else stripped
        category = line.startswith("$CATEGORY:")
        if (
            current is not None
            and category
            and any(kept and not kept.startswith("$CATEGORY:") for kept in current.lines)
        ):
            current = None
        if current is None:
            if not line:
                continue
            current = _Block(number, [])
            blocks.append(current)
        current.lines.append(line)
    for block in blocks:
        while block.lines and not block.lines[-1].strip():
            block.lines.pop()
    return blocks


class _Text:
    """Turns GIFT text in a format into bank text, warning about what is lost."""

    def __init__(self, problems: Problems) -> None:
        self.problems = problems

    def split_format(self, text: str, default: str) -> tuple[str, str]:
        if text.startswith("["):
            end = text.find("]")
            if end > 0 and text[1:end] in _FORMATS:
                return text[end + 1 :], text[1:end]
        return text, default

    def convert(self, text: str, fmt: str, line: int, choice: int = 0) -> str:
        """The text in bank form; with `choice` (its number), "" is an error: a choice
        needs text, and a picture is none."""
        text = _restore(text).strip()
        if fmt == "plain":
            plain = tex_delimiters(literal(text))
            if choice and not plain:
                self.problems.add(line, f"choice {choice} is empty")
            return plain
        try:
            if fmt == "markdown":
                converted = markdown_to_text(text)
            else:  # Moodle's own format is HTML whose line breaks are breaks
                converted = html_to_text(text.replace("\n", "<br>") if fmt == "moodle" else text)
        except MarkdownProblem as problem:
            self.problems.add(line, str(problem))
            return ""
        if choice and not converted.text:
            lacks = "is only a picture, which a choice cannot hold"
            self.problems.add(
                line, f"choice {choice} {lacks if converted.pictures else 'is empty'}"
            )
            return ""
        if converted.pictures:
            self.problems.warn(
                line, "an image in GIFT text was dropped: GIFT files carry no images"
            )
        for link in converted.links:
            self.problems.warn(line, link.lost())
        for loss in converted.losses():
            self.problems.warn(line, loss)
        return tex_delimiters(converted.text)


_KINDS = {
    "cloze": "a cloze (embedded answers) question",
    "description": "a description (no answers)",
    "essay": "an essay question",
    "numerical": "a numerical question",
    "match": "a matching question",
    "shortanswer": "a short-answer question",
}


def _kind(answers: str) -> str:
    if answers == "":
        return "essay"
    if answers.startswith("#"):
        return "numerical"
    if "~" in answers:
        return "multichoice"
    if "=" in answers and "->" in answers:
        return "match"
    head = answers.split("#", 1)[0].strip()
    if head in _TRUE + _FALSE:
        return "truefalse"
    return "shortanswer"


def read(path: str, data: bytes, options: ReadOptions) -> Source:
    problems = Problems(path)
    text = decode(path, data, "a GIFT file")
    converter = _Text(problems)
    questions: list[Question] = []
    skipped = 0
    tags: tuple[str, ...] = ()
    title = ""
    for block in _blocks(_protect(text)):
        body = block.text.strip()
        # each category line in turn (a file may stack several above a question): the
        # last names the questions' category, the first one of the file the title
        while body.startswith("$CATEGORY:"):
            first, _, rest = body.partition("\n")
            category = _restore(first[len("$CATEGORY:") :]).strip()
            parts = category_levels(category)
            tag = tag_of("::".join(parts))
            tags = (tag,) if tag else ()
            title = title or (parts[-1] if parts else "")
            body = rest.strip()
        if not body:
            continue
        line = _line_of(block, body, 0)
        name, body = _title(body)
        mark = len(problems.found)
        question, was_skipped = _question(
            line, name, body, block, converter, problems, tags, options.language
        )
        if problems.skipped_since(mark, name):
            skipped += 1
            continue
        skipped += was_skipped
        if question is not None:
            questions.append(placed(question, len(questions), skipped))
    if not questions and not skipped and not problems.found:
        raise problems.fail(1, "no GIFT questions found")
    return Source(
        path=path,
        questions=tuple(questions),
        title=title or Path(path).stem,
        skipped=skipped,
        diagnostics=tuple(sorted(problems.found)),
    )


def _title(body: str) -> tuple[str, str]:
    """A question's `::title::` (or "") and the rest of it."""
    if not body.startswith("::"):
        return "", body
    end = body.find("::", 2)
    if end < 0:
        return "", body[2:]
    return _restore(body[2:end]).strip(), body[end + 2 :].strip()


def _question(
    line: int,
    name: str,
    body: str,
    block: _Block,
    converter: _Text,
    problems: Problems,
    tags: tuple[str, ...],
    language: str,
) -> tuple[Question | None, int]:
    """One question block after its title; (the question or None, 1 if it is of a kind
    that cannot become an item). An error skips it (`Problems.skipped_since`)."""
    only = ": only multiple-choice and true/false questions become items"
    braces = _braces(body, block, problems)
    if braces is None:
        return None, 0
    start, finish = braces
    if start < 0:
        problems.warn(line, f"skipped {_KINDS['description']}{only}")
        return None, 1
    answers = body[start + 1 : finish].strip()
    after = body[finish + 1 :]
    if _CLOZE.search(body, start):
        # Moodle's GIFT reader takes `{1:MC:~a~=b}` for a multiple choice with "1:MC:" as
        # a choice, and leaves the other blocks in the text, their answers shown
        problems.warn(line, f"skipped {_KINDS['cloze']}{only}")
        return None, 1
    several = "{" in after
    # Moodle puts the blank where the answers were, with the spacing around them as
    # written, unless the text ends with a '}' (then the answers follow the question)
    blank = "" if body.endswith("}") else "_____"
    stem_text, fmt = converter.split_format((body[:start] + blank + after).strip(), "moodle")
    general = ""
    split = answers.rfind("####")
    if split >= 0:
        general = answers[split + 4 :]
        answers = answers[:split].strip()
    kind = _kind(answers)
    if kind not in ("multichoice", "truefalse"):
        first = " (its first answer block, which Moodle reads as its answers)" if several else ""
        problems.warn(line, f"skipped {_KINDS[kind]}{first}{only}")
        return None, 1
    if several:
        problems.warn(
            _line_of(block, body, finish + 1 + after.find("{")),
            "more than one answer block: the first is the choices and the rest is question "
            "text, braces and all, as Moodle reads it (write \\{ and \\} for literal braces)",
        )
    question_text = converter.convert(stem_text, fmt, line)
    general_text, general_fmt = converter.split_format(general.strip(), fmt)
    explanation = converter.convert(general_text, general_fmt, line) or None
    if not question_text and name:
        # `::What is a shard?::{=...}`: Moodle imports it with no text, its title the name
        problems.warn(line, "the question has no text but its title, which becomes its text")
        question_text = tex_delimiters(literal(name))
    if not question_text:
        problems.add(line, "the question has no text")
        return None, 0
    parsed = _choices_of(kind, answers, fmt, converter, line, language)
    if parsed is None:
        return None, 0
    choices, shuffle = parsed
    if not check_choice_count(problems, line, len(choices)):
        return None, 0
    if not any(c.correct for c in choices):
        problems.warn(line, "no choice has a positive weight; the answer is left as TODO")
    return (
        Question(
            line=line,
            question=question_text,
            choices=choices,
            name=name,
            explanation=explanation,
            answered=any(c.correct for c in choices),
            tags=tags,
            shuffle=shuffle,
        ),
        0,
    )


def _braces(body: str, block: _Block, problems: Problems) -> tuple[int, int] | None:
    """Where the answer block is: the indices of its '{' and its '}' in `body`, (-1, -1)
    if the question has none; None if its braces are wrong (reported)."""
    start = body.find("{")
    finish = body.find("}", start + 1) if start >= 0 else body.find("}")
    if start < 0 and finish < 0:
        return -1, -1
    stray = body.find("}")
    if start < 0 or 0 <= stray < start:
        problems.add(
            _line_of(block, body, stray),
            "'}' without an opening '{' (write \\} for a literal brace)",
        )
        return None
    if finish < 0:
        problems.add(
            _line_of(block, body, start),
            "unclosed brace: this '{' has no '}' before the next blank line "
            "(write \\{ for a literal brace)",
        )
        return None
    after = body[finish + 1 :]
    # Moodle reads the first {...} as the answers and whatever follows as text, braces
    # and all (qformat_gift::readquestion); a '}' with no '{' after the block is a slip
    # (`{=set {1} ~list}` cut at the first '}')
    if "}" in after and "{" not in after:
        problems.add(
            _line_of(block, body, finish + 1 + after.find("}")),
            "'}' without an opening '{' (write \\} for a literal brace)",
        )
        return None
    inner = body.find("{", start + 1, finish)
    if inner >= 0:
        # Moodle's answers run from the first '{' to the first '}': one inside is text
        problems.warn(
            _line_of(block, body, inner),
            "a '{' inside the answers is read as text, as Moodle reads it (write \\{ to say so)",
        )
    return start, finish


def _choices_of(
    kind: str, answers: str, fmt: str, converter: _Text, line: int, language: str
) -> tuple[tuple[Choice, ...], bool | None] | None:
    """A multiple-choice or true/false question's choices, and its shuffle (False: the
    order of true and false is kept; None: the bank's default)."""
    if kind == "truefalse":
        return _true_false(answers, fmt, converter, line, language), False
    parsed = _choices(answers, fmt, converter, line, language)
    if parsed is None:
        return None
    return parsed, None


def _line_of(block: _Block, body: str, index: int) -> int:
    """The file line of `body[index]`, `body` being a piece of its block."""
    at = block.text.find(body)
    return block.line_at(max(at, 0) + index)


def _choices(
    answers: str, fmt: str, converter: _Text, line: int, language: str
) -> tuple[Choice, ...] | None:
    """The choices, graded as Moodle grades them: a question with an `=` answer is
    single-answer, one without is multiple-answer (`format.php`)."""
    pieces = answers.replace("=", "~=").split("~")
    if pieces and not pieces[0].strip():
        pieces = pieces[1:]
    elif pieces:
        converter.problems.warn(
            line, f"text before the first choice was dropped: {_restore(pieces[0]).strip()!r}"
        )
        pieces = pieces[1:]
    choices, weights = [], []
    # `~=right`, as authors write it, splits into an empty choice and `=right`: Moodle
    # keeps the empty one in its list but saves no answer without text (the
    # multichoice type's `save_question_options`), so the question has the others
    pieces = [piece.strip() for piece in pieces if piece.strip()]
    number = 0
    for written in pieces:
        piece, weight = written, 0.0
        if piece.startswith("="):
            weight, piece = 1.0, piece[1:]
        else:
            match = _WEIGHT.match(piece)
            if match:
                weight, piece = float(match[1]) / 100, piece[match.end() :]
        text, _, feedback = piece.partition("#")
        if not text.strip() and weight <= 0:
            # `~%-25%~/etc/hosts`: a weight with no text, which Moodle saves no answer for
            converter.problems.warn(
                line, f"a choice with no text was dropped: {_restore(written)!r}"
            )
            continue
        number += 1
        body, body_fmt = converter.split_format(text.strip(), fmt)
        why_text, why_fmt = converter.split_format(feedback.strip(), fmt)
        choice = converter.convert(body, body_fmt, line, number)
        if not choice:
            return None
        choices.append(Choice(choice, weight > 0, converter.convert(why_text, why_fmt, line)))
        weights.append(weight)
    return graded(choices, weights, "=" in answers, language, converter.problems, line)


def _true_false(
    answers: str, fmt: str, converter: _Text, line: int, language: str
) -> tuple[Choice, ...]:
    parts = answers.split("#", 2)
    truth = parts[0].strip() in _TRUE
    wrong = converter.convert(parts[1], fmt, line) if len(parts) > 1 else ""
    right = converter.convert(parts[2], fmt, line) if len(parts) > 2 else ""
    true_word, false_word = l10n.true_false(language)
    return (
        Choice(true_word, truth, right if truth else wrong),
        Choice(false_word, not truth, wrong if truth else right),
    )


def sniff(text: str) -> int:
    score = 0
    if re.search(r"^\s*\$CATEGORY:", text, re.MULTILINE):
        score += 60
    if re.search(r"^\s*::[^:\n]+::", text, re.MULTILINE):
        score += 40
    if re.search(r"\{\s*(?:[=~]|T\s*\}|F\s*\}|TRUE|FALSE)", text):
        score += 50
    return min(score, 95)


FORMAT = Format(
    name="gift",
    title="GIFT",
    extensions=(".gift",),
    read=read,
    sniff=sniff,
    write=write,
    export_extension=".gift",
)
