"""The `page` format: quiz pages copied from the web, as text.

Three page shapes are understood:

- numbered questions (`1. ...`, possibly indented) with bullet choices
  (`•`, `-` or `*`, possibly indented);
- one flat list where questions and choices all start with `- `; the lines are
  grouped into items by question punctuation of any script, the question count
  in the page header and a uniform number of choices, and never by a guess:
  an ambiguous page is refused with a hint to pass `--choices`;
- either of these under page furniture: a level line ("... · Intermediate
  level"), the title, a description, "Question 1 of 8", a preview of the first
  question, "answers and explanations appear as you take the quiz".

Text is kept exactly as written, trimmed of surrounding white space only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ankigen.bank.model import MAX_CHOICES, MIN_CHOICES
from ankigen.bank.yamltree import other_encoding
from ankigen.core.errors import Diagnostic, InvalidBanks
from ankigen.formats.model import (
    Choice,
    Format,
    FormatError,
    Problems,
    Question,
    ReadOptions,
    Source,
    check_choice_count,
    fatal,
)
from ankigen.text.html import literal
from ankigen.text.markup import FENCE_LINE

MAX_PAGE_BYTES = 4 * 1024 * 1024

_NUMBERED = re.compile(r"^\s*(\d{1,4})\s*[.)]\s+(\S.*)$")
_BULLET = re.compile(r"^\s*[•\-*‣◦▪●]\s+(\S.*)$")
_DASH = re.compile(r"^\s*-\s+(\S.*)$")
_NUMBER = re.compile(r"\d+")
_IN_WORD_NUMBER = re.compile(r"[A-Za-z]\d|\d[A-Za-z]")
# question marks of many scripts: Latin, Arabic, full-width, Greek (;), Armenian,
# Ethiopic, Devanagari/Bengali texts use '?' too; and a closing colon
_QUESTION_END = re.compile(r"[?？؟;;՞፧⸮︖﹖][\s\"'”’»)\]]*$")
_COLON_END = re.compile(r"[:：][\s\"'”’»)\]]*$")

# Words that mark page furniture in the languages we know; other languages
# still import, their furniture may just land in the description.
_LEVEL_WORDS = (
    "level niveau nivel livello stufe seviye уровень سطح مستوى स्तर স্তর ipele ìpele "
    "レベル 中級 初級 上級 beginner intermediate advanced débutant intermédiaire avancé "
    "básico intermedio avanzado anfänger fortgeschritten"
).split()
_ANSWER_WORDS = "answer réponse respuesta resposta antwort উত্তর idahun उत्तर جواب إجاب tontu".split()
_EXPLANATION_WORDS = (
    "explanation explication explicaci explicaç erklärung ব্যাখ্যা alaye स्पष्टीकरण وضاحت شرح leeral"
).split()


class PageError(FormatError):
    """A quiz page could not be turned into a bank."""


@dataclass(frozen=True)
class PageItem:
    question: str
    choices: tuple[str, ...]
    line: int


@dataclass(frozen=True)
class Page:
    title: str
    description: str
    level: str
    items: tuple[PageItem, ...]
    count: int | None
    """The question count the header announces, if any."""
    dropped: tuple[tuple[int, str], ...] = field(default=())
    """Furniture lines that were dropped, with their line numbers."""
    notes: tuple[tuple[int, str], ...] = field(default=())
    """Things the author should check, with their line numbers."""


@dataclass
class _Line:
    number: int
    text: str


def decode_page(path: str, data: bytes) -> str:
    if len(data) > MAX_PAGE_BYTES:
        raise PageError(f"{path}: {len(data)} bytes is too large for a quiz page")
    if not data.strip():
        raise PageError(f"{path}: the file is empty")
    encoding = other_encoding(data)  # Notepad's "Unicode", Excel's "Unicode Text"
    if encoding:
        raise PageError(f"{path}: {encoding} text, not UTF-8: save the file as UTF-8")
    if b"\x00" in data:
        raise PageError(f"{path}: this is a binary file, not the text of a quiz page")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise PageError(f"{path}:{line}: not UTF-8 text; save the page as UTF-8") from None
    text = text.removeprefix("\ufeff")
    control = [c for c in text if ord(c) < 32 and c not in "\t\n\r\f\v"]
    if len(control) > 8:
        raise PageError(f"{path}: this looks like binary data, not the text of a quiz page")
    return text


def parse_page(text: str, path: str = "<page>", choices: int | None = None) -> Page:
    """Find the furniture and the items of a quiz page."""
    raw_lines = text.splitlines()
    start = _first_numbered_question(raw_lines)
    if start is not None:
        match = _NUMBERED.match(raw_lines[start])
    else:
        start = next((i for i, raw in enumerate(raw_lines) if _DASH.match(raw)), None)
        if start is None:
            raise PageError(
                f"{path}: no questions found: expected numbered questions ('1. ...') "
                "with bullet choices, or a list of '- ' lines"
            )
        match = _DASH.match(raw_lines[start])
    numbered = bool(_NUMBERED.match(raw_lines[start]))
    assert match is not None
    first_question = match[match.lastindex or 1].strip()
    header = [
        _Line(n, raw.strip()) for n, raw in enumerate(raw_lines[:start], start=1) if raw.strip()
    ]
    title, description, level, count, furniture, notes = _read_header(header, first_question)
    if numbered:
        items, dropped = _numbered_items(raw_lines, start)
        if choices is not None:
            uneven = [item for item in items if len(item.choices) != choices]
            if uneven:
                raise PageError(
                    f"{path}:{uneven[0].line}: --choices {choices} was given, but this "
                    f"question has {len(uneven[0].choices)} choices"
                )
        if count is not None and count != len(items):
            notes.append(
                (items[0].line, f"the page header announces {count} questions; found {len(items)}")
            )
    else:
        items, dropped = _dash_items(raw_lines, start, count, choices, path)
    if not title:
        raise PageError(f"{path}: the page has no title line above the questions")
    # a question with too few or too many choices is kept here, where it still counts
    # for --answers, and skipped by `read`
    return Page(
        title=title,
        description=description,
        level=level,
        items=tuple(items),
        count=count,
        dropped=tuple(sorted(furniture + dropped)),
        notes=tuple(sorted(notes)),
    )


def _first_numbered_question(raw_lines: Sequence[str]) -> int | None:
    """Index of the first `N. question` line with choices: a bullet comes before the next
    numbered line (the question may run over several lines first, or show code)."""
    numbered_at: int | None = None
    fenced = ""  # the backticks of the code block the line is in: code, not a question
    for index, raw in enumerate(raw_lines):
        fence = FENCE_LINE.match(raw)
        if fence and not fenced:
            fenced = fence[1]
        elif fence and not fence[2] and len(fence[1]) >= len(fenced):
            fenced = ""
        elif fenced:
            continue
        elif _NUMBERED.match(raw):
            numbered_at = index
        elif numbered_at is not None and _BULLET.match(raw):
            return numbered_at
    return None


def _numbered_items(
    raw_lines: Sequence[str], start: int
) -> tuple[list[PageItem], list[tuple[int, str]]]:
    items: list[PageItem] = []
    dropped: list[tuple[int, str]] = []
    question: list[str] = []
    question_line = 0
    more: list[str] = []  # the question's lines after its first, as written
    current: list[str] = []
    fenced = ""  # the backticks of the code block the question's lines are in

    def close() -> None:
        if question:
            text = "\n".join([*question, *_dedented(more)]).strip()
            items.append(PageItem(text, tuple(current), question_line))

    for number, raw in enumerate(raw_lines[start:], start=start + 1):
        fence = FENCE_LINE.match(raw)
        if fenced or (fence and not current):
            # code is the question's, as written: its lines are neither questions nor choices
            if fence and not fenced:
                fenced = fence[1]
            elif fence and not fence[2] and len(fence[1]) >= len(fenced):
                fenced = ""
            more.append(raw.rstrip())
            continue
        numbered = _NUMBERED.match(raw)
        bullet = _BULLET.match(raw)
        if numbered:
            close()
            question, question_line, more, current = [numbered[2].strip()], number, [], []
        elif bullet:
            current.append(bullet[1].strip())
        elif raw.strip():
            if not current:
                more.append(raw.rstrip())  # a question written over several lines
            else:
                dropped.append((number, raw.strip()))
    close()
    return items, dropped


def _dedented(lines: list[str]) -> list[str]:
    """A question's further lines without the indentation they all share (the page's
    layout), each keeping its own beyond it (code's)."""
    indents = [len(line) - len(line.lstrip()) for line in lines if line.strip()]
    common = min(indents, default=0)
    return [line[common:] for line in lines]


def _has_word(text: str, words: Sequence[str]) -> bool:
    lowered = text.casefold()
    return any(word in lowered for word in words)


def _read_header(
    lines: list[_Line], first_question: str
) -> tuple[str, str, str, int | None, list[tuple[int, str]], list[tuple[int, str]]]:
    level = ""
    content: list[_Line] = []
    furniture: list[tuple[int, str]] = []
    for line in lines:
        if line.text == first_question:  # the page's preview of question 1
            furniture.append((line.number, line.text))
            continue
        if "·" in line.text and not level:
            head, _, tail = line.text.rpartition("·")
            if _has_word(tail, _LEVEL_WORDS):
                level = tail.strip()
                if head.strip():
                    furniture.append((line.number, head.strip()))
                continue
        if _has_word(line.text, _ANSWER_WORDS) and _has_word(line.text, _EXPLANATION_WORDS):
            furniture.append((line.number, line.text))
            continue
        content.append(line)
    title = content[0].text if content else ""
    description = ""
    rest = content[1:]
    if rest and not _looks_like_counter(rest[0].text):
        description = rest[0].text
        rest = rest[1:]
    counts: set[int] = set()
    for line in rest:
        furniture.append((line.number, line.text))
        if _looks_like_counter(line.text):
            numbers = [int(n) for n in _NUMBER.findall(line.text)]
            counts.add(max(numbers))
    notes: list[tuple[int, str]] = []
    count = counts.pop() if len(counts) == 1 else None
    if len(counts) > 1:
        notes.append((rest[0].number, "the page header gives different question counts"))
    return title, description, level, count, furniture, notes


def _looks_like_counter(text: str) -> bool:
    """ "Question 1 of 8", "8 questions": a short line with one or two numbers, none of
    them part of a Latin word (`Q1`, `ES2015`: a heading, a name)."""
    if _IN_WORD_NUMBER.search(text):
        return False
    numbers = [int(n) for n in _NUMBER.findall(text)]
    if len(text.split()) > 8 or not numbers or len(numbers) > 2:
        return False
    return len(numbers) == 1 or numbers[0] <= numbers[1]


def _dash_items(
    raw_lines: Sequence[str],
    first: int,
    count: int | None,
    choices: int | None,
    path: str,
) -> tuple[list[PageItem], list[tuple[int, str]]]:
    entries: list[_Line] = []
    dropped: list[tuple[int, str]] = []
    for index in range(first, len(raw_lines)):
        match = _DASH.match(raw_lines[index])
        if match:
            entries.append(_Line(index + 1, match[1].strip()))
        elif raw_lines[index].strip():
            dropped.append((index + 1, raw_lines[index].strip()))
    groups = _group_dash_lines(entries, count, choices, path)
    items = [
        PageItem(entries[a].text, tuple(e.text for e in entries[a + 1 : b]), entries[a].number)
        for a, b in zip(groups, [*groups[1:], len(entries)], strict=True)
    ]
    return items, dropped


def _is_question(text: str) -> bool:
    return bool(_QUESTION_END.search(text) or _COLON_END.search(text))


def _groupings(entries: list[_Line], total: int) -> dict[tuple[int, ...], tuple[bool, bool]]:
    """The ways to group the dash lines into items, each (its start indices) with whether
    every item has the same number of choices (of several items: one alone is no
    evidence), and whether its questions are exactly the lines that read as questions."""
    marked = {i for i, e in enumerate(entries) if _is_question(e.text)}
    candidates: dict[tuple[int, ...], tuple[bool, bool]] = {}
    if 0 in marked:
        starts = sorted(marked)
        sizes = [b - a - 1 for a, b in zip(starts, [*starts[1:], total], strict=True)]
        if all(MIN_CHOICES <= size <= MAX_CHOICES for size in sizes):
            candidates[tuple(starts)] = (len(sizes) > 1 and len(set(sizes)) == 1, True)
    for k in range(MIN_CHOICES, MAX_CHOICES + 1):
        starts = list(range(0, total, k + 1))
        if total % (k + 1) == 0 and marked <= set(starts):
            candidates[tuple(starts)] = (len(starts) > 1, marked == set(starts))
    return candidates


def _group_dash_lines(
    entries: list[_Line], count: int | None, choices: int | None, path: str
) -> list[int]:
    """Start indices of the items in a flat list of dash lines."""
    total = len(entries)
    where = f"{path}:{entries[0].number}"
    if choices is not None:
        if total % (choices + 1):
            raise PageError(
                f"{where}: {total} list lines cannot be split into questions with "
                f"{choices} choices each"
            )
        return list(range(0, total, choices + 1))

    if count is None and not any(_is_question(entry.text) for entry in entries):
        raise PageError(
            f"{where}: none of these {total} list lines reads as a question (ends in a "
            "question mark or a colon), and the page header gives no question count: "
            "any grouping would be a guess; pass --choices N (the number of choices per "
            "question)"
        )
    candidates = _groupings(entries, total)
    if count is not None:
        candidates = {g: kind for g, kind in candidates.items() if len(g) == count}
    if len(candidates) == 1:
        return list(next(iter(candidates)))
    strongest = [g for g, (uniform, exact) in candidates.items() if uniform and exact]
    if len(strongest) == 1:
        return list(strongest[0])
    if not candidates:
        announced = f" into the {count} questions the header announces" if count else ""
        raise PageError(
            f"{where}: cannot group these {total} list lines{announced}: the question "
            "punctuation and the number of lines do not fit together; "
            "pass --choices N (the number of choices per question)"
        )
    options = sorted({len(g) for g in candidates})
    raise PageError(
        f"{where}: the grouping of these {total} list lines is ambiguous "
        f"({' or '.join(str(n) for n in options)} questions would fit); "
        "pass --choices N (the number of choices per question)"
    )


class AnswersError(ValueError):
    """`--answers` does not fit the page."""


def parse_answers(text: str, page: Page) -> list[tuple[int, ...]]:
    """`--answers 1,2,1+3` as answer tuples, one per item."""
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != len(page.items):
        raise AnswersError(f"{len(parts)} answers given for {len(page.items)} questions")
    answers: list[tuple[int, ...]] = []
    for number, (part, item) in enumerate(zip(parts, page.items, strict=True), start=1):
        try:
            picks = tuple(sorted({int(p) for p in part.split("+")}))
        except ValueError:
            raise AnswersError(f"answer {number} {part!r} is not a choice number") from None
        if not picks or not all(1 <= p <= len(item.choices) for p in picks):
            raise AnswersError(
                f"answer {number} {part!r} is out of range: question {number} has "
                f"{len(item.choices)} choices"
            )
        answers.append(picks)
    return answers


def read(path: str, data: bytes, options: ReadOptions) -> Source:
    try:
        page = parse_page(decode_page(path, data), path, options.choices)
    except PageError as error:
        raise _as_diagnostic(path, error) from None
    picks = parse_answers(options.answers, page) if options.answers is not None else None
    problems = Problems(path)
    questions = []
    skipped = 0
    for number, item in enumerate(page.items):
        mark = len(problems.found)
        if not check_choice_count(problems, item.line, len(item.choices)):
            problems.skipped_since(mark)
            skipped += 1
            continue
        correct = picks[number] if picks is not None else ()
        # a quiz page is plain text: a tag's name on it is text
        choices = tuple(
            Choice(literal(text), n in correct) for n, text in enumerate(item.choices, start=1)
        )
        stem = literal(item.question)
        # its place on the page, skipped questions counted, is its id: two translations of
        # a page, one with a question skipped, still give each question the same id
        questions.append(
            Question(item.line, stem, choices, answered=picks is not None, place=number + 1)
        )
    notes = tuple((n, f"dropped page text: {line}") for n, line in page.dropped)

    warnings = [Diagnostic(path, n, "warning", note) for n, note in page.notes]
    return Source(
        path=path,
        questions=tuple(questions),
        title=page.title,
        description=page.description,
        level=page.level,
        skipped=skipped,
        diagnostics=tuple(sorted(warnings + problems.found)),
        notes=notes,
    )


def _as_diagnostic(path: str, error: PageError) -> InvalidBanks:
    """A page error (`PATH:LINE: message` or `PATH: message`) as `PATH:LINE: error: message`."""
    rest = error.message.removeprefix(f"{path}:")
    number, _, message = rest.partition(": ")
    if number.isdigit():
        return fatal(path, int(number), message)
    return fatal(path, 1, rest.strip())


def sniff(text: str) -> int:
    """Pages are what is left: numbered questions or dash lists score a little."""
    lines = text.splitlines()
    if _first_numbered_question(lines) is not None or any(_DASH.match(r) for r in lines):
        return 10
    return 1


FORMAT = Format(
    name="page",
    title="quiz page",
    extensions=(),
    read=read,
    sniff=sniff,
)
