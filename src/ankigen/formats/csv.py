"""The `csv` format: a spreadsheet, one item per row, comma- or tab-separated.

The first row names the columns, in any order (case and spaces do not matter):

    id, question, choice1 ... choice8, answer, explanation, tags, image, image_alt

and optionally `explanation_image`, `explanation_image_alt`, `shuffle`, `recall`
and `why1` ... `why8` (each choice's feedback). `answer`: choice numbers (`2`,
`1,3`), letters (`B`, `A,C`) or a choice's text; empty, a TODO. Tags are separated
by spaces. UTF-8 with or without a byte-order mark, quoted as RFC 4180 says; tabs or
`;` in the header separate as they do; Kahoot's, Blooket's, Gimkit's and Quizizz's templates
are known.
A bad header refuses the file; a row that cannot become an item is skipped, warned.
"""

from __future__ import annotations

import csv
import difflib
import io
import re
from collections.abc import Callable
from pathlib import Path

from ankigen.bank.model import MAX_CHOICES, MIN_CHOICES
from ankigen.formats.answercell import answer_picks
from ankigen.formats.model import (
    Choice,
    Format,
    Problems,
    Question,
    ReadOptions,
    Source,
    decode,
    placed,
)

CHOICES = [f"choice{n}" for n in range(1, MAX_CHOICES + 1)]
WHYS = [f"why{n}" for n in range(1, MAX_CHOICES + 1)]
COLUMNS = [
    "id",
    "question",
    *CHOICES,
    "answer",
    "explanation",
    "tags",
    "image",
    "image_alt",
    "explanation_image",
    "explanation_image_alt",
    "shuffle",
    "recall",
    *WHYS,
]
# OWASP's CSV injection rule: a cell a spreadsheet would run as a formula starts with
# one of these; it is written after an apostrophe (the spreadsheet's own mark of text),
# and so is a cell that already starts with apostrophes before one, so that reading
# drops exactly one and every text comes back as it was
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _runs_as_formula(cell: str) -> bool:
    return cell.lstrip("'").startswith(_FORMULA_START)


def neutralized(cell: str) -> str:
    """The cell as written: one apostrophe more before a would-be formula."""
    return "'" + cell if _runs_as_formula(cell) else cell


def restored(cell: str) -> str:
    """The cell as written by `neutralized`, back to its text."""
    return cell[1:] if cell.startswith("'") and _runs_as_formula(cell) else cell


_EXTRA_CHOICE = re.compile(r"(choice|why)([0-9]{1,3})")
_TRUE = {"true", "yes", "1", "y"}
_FALSE = {"false", "no", "0", "n"}


def _delimiter(path: str, first_line: str) -> str:
    if Path(path).suffix.lower() in (".tsv", ".tab") or "\t" in first_line:
        return "\t"
    if ";" in first_line and "," not in first_line:
        return ";"
    return ","


def _loose(cell: str) -> str:
    """A header as people label it, without its notes: `Time limit (sec) – 5, 10, ...`
    is `time limit`, `Answer 1 - max 75 characters` is `answer 1`."""
    head = re.split(r"\s[-–—]\s|\(", cell.strip().lower(), maxsplit=1)[0]
    return " ".join(head.split())


# Kahoot's quiz template (kahoot.com, "Import spreadsheet"): its headers, loosely read
_KAHOOT = {
    "question": "question",
    **{f"answer {n}": f"choice{n}" for n in range(1, 5)},
    "time limit": "",
    "correct answer": "answer",
    "image link": "",
}


# Blooket's: Kahoot's columns, the question under "Question Text", rows numbered
_BLOOKET = {**_KAHOOT, "question": "", "question text": "question", "question #": ""}


# Gimkit's ("Import from spreadsheet"): the right answer's text, then up to three wrong
# ones; that column is both the first choice and the answer (`_ANSWER_IS_CHOICE1`)
_GIMKIT = {
    "question": "question",
    "correct answer": "choice1",
    **{f"incorrect answer {n}": f"choice{n + 1}" for n in range(1, 4)},
}
_ANSWER_IS_CHOICE1 = "Gimkit's quiz template"


# Quizizz's (now Wayground, "Import from spreadsheet"): a question type per row, up to five
# options, the answer by option number ("1,3" for a checkbox question)
_KIND = "question type"
_QUIZIZZ = {
    "question text": "question",
    _KIND: _KIND,
    **{f"option {n}": f"choice{n}" for n in range(1, 6)},
    "correct answer": "answer",
    "time in seconds": "",
    "image link": "",
    "answer explanation": "explanation",
}
# its types that are items; the others (fill-in-the-blank, open-ended, poll, draw ...)
# are skipped as GIFT's and Moodle's other kinds are
_QUIZIZZ_ITEMS = ("multiple choice", "checkbox")


