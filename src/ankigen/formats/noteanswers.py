"""What an Anki note says of its choices where no field holds each: the choices written
as its question's last lines (`A)`, `(a)`, `B.`, `a.)`, `1.`, bullets), and the correct
ones as its answer field names them (bits by position, numbers, labels, letters, or a
choice's text), never guessed where two readings disagree."""

from __future__ import annotations

import re
from collections.abc import Sequence

_TAG = re.compile(r"<[^>]*>")


def answer_read(
    value: str, texts: Sequence[str], filled: list[int], labels: Sequence[str]
) -> tuple[str, tuple[int, ...]] | None:
    """How the answer names the correct choices (`labels`, `bits`, `numbers`, `letters`
    or `text`), and their numbers; None if it names none of those ways."""
    if labels:
        by_label = _by_labels(value, labels, texts)
        if by_label:
            return "labels", by_label
    by_position = _answer_by_position(value.replace(",", " ").split(), texts, filled)
    if by_position is not None:
        return by_position
    by_letter = _by_labels(value, [chr(ord("A") + n) for n in range(len(texts))], texts)
    by_text = named_by_text(value, texts, filled)
    if by_letter and set(by_letter) <= set(filled) and not labels:
        # `a. Prednisone` is choice A's whole text, which starts like its letter: written
        # back as a letter, the field would change on learners' notes
        return ("text" if tuple(by_text) == by_letter else "letters"), by_letter
    if value.strip() and len(by_text) == 1:
        return "text", (by_text[0],)
    return None


def named_by_text(value: str, texts: Sequence[str], filled: list[int]) -> list[int]:
    """The choices whose text the answer is, case and spacing aside (`d. melanogaster`)."""
    wanted = _folded(value)
    return [n for n in filled if wanted and _folded(plain(texts[n - 1])) == wanted]


def _folded(text: str) -> str:
    return " ".join(text.split()).casefold()


def _answer_by_position(
    tokens: list[str], texts: Sequence[str], filled: list[int]
) -> tuple[str, tuple[int, ...]] | None:
    """The answer as one bit per choice (`0 1 0`), or as choice numbers (`2, 3`)."""
    if tokens and len(tokens) <= len(texts) and set(tokens) <= {"0", "1"}:
        correct = tuple(n for n, bit in enumerate(tokens, start=1) if bit == "1")
        unmarked = [n for n in filled if n > len(tokens)]
        if not unmarked and set(correct) <= set(filled):
            return "bits", correct
        if len(tokens) > 1:
            return None  # bits-shaped, short of the choices: not read as numbers either
        # a lone `1` among more choices is choice 1's number, as a deck's template reads
        # it: one bit cannot say which of several choices are correct
    if tokens and all(t.isdigit() and int(t) in filled for t in tokens):
        return "numbers", tuple(sorted({int(t) for t in tokens}))
    return None


# a label (`A)`, `(a)`, `B.`, `1.`, `a.)`) or a bullet, then the choice
_EMBEDDED = re.compile(r"^\s*(?:\(?([A-Za-z]|\d{1,2})(?:\.\)|[.)])|[-*•])\s+(\S(?:.*\S)?)\s*$")
_ANSWER_WORD = re.compile(
    r"^\s*(?:answer|correct|réponse|respuesta|antwort|lösung|solution)\s*[:：]\s*", re.I
)
# words between the labels of an answer (`A and C`, `c.) und d.)`); none of one letter,
# which could be a label itself
_CONNECTIVES = frozenset({"and", "und", "et", "og", "en", "&"})


def embedded_choices(text: str) -> tuple[str, list[str], list[str]]:
    """The stem, labels and choices of a question whose choices are its last lines, as a
    Basic note holds them: lettered (`A)`, `(a)`, `B.`), numbered (`1.`) or bulleted, the
    labels in order. No choices if the lines do not read so."""
    lines = text.rstrip().split("\n")
    found: list[tuple[str, str, str]] = []  # label, choice, the line as written
    # at most the last 30 lines: no run of choices is longer (a hostile note's thousands
    # of lines made the search for the longest run in order quadratic)
    while lines and len(found) < 30 and (match := _EMBEDDED.match(lines[-1])) is not None:
        found.insert(0, (match[1] or "", match[2], lines.pop()))
    # the longest run in order: a numbered stem (`1. Which ...?`) may come before them
    for start in range(len(found) - 1):
        labels = [label for label, _, _ in found[start:]]
        if set(labels) == {""} or _in_sequence(labels):
            stem = "\n".join(lines + [line for _, _, line in found[:start]]).rstrip()
            return stem, labels if labels[0] else [], [c for _, c, _ in found[start:]]
    return text, [], []


def _in_sequence(labels: Sequence[str]) -> bool:
    """A, B, C ... or a, b, c ... or 1, 2, 3 ..., from the first."""
    first = "1" if labels[0].isdigit() else "a" if labels[0].islower() else "A"
    expected = (
        [str(n) for n in range(1, len(labels) + 1)]
        if first == "1"
        else [chr(ord(first) + n) for n in range(len(labels))]
    )
    return list(labels) == expected


