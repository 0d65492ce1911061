"""What a spreadsheet's answer cell names: choices by number (`2`, `1,3`), by letter
(`B`, `a, c`, as sheets with "Option A" ... columns write them) or by text (`Paris`),
never guessed where two readings disagree."""

from __future__ import annotations

import re

from ankigen.formats.model import Problems

_NUMBER = re.compile(r"[0-9]+")
_LETTERS = re.compile(r"[A-Za-z]([,;+\s]+[A-Za-z])*")


def answer_picks(
    answer: str, texts: list[str], last: int, line: int, problems: Problems
) -> list[int] | None:
    """The numbers of the choices the answer cell names, by number, letter or text ([] if it
    is empty); None if it names none."""
    if not answer:
        return []
    parts = [p for p in re.split(r"[,;+\s]+", answer) if p]
    # ASCII digits only: str.isdigit() also takes "²" and "①", which int() refuses
    if parts and all(_NUMBER.fullmatch(p) for p in parts):
        picks = [_choice_number(p) for p in parts]
        if not all(1 <= p <= last for p in picks):  # no choice has that number:
            picks = _picked_by_text(answer, texts[:last]) or picks  # is it a text?
    else:
        by_letter = _LETTERS.fullmatch(answer) is not None
        picks = (
            _picked_by_letter(parts, texts[:last])
            if by_letter
            else _picked_by_text(answer, texts[:last])
        )
        if not picks:
            why = (
                "could name choices by their letters or by their text: write their numbers"
                if by_letter
                else "is neither a choice number such as 2 or 1,3, nor the letters of choices "
                "(B, or A,C), nor the text of one choice"
            )
            problems.add(line, f"answer {answer!r} {why}")
            return None
    if not all(1 <= p <= last for p in picks):
        problems.add(line, f"answer {answer!r} is out of range: choices are 1 to {last}")
        return None
    return picks


def _choice_number(digits: str) -> int:
    """An answer's choice number; 0 (out of range) for one of more digits than any choice
    number has, which int() is never given: it refuses strings of over 4,300 digits."""
    significant = digits.lstrip("0")
    return int(significant) if len(significant) <= 3 else 0


def _folded(text: str) -> str:
    """A choice's text as an answer cell names it: case and spacing aside."""
    return " ".join(text.split()).casefold()


def _picked_by_letter(parts: list[str], texts: list[str]) -> list[int]:
    """The choices an answer's parts name by letter (`B`, `a,c`), as "Option A" sheets write
    them; [] where one is another choice's text (a choice "A" of "C", "A", "B")."""
    letters = [p.casefold() for p in parts]
    picks = [ord(letter) - ord("a") + 1 for letter in letters]
    folded = list(map(_folded, texts))
    if any(t in folded and folded.index(t) + 1 != n for t, n in zip(letters, picks, strict=True)):
        return []
    return picks


def _picked_by_text(answer: str, texts: list[str]) -> list[int]:
    """The choices an answer names by their text (the whole cell, or each of its parts
    between commas or semicolons), where each names exactly one choice; else []."""
    folded = list(map(_folded, texts))

    def number(text: str) -> int:
        wanted = _folded(text)
        return folded.index(wanted) + 1 if folded.count(wanted) == 1 else 0

    whole = number(answer)
    if whole:
        return [whole]
    parts = [number(part) for part in re.split(r"[,;]", answer) if part.strip()]
    return parts if parts and all(parts) and len(set(parts)) == len(parts) else []