def _layout(cells: list[str]) -> tuple[str, dict[str, str]]:
    """A known spreadsheet layout the header is in: its name and columns, or ("", {})."""
    names = {_loose(cell) for cell in cells if cell.strip()}
    if {"question", "correct answer", "incorrect answer 1"} <= names:
        return _ANSWER_IS_CHOICE1, _GIMKIT
    if {"question text", "option 1", "option 2", "correct answer"} <= names:
        return "Quizizz's quiz template", _QUIZIZZ
    if not {"answer 1", "answer 2", "correct answer"} <= names:
        return "", {}
    if "question" in names:
        return "Kahoot's quiz template", _KAHOOT
    return ("Blooket's quiz template", _BLOOKET) if "question text" in names else ("", {})


_IGNORED = "ignored:"
# headers other tools and teachers use for one of ours, suggested (never guessed)
_SAME_MEANING = {
    **dict.fromkeys(
        ["correct", "correct answer", "correct answers", "key", "answer key", "solution"],
        "answer",
    ),
    **dict.fromkeys(["feedback", "general feedback", "rationale"], "explanation"),
    **dict.fromkeys(["question text", "prompt", "stem"], "question"),
}
_LETTERED = re.compile(r"(option|answer|choice|alternative|response)[\s_#.]*([a-h])")


def _suggestion(cell: str) -> str:
    """What to say about an unknown column: never a column of another meaning."""
    loose = _loose(cell)
    numbered = re.fullmatch(r"(\D*?)[\s_#.]*([0-9]{1,2})", loose)
    if numbered and 1 <= int(numbered[2]) <= MAX_CHOICES:
        word = numbered[1].strip()
        column = "why" if word in ("why", "feedback", "rationale", "comment") else "choice"
        return f"; did you mean '{column}{int(numbered[2])}'?"
    lettered = _LETTERED.fullmatch(loose)
    if lettered:
        return f"; did you mean 'choice{ord(lettered[2]) - ord('a') + 1}'?"
    if loose in _SAME_MEANING:
        return f"; did you mean {_SAME_MEANING[loose]!r}?"
    name = re.sub(r"[\s-]+", "_", cell.strip().lower())
    hint = difflib.get_close_matches(name, COLUMNS, n=1, cutoff=0.85)
    if hint:
        return f"; did you mean {hint[0]!r}?"
    known = "id, question, choice1-choice8, answer, explanation, tags, image, image_alt, "
    known += "explanation_image, explanation_image_alt, shuffle, recall, why1-why8"
    return f"; the columns are {known}, or map it with --columns '{cell.strip()}=COLUMN'"


_HEADER_WITHIN = 30
"""Rows read, at most, looking for the header."""


def _names_a_question(cells: list[str], mapped: dict[str, str]) -> bool:
    """Whether a row is a header: it names the question column, ours or a known layout's,
    or one `--columns` maps to it."""
    given = {_loose(key) for key, column in mapped.items() if column == "question"}
    names = {_loose(cell) for cell in cells if cell.strip()}
    plain = {re.sub(r"[\s-]+", "_", cell.strip().lower()) for cell in cells}
    return "question" in plain or bool(given & names) or bool(_layout(cells)[0])


def _header(
    cells: list[str], problems: Problems, line: int, mapped: dict[str, str]
) -> dict[str, int] | None:
    """Each column's place; `mapped`: `--columns`, header (loosely) to column ("" to
    ignore it)."""
    columns: dict[str, int] = {}
    ok = True
    layout, known = _layout(cells)
    if layout:
        problems.warn(line, f"the header is {layout}'s: its columns are read as such")
    given = {_loose(key): value for key, value in mapped.items()}
    for index, cell in enumerate(cells):
        loose = _loose(cell)
        if loose in given or loose in known:
            name = given[loose] if loose in given else known[loose]
            if not name:
                problems.warn(line, f"column {cell.strip()!r} is not part of an item; ignored")
                columns[f"{_IGNORED}{index}"] = index  # named, so its cells are no surprise
                continue
        else:
            name = re.sub(r"[\s-]+", "_", cell.strip().lower())
        if not name:
            if layout:  # a known layout's own unnamed column (Kahoot numbers its rows)
                columns[f"{_IGNORED}{index}"] = index
            continue
        extra = _EXTRA_CHOICE.fullmatch(name)
        if extra and int(extra[2]) > MAX_CHOICES:
            problems.add(line, f"column {cell!r}: an item has at most {MAX_CHOICES} choices")
            ok = False
        elif name not in COLUMNS and not (name == _KIND and layout):
            problems.add(line, f"unknown column {cell!r}{_suggestion(cell)}")
            ok = False
        elif name in columns:
            problems.add(line, f"column {cell!r} appears twice")
            ok = False
        else:
            columns[name] = index
    completed = _completed(columns, layout, problems, line, ok)
    return completed if ok else None


