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

from ankigen.apkg.kept import answer_field
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
from ankigen.formats.noteanswers import answer_read, embedded_choices, named_by_text, plain
from ankigen.images.process import ImageProblem

MAX_IMAGE_BYTES = 32 << 20


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
    answers: list[tuple[int, str, tuple[str, ...], tuple[int, ...]]] = field(default_factory=list)
    """Each note's answer field as read (tags aside), its choices' texts, and the answer."""


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
    if kept is not None:
        _warn_of_answers(reading, kept.answer_format)
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
        question, labels, texts = embedded_choices(question)
        if len(texts) < 2:
            reading.problems.warn(
                line,
                "no choices found at the end of the question (lines such as 'A) ...', "
                "'1. ...' or '- ...'); note skipped",
            )
            return None
    if mapping.title and plain(fields[mapping.title]):
        title, _, _ = _text(fields[mapping.title], line, reading, images=False)
        question = f"<b>{title}</b>\n{question}"
    kind = plain(fields[mapping.kind]) if mapping.kind else ""
    correct = _answer(fields[mapping.answer], texts, line, reading, labels)
    if kind == "0":
        reading.kprim.append(line)
    choices = tuple(
        Choice(text, n in (correct or ())) for n, text in enumerate(texts, start=1) if text
    )
    if kind == "2" and correct is not None and len(correct) != 1:
        reading.problems.warn(line, f"a single-answer note with {len(correct)} correct choices")
    parts = [_text(fields[name], line, reading, images=False)[0] for name in mapping.explanation]
    if mapping.sources and plain(fields[mapping.sources]):
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
    markup: str, texts: Sequence[str], line: int, reading: _Reading, labels: Sequence[str] = ()
) -> tuple[int, ...] | None:
    """The correct choices' numbers, from bits by position, numbers, or a choice's text;
    for choices written in the question, their labels too (`B`, `A, C`, `Answer: b)`)."""
    if _STRUCK.search(markup):
        reading.problems.warn(
            line,
            f"the answer {plain(markup)!r} strikes some of its text out (<s>, <del>): "
            "which choices it names is left for you to say",
        )
        return None
    value = plain(markup)
    filled = [n for n, text in enumerate(texts, start=1) if text]
    found = answer_read(value, texts, filled, labels)
    by_text = named_by_text(value, texts, filled)
    if found is not None and found[0] != "text" and by_text and found[1] != tuple(by_text):
        # an exam deck's "B" among the choices G, X, Y, B, or "4" among 2, 4, 5, 6 (or
        # among 4, 5, 4, 6): which is meant is not guessed
        reading.problems.warn(
            line,
            f"the answer {value!r} names choice {', '.join(map(str, found[1]))} by its "
            f"{_HOW[found[0]]} and choice {' or '.join(map(str, by_text))} by its text; "
            "left for you to say",
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
    reading.answers.append((line, value, tuple(texts), correct))
    return correct


_STRUCK = re.compile(r"<(?:s|del|strike)\b", re.IGNORECASE)
_HOW = {"labels": "label", "bits": "position", "numbers": "number", "letters": "letter"}


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
    reading.problems.warn(
        notes[0],
        f"{len(notes)} note(s) ({_listed(notes)}) hold formatting a bank's text does not keep "
        f"({', '.join(kinds)}): from the next build, learners see those fields as ankigen "
        "draws the bank's text, without it",
    )


def _warn_of_answers(reading: _Reading, answer_format: str) -> None:
    """Once: the notes whose answer field says more, or says it otherwise, than the kept
    note type's format writes it (`Answer: C (see § 5)`, where the deck says `C`): the
    next build writes every answer field in that format."""
    changed = [
        (line, value, written)
        for line, value, texts, correct in reading.answers
        if _words(value) != _words(written := answer_field(answer_format, texts, correct))
    ]
    if not changed:
        return
    line, value, written = changed[0]
    reading.problems.warn(
        line,
        f"{len(changed)} note(s) ({_listed([n for n, _, _ in changed])}) write their "
        f"answer otherwise than the deck's {answer_format} do: the next build writes it so "
        f"on learners' notes ({value!r} becomes {plain(written)!r})",
    )


def _listed(notes: list[int]) -> str:
    """The notes' numbers, the first eight of them."""
    return ", ".join(map(str, notes[:8])) + (", ..." if len(notes) > 8 else "")


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", plain(text).casefold())


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
