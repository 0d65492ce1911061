"""The `aiken` format: Moodle's Aiken, one question after another.

    Which collective sums gradients across ranks?
    A. Broadcast
    B) All-reduce
    ANSWER: B

The stem may run over several lines (not past a blank line); choices are `A.` or
`A)` with capital letters in order, a space after them or not (`A)Broadcast`, as
Moodle reads it, when the letter is the next choice's); `ANSWER:` names the correct
letter (`ANSWER: A, C` for
several, an extension Moodle does not read). Aiken has no explanations, so
each becomes a TODO; a question without an `ANSWER:` line gets a TODO answer.
A question that cannot become an item is skipped with a warning, not the file.
"""

from __future__ import annotations

import re
from pathlib import Path

from ankigen.formats.htmltext import tex_delimiters
from ankigen.formats.model import (
    Choice,
    Format,
    Problems,
    Question,
    ReadOptions,
    Source,
    check_choice_count,
    decode,
    placed,
)
from ankigen.text.html import literal

_CHOICE = re.compile(r"^\s*([A-Z])[.)]\s+(\S.*?)\s*$")
# Moodle's reader (`/^[A-Z][).][ \t]?/`) takes a choice without its space; here only
# as the next letter, since a stem of several lines may go on with "U.S. ..." or "E.g."
_TIGHT_CHOICE = re.compile(r"^\s*([A-Z])[.)](\S.*?)\s*$")
_ANSWER = re.compile(r"^\s*ANSWER\s*:\s*(.*?)\s*$", re.IGNORECASE)


class _Draft:
    def __init__(self, line: int) -> None:
        self.line = line
        self.stem: list[str] = []
        self.choices: list[tuple[str, str, int]] = []  # letter, text, line


def read(path: str, data: bytes, options: ReadOptions) -> Source:
    problems = Problems(path)
    text = decode(path, data, "an Aiken file")
    questions: list[Question] = []
    skipped = 0
    draft: _Draft | None = None

    def finish(answer: str | None, line: int) -> None:
        nonlocal draft, skipped
        assert draft is not None
        mark = len(problems.found)
        if answer is None:
            problems.warn(draft.line, "no ANSWER: line; the answer is left as TODO")
        question = _question(draft, answer, line, problems)
        if problems.skipped_since(mark):
            skipped += 1
        elif question is not None:
            questions.append(placed(question, len(questions), skipped))
        draft = None

    def skip(line: int, message: str) -> None:
        """The question being read is skipped: a problem of its own, not the file's."""
        nonlocal draft, skipped
        mark = len(problems.found)
        problems.add(line, message)
        problems.skipped_since(mark)
        skipped += 1
        draft = None

    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            if draft is not None and draft.choices:
                finish(None, number)
            elif draft is not None:
                # lines before a blank line, and no choice: no question, as in Moodle,
                # where each such line starts a new one (a header, a stray "Feedback:")
                skip(draft.line, "lines without choices ('A. ...') before a blank line")
            continue
        answer = _ANSWER.match(raw)
        choice = _CHOICE.match(raw) or _next_choice(raw, draft)
        if answer:
            if draft is None:
                problems.warn(number, "ANSWER: line without a question before it; ignored")
            elif not draft.choices:
                skip(number, "ANSWER: line without choices ('A. ...') before it")
            else:
                finish(answer[1], number)
        elif choice and draft is not None and draft.stem:
            draft.choices.append((choice[1], choice[2], number))
        elif draft is not None and draft.choices:
            # where this question ends is not known: its last choice may go on here
            skip(
                draft.line,
                f"this question's choices are followed by line {number}, neither a choice "
                "('A. ...') nor its ANSWER: line (is a blank line missing between two "
                "questions?)",
            )
            draft = _Draft(number)
            draft.stem.append(raw.strip())
        else:
            if draft is None:
                draft = _Draft(number)
            draft.stem.append(raw.strip())
    if draft is not None:
        if draft.choices:
            finish(None, draft.line)
        else:
            skip(draft.line, "a question without choices ('A. ...') at the end of the file")
    if not questions and not problems.found:
        raise problems.fail(1, "no Aiken questions found")
    return Source(
        path=path,
        questions=tuple(questions),
        title=Path(path).stem,
        skipped=skipped,
        diagnostics=tuple(sorted(problems.found)),
    )


def _next_choice(raw: str, draft: _Draft | None) -> re.Match[str] | None:
    """A choice written without a space after its letter (`B)Correct`), if its letter is
    the one the question's next choice has."""
    tight = _TIGHT_CHOICE.match(raw)
    if tight is None or draft is None or ord(tight[1]) - ord("A") != len(draft.choices):
        return None
    return tight


def _question(draft: _Draft, answer: str | None, line: int, problems: Problems) -> Question | None:
    letters = [letter for letter, _, _ in draft.choices]
    expected = [chr(ord("A") + n) for n in range(len(letters))]
    if letters != expected:
        wrong = next(c for c, e in zip(draft.choices, expected, strict=False) if c[0] != e)
        problems.add(wrong[2], f"choice {wrong[0]} is out of order: choices go A, B, C ...")
        return None
    if not check_choice_count(problems, draft.line, len(letters)):
        return None
    correct: set[str] = set()
    if answer is not None:
        picks = [p.strip().upper() for p in re.split(r"[,\s]+", answer) if p.strip()]
        bad = [p for p in picks if p not in letters]
        if not picks or bad:
            shown = ", ".join(bad) if bad else "nothing"
            problems.add(
                line, f"ANSWER: names {shown}; the choices are {letters[0]} to {letters[-1]}"
            )
            return None
        correct = set(picks)
    return Question(
        line=draft.line,
        # Moodle reads Aiken as plain text, and typesets its $$...$$ as everywhere
        question=tex_delimiters(literal("\n".join(draft.stem))),
        choices=tuple(
            Choice(tex_delimiters(literal(text)), letter in correct)
            for letter, text, _ in draft.choices
        ),
        answered=answer is not None,
    )


def sniff(text: str) -> int:
    answers = len(re.findall(r"^\s*ANSWER\s*:\s*[A-Z]", text, re.MULTILINE))
    choices = len(re.findall(r"^\s*[A-Z][.)]\s*\S", text, re.MULTILINE))
    if answers and choices >= 2 * answers:
        return 80
    return 0


FORMAT = Format(name="aiken", title="Aiken", extensions=(".aiken",), read=read, sniff=sniff)