def _completed(
    columns: dict[str, int], layout: str, problems: Problems, line: int, known: bool
) -> dict[str, int] | None:
    """The columns, if they have the ones an item needs; each missing one reported (the
    choices only where every column was `known`: else they may be under unknown names)."""
    needed = ("question", "choice1", "choice2") if known else ("question",)
    missing = [name for name in needed if name not in columns]
    for name in missing:
        problems.add(line, f"the header has no {name!r} column (the first row names the columns)")
    if layout == _ANSWER_IS_CHOICE1 and "choice1" in columns and "answer" not in columns:
        columns["answer"] = columns["choice1"]  # the right answer's text: choice 1's
    return None if missing else columns


def read(path: str, data: bytes, options: ReadOptions) -> Source:
    problems = Problems(path)
    text = decode(path, data, "a CSV file")
    first_line = text.split("\n", 1)[0]
    line = 1
    declared = re.fullmatch(r"sep=(.)\r?", first_line)
    if declared:  # Excel's own line naming the separator; the header follows it
        text = "\n" + text.split("\n", 1)[1] if "\n" in text else ""
        first_line = text[1:].split("\n", 1)[0]
    delimiter = declared[1] if declared else _delimiter(path, first_line)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    questions: list[Question] = []
    columns: dict[str, int] | None = None
    mapped = dict(options.columns)
    # rows before the header (a template's title and instructions, as Kahoot's has):
    # the header is the first row that names a question column, within the first rows
    before: list[tuple[int, list[str]]] = []
    width = 0
    skipped = 0

    def take(rows: list[tuple[int, list[str]]]) -> bool:
        """The header and the rows after it; False once the header is refused. A row's
        own problem skips that row (`Problems.skipped_since`)."""
        nonlocal columns, width, skipped
        for start, row in rows:
            if columns is None:
                columns = _header(row, problems, start, mapped)
                if columns is None:
                    return False
                width = len(row)
                continue
            mark = len(problems.found)
            question = _row(row, columns, width, start, problems)
            at = columns.get("id")
            name = restored(row[at].strip()) if at is not None and at < len(row) else ""
            if problems.skipped_since(mark, name) or question is None:
                skipped += 1  # in error, or of a Quizizz type that is no item
            else:
                questions.append(placed(question, len(questions), skipped))
        return True

    try:
        for row in reader:
            start, line = line, reader.line_num + 1
            if not any(cell.strip() for cell in row):
                continue
            if columns is None and not _names_a_question(row, mapped):
                before.append((start, row))
                if len(before) < _HEADER_WITHIN:
                    continue
                rows, before = before, []
                if not take(rows):
                    break
                continue
            if columns is None and before:
                problems.warn(
                    before[0][0],
                    f"{len(before)} row(s) before the header, on line {start}, were skipped",
                )
                before = []
            if not take([(start, row)]):
                break
        if before:  # no header found in a short file: its first row is taken as one
            take(before)
    except csv.Error as error:
        problems.add(reader.line_num or line, f"not valid CSV: {error}")
    if columns is not None and not questions and not problems.found:
        raise problems.fail(2, "the file has a header but no rows")
    return Source(
        path=path,
        questions=tuple(questions),
        title=Path(path).stem,
        skipped=skipped,
        diagnostics=tuple(sorted(problems.found)),
    )


def _row(
    row: list[str], columns: dict[str, int], width: int, line: int, problems: Problems
) -> Question | None:
    if not _fits_header(row, columns, width, line, problems):
        return None
    # a name the header lacks, or a row too short for it, reads as an empty cell
    cells = {name: restored(row[i].strip()) for name, i in columns.items() if i < len(row)}

    def cell(name: str) -> str:
        return cells.get(name, "")

    kind = " ".join(re.sub(r"[-_]", " ", cell(_KIND).lower()).split())  # `Multiple-Choice` too
    if kind and kind not in _QUIZIZZ_ITEMS:
        problems.warn(
            line,
            f"skipped a question of type {cell(_KIND)!r}: only multiple-choice and checkbox "
            "questions become items",
        )
        return None

    texts = [cell(name) for name in CHOICES]
    last = _choice_count(texts, line, problems)
    if last is None:
        return None
    question = cell("question")
    if not question:
        problems.add(line, "the question is empty")
        return None
    picks = answer_picks(cell("answer"), texts, last, line, problems)
    if picks is None:
        return None
    flags = _flags(cell, line, problems)
    if flags is None:
        return None
    return Question(
        line=line,
        question=question,
        choices=tuple(
            Choice(texts[n - 1], n in picks, cell(f"why{n}")) for n in range(1, last + 1)
        ),
        name=cell("id"),
        explanation=cell("explanation") or None,
        answered=bool(picks),
        tags=tuple(cell("tags").split()),
        shuffle=flags["shuffle"],
        recall=flags["recall"],
        image=cell("image"),
        image_alt=cell("image_alt"),
        explanation_image=cell("explanation_image"),
        explanation_image_alt=cell("explanation_image_alt"),
    )