def _by_labels(value: str, labels: Sequence[str], texts: Sequence[str]) -> tuple[int, ...] | None:
    """The choices an answer such as `B`, `b)`, `A, C`, `A and C`, `Answer: 2` or `a.), c.)
    (see §59), d.)` names by label: its words all labels, remarks in brackets aside. A
    label followed by other words is read only where they are its choice's own text
    (`B) All-reduce`): other words may say anything of the labels (`A and B are wrong`,
    `A) Paris, C) Berlin`), and so may a remark that judges (`A (wrong), C`)."""
    folded = [label.casefold() for label in labels]
    remarks: list[str] = []
    bare = _without_remarks(_ANSWER_WORD.sub("", value), folded, remarks)
    if any(_JUDGING & set(re.findall(r"\w+", remark.casefold())) for remark in remarks):
        return None  # `A (wrong), C`: a remark may take a label back
    words = re.findall(r"[^\s,]+,?", bare)
    names = [
        word.strip("().:,")
        for word in words
        if word.casefold() not in _CONNECTIVES and not _is_remark(word)
    ]
    if not names or not all(names):
        return None
    if all(name.casefold() in folded for name in names):
        return tuple(sorted({folded.index(name.casefold()) + 1 for name in names}))
    picked, after = _leading_labels(words, folded)
    if picked and _restated(words[after:], picked, folded, texts):
        return tuple(sorted(set(picked)))
    rest = " ".join(word for word in words[after:] if not _is_remark(word))
    if len(picked) == 1 and len(texts) >= picked[0]:
        own = _folded(plain(texts[picked[0] - 1]))
        if own and _folded(rest).rstrip(" .;") == own:
            return (picked[0],)
    return None


def _restated(rest: list[str], picked: list[int], folded: list[str], texts: Sequence[str]) -> bool:
    """Whether the words after an answer's labels only say those choices again, each its
    label and then its own text (`a.), c.) (§ 5) a.) Paris c.) Berlin`), as a deck's back
    often does."""
    said: list[tuple[int, list[str]]] = []
    for word in rest:
        if _is_remark(word):
            continue
        label = word.strip("().:,").casefold()
        if word[-1] in ").:" and label in folded:
            said.append((folded.index(label) + 1, []))
        elif not said:
            return False
        else:
            said[-1][1].append(word)
    return bool(said) and all(
        number in picked
        and number <= len(texts)
        and _folded(" ".join(words)).rstrip(" .;,")
        == _folded(plain(texts[number - 1])).rstrip(" .;,")
        for number, words in said
    )


def _leading_labels(words: list[str], folded: list[str]) -> tuple[list[int], int]:
    """The choices the answer's first words name, each a label closed by `)`, `.`, `:`
    or `,`, joined to the next by `,` or a connective, or followed by a remark; and the
    index of the first word after them."""
    picked: list[int] = []
    joined = False  # the label before was followed by `,` or a connective
    for number, word in enumerate(words):
        following = words[number + 1] if number + 1 < len(words) else ""
        if word.casefold() in _CONNECTIVES and picked:
            joined = True
            continue
        if _is_remark(word):
            joined = joined or word.endswith(",")
            continue
        label = word.strip("().:,").casefold()
        closed = word[-1] in ").:," or _is_remark(following)
        if label not in folded or not (closed or joined or following.casefold() in _CONNECTIVES):
            return picked, number
        if folded.index(label) + 1 in picked:
            return picked, number  # said again: the choices' texts follow (`_restated`)
        picked.append(folded.index(label) + 1)
        joined = word.endswith(",")
    return picked, len(words)


_BRACKETS = re.compile(r"\(([^()]*)\)")
_REMARKED = "⟦…⟧"
"""A remark in brackets, as one word."""


def _is_remark(word: str) -> bool:
    return word.rstrip(",") == _REMARKED


# words by which a remark judges a label (`A (wrong), C`), in the languages of the decks
# seen; a remark holding one leaves the answer for the author to say
_JUDGING = frozenset(
    "wrong false incorrect not no never none falsch nicht kein keine unrichtig faux fausse "
    "incorrecte pas non incorrecto incorrecta falso falsa errado errada sbagliato fout niet "
    "sai không".split()
)


def _without_remarks(text: str, folded: Sequence[str], remarks: list[str]) -> str:
    """An answer with each remark in brackets made one word, the innermost first: `a.),
    c.) (most, not all), d.)` is `a.), c.) ⟦…⟧, d.)`; a label in brackets, `(b)`, stays.
    The remarks' texts are put in `remarks`."""

    def remark(found: re.Match[str]) -> str:
        if found[1].strip().casefold() in folded:
            return found[0]
        remarks.append(found[1])
        return f" {_REMARKED}"

    while (shorter := _BRACKETS.sub(remark, text)) != text:
        text = shorter
    return text


def plain(markup: str) -> str:
    """A field's text without tags, as the add-on's script reads `Answers` and `QType`."""
    return " ".join(_TAG.sub(" ", markup).replace("&nbsp;", " ").split())
