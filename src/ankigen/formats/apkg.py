"""Anki packages (`.apkg`, `.colpkg`): adopting a multiple-choice deck that already lives in
Anki, its notes' GUIDs kept (`Question.guid`), so the adopted bank's first build updates
those notes in learners' collections instead of adding new ones.

Note types read:
- the "Multiple Choice for Anki" add-on's (`AllInOne (kprim, mc, sc)`): fields `Question`,
  `Title`, `QType (0=kprim,1=mc,2=sc)`, `Q_1`...`Q_n`, `Answers` as `1 0 0 1`, `Sources`,
  `Extra 1`, recognized by those names;
- any other whose fields are named with `--fields question=Front,choices=Q_1..Q_5,
  answer=Answers,explanation=Back`: choices as a range (`Q_1..Q_5`) or a list joined by
  `+`; the answer as bits by position (`1 0 0 1`), choice numbers (`2`, `1 3`), letters
  by position (`B`, `A, C`) or the correct choice's text.

A kept note type's other fields are carried as the notes hold them (`Question.anki_fields`),
so that a build leaves them as they were in learners' notes.

A package may hold several decks: one is adopted at a time (`--deck`). The "line" of a
problem is the note's number in the deck, in the order Anki added them.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ankigen.bank.kept import field_name_problem
from ankigen.bank.model import MAX_CHOICES, KeptNotetype
from ankigen.collection.exported import (
    AnkiNote,
    Exported,
    ExportedError,
    Notetype,
    media_file,
    read_exported,
)
from ankigen.core.times import clock
from ankigen.formats.ankifields import (
    FieldMap,
    carried_fields,
    field_map,
    fields_read,
    warn_of_media,
)
from ankigen.formats.htmltext import html_to_text, tex_delimiters
from ankigen.formats.model import (
    Choice,
    Format,
    FormatError,
    Problems,
    Question,
    ReadOptions,
    Source,
    store_image,
)
from ankigen.images.process import ImageProblem

MAX_IMAGE_BYTES = 32 << 20
_TAG = re.compile(r"<[^>]*>")


@dataclass
class _Reading:
    path: str
    archive: zipfile.ZipFile
    """The package, opened once for all its images."""
    exported: Exported
    options: ReadOptions
    problems: Problems
    media: dict[str, bytes]
    kprim: list[int]
    """The notes read as Kprim, by number."""
    answer_formats: Counter[str]
    """How the notes' answers were written (`ANSWER_FORMATS`), by count."""
    carried: tuple[str, ...] = ()
    """The fields carried as they are: a kept note type's that the mapping does not name."""
    carried_media: dict[str, int] = field(default_factory=dict)
    """The media files the carried fields show, each with the first note that does."""
    reformatted: dict[int, set[str]] = field(default_factory=dict)
    """The notes whose read fields hold formatting a bank text does not keep, and which."""


def read(path: str, data: bytes, options: ReadOptions) -> Source:
    try:
        exported = read_exported(Path(path), data)
    except ExportedError as error:
        raise FormatError(str(error)) from None
    notes = _deck_notes(exported, options.deck)
    kinds = {note.notetype for note in notes}
    if len(kinds) > 1:
        names = sorted(exported.notetypes[k].name for k in kinds)
        raise FormatError(
            f"{path}: the deck mixes note types ({', '.join(map(repr, names))}): adopt one "
            "deck of one note type at a time"
        )
    notetype = exported.notetypes[next(iter(kinds))]
    mapping = field_map(notetype.fields, dict(options.fields))
    unmapped = tuple(name for name in notetype.fields if name not in mapping.names)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:  # read_exported opened it already
        reading = _Reading(path, archive, exported, options, Problems(path), {}, [], Counter())
        reading.carried = unmapped if options.keep_notetype else ()
        read_notes = [
            _question(note, number, mapping, reading) for number, note in enumerate(notes, start=1)
        ]
    questions = [question for question in read_notes if question is not None]
    if reading.kprim:
        reading.problems.warn(
            reading.kprim[0],
            f"{len(reading.kprim)} Kprim note(s) became items with several answers: a "
            "learner picks the true statements; Kprim's half point for three right of four "
            "is not carried",
        )
    warn_of_media(reading.carried_media, reading.problems)
    _warn_of_formatting(reading)
    kept = _held(notetype, mapping, reading) if options.keep_notetype else None
    return Source(
        path=path,
        questions=tuple(questions),
        skipped=len(read_notes) - len(questions),
        title=notes[0].deck.rsplit("::", 1)[-1],
        deck=notes[0].deck,  # the name learners have: a build under another moves no card
        diagnostics=tuple(reading.problems.found),
        media=tuple(sorted(reading.media.items())),
        origin=f"Anki deck {notes[0].deck!r}, note type {notetype.name!r}",
        anki_notetype=kept,
        fields_read=fields_read(mapping, unmapped, kept),
    )