def _fits_header(
    row: list[str], columns: dict[str, int], width: int, line: int, problems: Problems
) -> bool:
    """Whether the row has no text beyond the header's columns; text in a column the
    header does not name is ignored, with a warning."""
    if len(row) > width and any(cell.strip() for cell in row[width:]):
        problems.add(
            line,
            f"this row has {len(row)} cells but the header names {width} columns "
            f"(a choice beyond {MAX_CHOICES}, or a comma in an unquoted cell?)",
        )
        return False
    named = set(columns.values())
    for index, text in enumerate(row[:width]):
        if index not in named and text.strip():
            problems.warn(
                line, f"column {index + 1} has no name in the header; its text {text!r} was ignored"
            )
    return True


def _choice_count(texts: list[str], line: int, problems: Problems) -> int | None:
    """The number of choices, if they have no gap and are as many as an item may have."""
    last = max((n for n, t in enumerate(texts, start=1) if t), default=0)
    gaps = [n for n in range(1, last) if not texts[n - 1]]
    if gaps:
        problems.add(line, f"choice{gaps[0]} is empty but choice{last} is not")
        return None
    if not MIN_CHOICES <= last <= MAX_CHOICES:
        problems.add(
            line, f"this row has {last} choices; an item needs {MIN_CHOICES} to {MAX_CHOICES}"
        )
        return None
    return last


def _flags(
    cell: Callable[[str], str], line: int, problems: Problems
) -> dict[str, bool | None] | None:
    """The row's shuffle and recall: true, false, or None where empty; None if one is
    neither (reported)."""
    flags: dict[str, bool | None] = {}
    for name in ("shuffle", "recall"):
        text = cell(name).lower()
        flags[name] = text in _TRUE if text in _TRUE or text in _FALSE else None
        if text and flags[name] is None:
            problems.add(line, f"{name} {cell(name)!r} must be true or false")
            return None
    return flags


def sniff(text: str) -> int:
    header = re.sub(r"[\s\"'_-]", "", text.split("\n", 1)[0].lower())
    numbered = "choice1" in header or "answer1" in header  # ours, or Kahoot's "Answer 1"
    return 90 if "question" in header and numbered else 0


def write(source: Source, media_dir: Path) -> bytes:
    """The bank as CSV with a header, UTF-8 with a byte-order mark (spreadsheets want one)."""
    width = max((len(q.choices) for q in source.questions), default=MIN_CHOICES)
    has_why = any(c.why for q in source.questions for c in q.choices)
    has_images = any(q.image or q.explanation_image for q in source.questions)
    header = ["id", "question", *CHOICES[:width], "answer", "explanation", "tags"]
    if has_images:
        header += ["image", "image_alt", "explanation_image", "explanation_image_alt"]
    header.append("shuffle")
    has_recall = any(q.recall for q in source.questions)
    if has_recall:
        header.append("recall")
    if has_why:
        header += WHYS[:width]
    out = io.StringIO(newline="")
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(header)
    for q in source.questions:
        texts = [c.text for c in q.choices] + [""] * (width - len(q.choices))
        row = [q.name, q.question, *texts, ",".join(map(str, q.answer))]
        row += [q.explanation or "", " ".join(q.tags)]
        if has_images:
            row += [q.image, q.image_alt, q.explanation_image, q.explanation_image_alt]
        row.append("" if q.shuffle is None else str(q.shuffle).lower())
        if has_recall:
            row.append("" if q.recall is None else str(q.recall).lower())
        if has_why:
            row += [c.why for c in q.choices] + [""] * (width - len(q.choices))
        writer.writerow([neutralized(cell) for cell in row])
    return ("\ufeff" + out.getvalue()).encode("utf-8")


FORMAT = Format(
    name="csv",
    title="CSV",
    extensions=(".csv", ".tsv", ".tab"),
    read=read,
    sniff=sniff,
    write=write,
    export_extension=".csv",
)