def _held(notetype: Notetype, mapping: FieldMap, reading: _Reading) -> KeptNotetype:
    """The note type the notes keep (`KeptNotetype`), or a FormatError saying why it
    cannot be kept."""
    instead = "; adopt the deck onto ankigen's note type with --notetype ankigen"
    if len(notetype.templates) != 1:
        raise FormatError(
            f"{reading.path}: note type {notetype.name!r} has {len(notetype.templates)} card "
            f"templates; ankigen keeps a note type of one{instead}"
        )
    for name in notetype.fields:
        problem = field_name_problem(name)
        if problem:
            raise FormatError(f"{reading.path}: the note type's field {name!r} {problem}{instead}")
    if not mapping.choices:
        raise FormatError(
            f"{reading.path}: the choices are written in the question field, so the note "
            f"type cannot draw ankigen's card{instead}"
        )
    if not 2 <= len(mapping.choices) <= MAX_CHOICES:
        raise FormatError(
            f"{reading.path}: the note type has {len(mapping.choices)} choice fields; a kept "
            f"one has 2 to {MAX_CHOICES}{instead}"
        )
    counted = reading.answer_formats.most_common()
    if not counted:
        raise FormatError(
            f"{reading.path}: no note's answer field says which choice is correct in a way "
            f"ankigen reads (bits, numbers, letters or a choice's text){instead}"
        )
    return KeptNotetype(
        id=notetype.id,
        name=notetype.name,
        fields=notetype.fields,
        template=notetype.templates[0],
        question=mapping.question,
        choices=mapping.choices,
        answer=mapping.answer,
        answer_format=counted[0][0],
        explanation=mapping.explanation[0] if mapping.explanation else "",
        kind=mapping.kind,
        sort_field=_sort_field(notetype),
        adopted=clock(),
    )


def _sort_field(notetype: Notetype) -> str:
    """The field the note type sorts by (its first, where the package names none)."""
    if 0 <= notetype.sort_field < len(notetype.fields):
        return notetype.fields[notetype.sort_field]
    return notetype.fields[0] if notetype.fields else ""


def _deck_notes(exported: Exported, deck: str) -> list[AnkiNote]:
    decks = sorted({note.deck for note in exported.notes})
    if not decks:
        raise FormatError(f"{exported.path}: the package holds no notes")
    if deck:
        chosen = [d for d in decks if d == deck or d.endswith(f"::{deck}")]
        if len(chosen) != 1:
            raise FormatError(
                f"--deck {deck!r} is not one deck of the package; its decks: "
                + ", ".join(map(repr, decks))
            )
        deck = chosen[0]
    elif len(decks) > 1:
        raise FormatError(
            f"{exported.path} holds several decks: adopt them one at a time with --deck NAME "
            "(" + ", ".join(map(repr, decks)) + ")"
        )
    else:
        deck = decks[0]
    return [note for note in exported.notes if note.deck == deck]


def _question(note: AnkiNote, line: int, mapping: FieldMap, reading: _Reading) -> Question | None:
    fields = reading.exported.fields_of(note)
    question, image, alt = _text(fields[mapping.question], line, reading, images=True)
    labels: list[str] = []
    if mapping.choices:
        texts = [_text(fields[name], line, reading, images=False)[0] for name in mapping.choices]
    else:
        question, labels, texts = _embedded_choices(question)
        if len(texts) < 2:
            reading.problems.warn(
                line,
                "no choices found at the end of the question (lines such as 'A) ...', "
                "'1. ...' or '- ...'); note skipped",
            )
            return None
    if mapping.title and _plain(fields[mapping.title]):
        title, _, _ = _text(fields[mapping.title], line, reading, images=False)
        question = f"<b>{title}</b>\n{question}"
    kind = _plain(fields[mapping.kind]) if mapping.kind else ""
    correct = _answer(_plain(fields[mapping.answer]), texts, line, reading, labels)
    if kind == "0":
        reading.kprim.append(line)
    choices = tuple(
        Choice(text, n in (correct or ())) for n, text in enumerate(texts, start=1) if text
    )
    if kind == "2" and correct is not None and len(correct) != 1:
        reading.problems.warn(line, f"a single-answer note with {len(correct)} correct choices")
    parts = [_text(fields[name], line, reading, images=False)[0] for name in mapping.explanation]
    if mapping.sources and _plain(fields[mapping.sources]):
        parts.append(_text(fields[mapping.sources], line, reading, images=False)[0])
    explanation = "\n\n".join(part for part in parts if part) or None
    return Question(
        line=line,
        question=question,
        choices=choices,
        explanation=explanation,
        answered=correct is not None,
        tags=note.tags,
        image=image,
        image_alt=alt,
        guid=note.guid,
        modified=note.modified,
        anki_fields=carried_fields(
            fields, reading.carried, line, reading.problems, reading.carried_media
        ),
    )


def _answer(
    value: str, texts: Sequence[str], line: int, reading: _Reading, labels: Sequence[str] = ()
) -> tuple[int, ...] | None:
    """The correct choices' numbers, from bits by position, numbers, or a choice's text;
    for choices written in the question, their labels too (`B`, `A, C`, `Answer: b)`)."""
    filled = [n for n, text in enumerate(texts, start=1) if text]
    found = _answer_read(value, texts, filled, labels)
    by_text = [n for n in filled if _plain(texts[n - 1]) == value.strip()]
    if (
        found is not None
        and found[0] != "text"
        and len(by_text) == 1
        and found[1] != tuple(by_text)
    ):
        # an exam deck's "B" among the choices G, X, Y, B, or "4" among 2, 4, 5, 6: which
        # is meant is not guessed
        reading.problems.warn(
            line,
            f"the answer {value!r} names choice {', '.join(map(str, found[1]))} by its "
            f"{_HOW[found[0]]} and choice {by_text[0]} by its text; left for you to say",
        )
        return None
    if found is None:
        reading.problems.warn(
            line,
            f"the answer {value!r} does not say which of the {len(filled)} choices are correct",
        )
        return None
    how, correct = found
    reading.answer_formats[how] += 1
    return correct


_HOW = {"labels": "label", "bits": "position", "numbers": "number", "letters": "letter"}


def _answer_read(
    value: str, texts: Sequence[str], filled: list[int], labels: Sequence[str]
) -> tuple[str, tuple[int, ...]] | None:
    """How the answer names the correct choices (`labels`, `bits`, `numbers`, `letters`
    or `text`), and their numbers; None if it names none of those ways."""
    if labels:
        by_label = _by_labels(value, labels)
        if by_label:
            return "labels", by_label
    by_position = _answer_by_position(value.replace(",", " ").split(), texts, filled)
    if by_position is not None:
        return by_position
    by_letter = _by_labels(value, [chr(ord("A") + n) for n in range(len(texts))])
    if by_letter and set(by_letter) <= set(filled) and not labels:
        return "letters", by_letter
    by_text = [n for n in filled if _plain(texts[n - 1]) == value.strip()]
    if value.strip() and len(by_text) == 1:
        return "text", (by_text[0],)
    return None


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
_EMBEDDED = re.compile(r"^\s*(?:\(?([A-Za-z]|\d{1,2})(?:\.\)|[.)])|[-*•])\s+(\S.*?)\s*$")
_ANSWER_WORD = re.compile(
    r"^\s*(?:answer|correct|réponse|respuesta|antwort|lösung|solution)\s*[:：]\s*", re.I
)
# words between the labels of an answer (`A and C`, `c.) und d.)`); none of one letter,
# which could be a label itself
_CONNECTIVES = frozenset({"and", "und", "et", "og", "en", "&"})


def _embedded_choices(text: str) -> tuple[str, list[str], list[str]]:
    """The stem, labels and choices of a question whose choices are its last lines, as a
    Basic note holds them: lettered (`A)`, `(a)`, `B.`), numbered (`1.`) or bulleted, the
    labels in order. No choices if the lines do not read so."""
    lines = text.rstrip().split("\n")
    found: list[tuple[str, str, str]] = []  # label, choice, the line as written
    while lines and (match := _EMBEDDED.match(lines[-1])) is not None:
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


def _by_labels(value: str, labels: Sequence[str]) -> tuple[int, ...] | None:
    """The choices an answer such as `B`, `b)`, `A, C`, `Answer: 2` or `a.), c.) (see
    §59)` names by label: every word a label, or labels (each closed by `)`, `.` or `:`)
    and then words."""
    words = _ANSWER_WORD.sub("", value).replace(",", " ").split()
    words = [word for word in words if word.casefold() not in _CONNECTIVES]
    names = [word.strip("().:") for word in words]
    if not names or not all(names):
        return None
    folded = [label.casefold() for label in labels]
    if all(name.casefold() in folded for name in names):
        return tuple(sorted({folded.index(name.casefold()) + 1 for name in names}))
    picked: set[int] = set()
    for word in words:
        label = word.rstrip(").:").lstrip("(").casefold()
        if word[-1] not in ").:" or label not in folded:
            break
        picked.add(folded.index(label) + 1)
    return tuple(sorted(picked)) or None


def _plain(markup: str) -> str:
    """A field's text without tags, as the add-on's script reads `Answers` and `QType`."""
    return " ".join(_TAG.sub(" ", markup).replace("&nbsp;", " ").split())


def _text(markup: str, line: int, reading: _Reading, *, images: bool) -> tuple[str, str, str]:
    """Bank text of a field, and its image (stored in the media folder) with its alt."""
    converted = html_to_text(markup)
    for loss in converted.losses():
        reading.problems.warn(line, loss)
    unkept = _unkept_formatting(markup)
    if unkept:
        reading.reformatted.setdefault(line, set()).update(unkept)
    for link in converted.links:
        reading.problems.warn(line, link.lost())
    image, alt = "", ""
    for number, img in enumerate(converted.images):
        if not images or number:
            where = "only one image per question" if images else "only the question has images"
            reading.problems.warn(line, f"{where}: dropped {img.src!r}")
            continue
        image, alt = _store(img.src, line, reading), img.alt
    return tex_delimiters(converted.text), image, alt


# formatting a bank's text does not keep: headings, quotes, lists, tables, rules, fonts,
# struck or marked text, and styles that show (the bold of `<span style="font-weight:
# 600">`, a colour, a size, an alignment)
_UNKEPT = re.compile(
    r"<(h[1-6]|blockquote|ul|ol|table|hr|font|s|strike|del|mark|center|big|small)\b"
    r"|\sstyle\s*=\s*[\"'][^\"']*?(font-weight|font-style|font-size|color|background"
    r"|text-decoration|text-align)",
    re.IGNORECASE,
)


def _unkept_formatting(markup: str) -> set[str]:
    return {f"<{tag.lower()}>" if tag else "styles" for tag, _ in _UNKEPT.findall(markup)}


def _warn_of_formatting(reading: _Reading) -> None:
    """Once: the notes whose fields learners will see simplified from the next build,
    which rewrites every read field as ankigen draws the bank's text."""
    notes = sorted(reading.reformatted)
    if not notes:
        return
    kinds = sorted(set().union(*reading.reformatted.values()))
    listed = ", ".join(map(str, notes[:8])) + (", ..." if len(notes) > 8 else "")
    reading.problems.warn(
        notes[0],
        f"{len(notes)} note(s) ({listed}) hold formatting a bank's text does not keep "
        f"({', '.join(kinds)}): from the next build, learners see those fields as ankigen "
        "draws the bank's text, without it",
    )


def _store(name: str, line: int, reading: _Reading) -> str:
    """An image of the package, stored as every imported image is (`store_image`)."""
    member = reading.exported.media.get(name)
    if member is None:
        reading.problems.warn(line, f"image {name!r} is not in the package; dropped")
        return ""
    try:
        data = media_file(Path(reading.path), reading.archive, member, MAX_IMAGE_BYTES)
        return store_image(data, name, reading.options.media_prefix, reading.media)
    except (ExportedError, ImageProblem) as problem:
        reading.problems.warn(line, f"{problem}; dropped")
        return ""


def sniff(text: str) -> int:
    return 0  # a zip file: known by its extension


FORMAT = Format(
    name="apkg",
    title="Anki package",
    extensions=(".apkg", ".colpkg"),
    read=read,
    sniff=sniff,
)
