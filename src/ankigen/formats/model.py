"""The one item model every format reads into and writes from.

An importer turns a file into a `Source`: its questions, in the file's order,
each with its choices, the correct ones, a per-choice `why` where the format
has one, and the problems found, each at its line. `bankyaml` writes a Source
as a bank; an exporter writes a Source made from a bank (`from_bank`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ankigen.bank.model import MAX_CHOICES, MAX_ID, MIN_CHOICES, SLUG, Bank, KeptNotetype
from ankigen.bank.yamltree import other_encoding
from ankigen.core.errors import AnkigenError, Diagnostic, InvalidBanks, Severity
from ankigen.images.process import kept_or_processed
from ankigen.images.settings import Settings
from ankigen.text import l10n

MAX_FILE_BYTES = 64 * 1024 * 1024  # Moodle XML carries its images inline


class FormatError(AnkigenError):
    """A file could not be read in the format it was read as."""


@dataclass(frozen=True)
class Choice:
    text: str
    correct: bool
    why: str = ""
    """Why this choice is right or wrong (GIFT `#feedback`, Moodle XML `<feedback>`)."""


@dataclass(frozen=True)
class Question:
    """One multiple-choice item as a format holds it."""

    line: int
    """Where it starts in the source file."""
    question: str
    choices: tuple[Choice, ...]
    name: str = ""
    """The source's own name for it (GIFT title, Moodle name or idnumber, CSV id)."""
    explanation: str | None = None
    """None when the source has none: the bank gets a TODO the build refuses."""
    answered: bool = True
    """False when the source does not say which choices are correct."""
    tags: tuple[str, ...] = ()
    shuffle: bool | None = None
    """None: the bank's default."""
    image: str = ""
    image_alt: str = ""
    explanation_image: str = ""
    explanation_image_alt: str = ""
    recall: bool | None = None
    """The front asks for the answer first; None: the bank's default."""
    retired: bool = False
    formerly: tuple[str, ...] = ()
    """Older ids of the item, oldest first."""
    guid: str = ""
    """The GUID of the Anki note it was read from (an adopted deck): the lock keeps it, so
    the bank's first build updates that note where learners have it."""
    place: int = 0
    """Its position among the file's questions, skipped ones counted (0: among those
    imported): the id of a question without a name, which stays put when a question
    before it is skipped, or converted later."""
    modified: int = 0
    """When Anki last changed that note (seconds)."""
    anki_fields: tuple[tuple[str, str], ...] = ()
    """That note's fields ankigen does not map, by name, as the note held them: the bank
    carries them (`Item.anki_fields`) where it keeps the note's type."""

    @property
    def answer(self) -> tuple[int, ...]:
        return tuple(n for n, c in enumerate(self.choices, start=1) if c.correct)


@dataclass(frozen=True)
class Source:
    """What an importer read from one file."""

    path: str
    questions: tuple[Question, ...]
    title: str = ""
    description: str = ""
    level: str = ""
    skipped: int = 0
    """Questions of kinds that cannot become items (each also has a warning)."""
    diagnostics: tuple[Diagnostic, ...] = ()
    notes: tuple[tuple[int, str], ...] = ()
    """Lines for the author to know about that are not problems (page furniture)."""
    media: tuple[tuple[str, bytes], ...] = ()
    """Image files to write into the media folder: (path relative to it, bytes)."""
    topic: str = ""
    language: str = ""
    deck: str = ""
    origin: str = ""
    """The bank's `source:`, where the questions come from."""
    license: str = ""
    tags: tuple[str, ...] = ()
    """Tags of every item (the bank's `tags:`)."""
    shuffle: bool = True
    """The items' default `shuffle`."""
    recall: bool = False
    """The items' default `recall`."""
    formerly: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
    """Older topics and older languages of the bank, oldest first."""
    anki_notetype: KeptNotetype | None = None
    """An adopted deck's note type, kept (the bank's `anki_notetype:`)."""
    fields_read: str = ""
    """How an adopted deck's fields were read: which became which part of an item, which
    are carried as they are, which were not read."""

    @property
    def export_mark(self) -> str:
        """What an export's first lines say of where it comes from: the same export made
        again may replace a file that says it (see `userfile.Target.ours`)."""
        return f"exported by ankigen from {self.topic}.{self.language}"

    @property
    def errors(self) -> int:
        return sum(d.severity == "error" for d in self.diagnostics)


@dataclass(frozen=True)
class ReadOptions:
    topic: str
    language: str
    media_prefix: str = ""
    """Folder inside the media folder that imported images go to (the topic)."""
    choices: int | None = None
    """Page format only: choices per question."""
    answers: str | None = None
    """Page format only: `1,2+3,...`."""
    columns: tuple[tuple[str, str], ...] = ()
    """CSV only: `--columns`, a header as written and the column it is ("" to ignore)."""
    deck: str = ""
    """Anki packages only: `--deck`, the deck to adopt."""
    fields: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Anki packages only: `--fields`, the fields that hold each role (`formats.apkg`)."""
    keep_notetype: bool = False
    """Anki packages only: the notes keep their note type (`--notetype keep`)."""


Reader = Callable[[str, bytes, ReadOptions], Source]
Writer = Callable[[Source, Path], bytes]


@dataclass(frozen=True)
class Format:
    """One file format: how to recognise it, read it and (optionally) write it."""

    name: str
    """What `--from` and `--to` call it."""
    title: str
    """How messages name it."""
    extensions: tuple[str, ...]
    read: Reader
    sniff: Callable[[str], int]
    """How sure we are (0-100) that this text is in the format."""
    write: Writer | None = None
    export_extension: str = ""


class Problems:
    """Collects diagnostics for one file."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.found: list[Diagnostic] = []

    def add(self, line: int, message: str, severity: Severity = "error") -> None:
        self.found.append(Diagnostic(self.path, max(line, 1), severity, message))

    def warn(self, line: int, message: str) -> None:
        self.add(line, message, "warning")

    def skipped_since(self, mark: int, name: str = "") -> bool:
        """Whether the question read since `mark` (`len(found)` before it) is skipped: a
        problem confined to one question costs that question, not the file. Its errors
        become warnings that say it was skipped (naming it by `name`, the file's own
        name for it, where it has one); its other warnings, about an item that is not
        made, are dropped."""
        errors = [d for d in self.found[mark:] if d.severity == "error"]
        if not errors:
            return False
        what = f"question {name!r}" if name else "question"
        del self.found[mark:]
        for error in errors:
            self.found.append(
                error._replace(severity="warning", message=f"{error.message}; {what} skipped")
            )
        return True

    def fail(self, line: int, message: str) -> InvalidBanks:
        """A problem that stops the reading of the whole file, with those found before it."""
        return InvalidBanks([*self.found, Diagnostic(self.path, max(line, 1), "error", message)])


def placed(question: Question, read: int, skipped: int) -> Question:
    """The question read after `read` others and `skipped` skipped, with its `place`."""
    return replace(question, place=read + skipped + 1)


def fatal(path: str, line: int, message: str) -> InvalidBanks:
    """A problem that stops the reading of a file, reported as `PATH:LINE: error:`."""
    return InvalidBanks([Diagnostic(path, max(line, 1), "error", message)])


def decode(path: str, data: bytes, what: str) -> str:
    """The text of a file: UTF-8 with or without BOM, not binary, not huge."""
    if len(data) > MAX_FILE_BYTES:
        raise fatal(path, 1, f"{len(data)} bytes is too large for {what}")
    if not data.strip():
        raise fatal(path, 1, "the file is empty")
    encoding = other_encoding(data)
    if encoding:
        raise fatal(path, 1, f"{encoding} text, not UTF-8: save the file as UTF-8")
    if b"\x00" in data:
        raise fatal(path, data[: data.find(b"\x00")].count(b"\n") + 1, f"binary data, not {what}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise fatal(path, line, "not UTF-8 text; save the file as UTF-8") from None
    return text.removeprefix("\ufeff")


def graded(
    choices: Sequence[Choice],
    weights: Sequence[float],
    single: bool,
    language: str,
    problems: Problems,
    line: int,
) -> tuple[Choice, ...]:
    """The choices marked as the teacher meant them, from their credit (1.0 is full).

    In a multiple-answer question every choice with credit is correct: Moodle adds
    them up. In a single-answer question only the fully credited ones are: a choice
    with part of the credit is a wrong choice whose `why` starts with that credit
    ("50% in the source: ..."), which is what its feedback usually explains."""
    if not single:
        return tuple(replace(c, correct=w > 0) for c, w in zip(choices, weights, strict=True))
    best = max(weights, default=0.0)
    if best <= 0:
        return tuple(replace(c, correct=False) for c in choices)
    full = [w >= best - _SAME_CREDIT for w in weights]
    partial = [n for n, w in enumerate(weights, start=1) if 0 < w < best - _SAME_CREDIT]
    out = []
    for number, (choice, weight, right) in enumerate(zip(choices, weights, full, strict=True), 1):
        if number in partial:
            credit = l10n.partial_credit(language, percent(weight * 100))
            why = f"{credit}: {choice.why}" if choice.why else credit
            choice = replace(choice, why=why)
        out.append(replace(choice, correct=right))
    if best < 1 - _SAME_CREDIT:
        problems.warn(
            line,
            f"no choice has full credit; the best ({percent(best * 100)}%) is taken as the answer",
        )
    if partial:
        listed = ", ".join(f"{n} ({percent(weights[n - 1] * 100)}%)" for n in partial)
        problems.warn(
            line,
            f"choice(s) {listed} give partial credit in a single-answer question: they are "
            "wrong choices in the bank, and their why says their credit",
        )
    if sum(full) > 1:
        most = (
            "full credit"
            if best >= 1 - _SAME_CREDIT
            else f"the most credit ({percent(best * 100)}%)"
        )
        problems.warn(
            line,
            f"{sum(full)} choices give {most} in a single-answer question, where Moodle "
            "accepts any one of them: the bank asks for all of them",
        )
    # a penalty is the teacher's choice here (a multiple-answer question's wrong choices
    # always take some): said, since a card has no marks to keep it in
    penalties = [f"{n} ({percent(w * 100)}%)" for n, w in enumerate(weights, start=1) if w < 0]
    if penalties:
        problems.warn(line, f"the negative marks of choice(s) {', '.join(penalties)} are not kept")
    return tuple(out)


# Moodle stores credit with 7 decimals (33.33333%)
_SAME_CREDIT = 1e-6


def percent(value: float) -> str:
    """A percentage as Moodle writes grades: at most 5 decimals, no trailing zeros."""
    return f"{value:.5f}".rstrip("0").rstrip(".")


def shared_grades(question: Question) -> list[str] | None:
    """Each choice's grade in percent when several choices are right, as Moodle wants
    them (shares of 100 for the right ones, of -100 for the wrong); None with one."""
    correct = [c.correct for c in question.choices]
    right = sum(correct)
    if right <= 1:
        return None
    wrong = len(correct) - right
    plus = percent(100 / right)
    minus = percent(-100 / wrong) if wrong else "0"
    return [plus if c else minus for c in correct]


def check_choice_count(problems: Problems, line: int, count: int) -> bool:
    if MIN_CHOICES <= count <= MAX_CHOICES:
        return True
    problems.add(
        line, f"this question has {count} choices; an item needs {MIN_CHOICES} to {MAX_CHOICES}"
    )
    return False


def slugify(name: str) -> str:
    """A bank id from a free-form name: `Q1: All-reduce?` -> `q1-all-reduce`; "" if not Latin
    (`Вопрос 1` is no `1`: the numbers of other scripts' names say too little)."""
    folded = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
    slug = re.sub(r"[^a-z0-9]+", "-", folded).strip("-")
    return slug[:MAX_ID].rstrip("-") if re.search("[a-z]", slug) else ""


def numbered(name: str) -> str:
    """The id of a name without Latin letters, by its numbers: `Вопрос 6` is `q6`, whatever
    questions before it were skipped; "" without a number."""
    # digits of any script as ASCII, without leading zeros (no int(): a name may hold
    # more digits than Python converts)
    numbers = [
        "".join(str(unicodedata.digit(d)) for d in number).lstrip("0") or "0"
        for number in re.findall(r"\d+", name)
    ]
    return f"q{'-'.join(numbers)}"[:MAX_ID].rstrip("-") if numbers else ""


def assign_ids(source: Source, problems: Problems) -> list[str]:
    """An id per question: its name as a slug, or by its numbers, else `qN` by position;
    unique."""
    ids: list[str] = []
    used: set[str] = set()
    # the next suffix to try for each name: 20,000 questions of one name are linear,
    # not a scan from -2 for each
    next_suffix: dict[str, int] = {}
    for number, question in enumerate(source.questions, start=1):
        name = question.name
        wanted = name if SLUG.fullmatch(name) and len(name) <= MAX_ID else slugify(name)
        wanted = wanted or numbered(name) or f"q{question.place or number}"
        chosen = wanted
        suffix = next_suffix.get(wanted, 2)
        while chosen in used:
            # shortened to leave the suffix room: an id is at most MAX_ID long
            chosen = f"{wanted[: MAX_ID - len(str(suffix)) - 1].rstrip('-')}-{suffix}"
            suffix += 1
        next_suffix[wanted] = suffix
        if chosen != wanted:
            problems.warn(question.line, f"id {wanted!r} is taken; this item is {chosen!r}")
        used.add(chosen)
        ids.append(chosen)
    return ids


def tag_of(text: str) -> str:
    """An Anki tag from a tag's text, or a category's levels joined by `::`: no spaces.
    A `/` is no level (`TCP/IP` is one tag)."""
    parts = [re.sub(r"\s+", "_", p.strip()) for p in text.split("::") if p.strip()]
    return "::".join(parts)


def category_levels(path: str) -> list[str]:
    """A Moodle category path's named levels (`$course$/top/Unit 1/In//Out` -> `Unit 1`,
    `In/Out`): split at `/`, a doubled `//` being a `/` within a level, as Moodle's
    `split_category_path` reads it; its `$...$` context and `top` left out."""
    levels = [p.replace("//", "/") for p in re.split(r"(?<!/)/(?!/)", path)]
    return [p.strip() for p in levels if p.strip() and not p.startswith("$") and p != "top"]


def choice_whys(item: object) -> tuple[str, ...]:
    """The per-choice `why` of a bank item: `Item.whys`, parallel to its choices, or ()."""
    whys = getattr(item, "whys", None) or getattr(item, "why", None)
    if isinstance(whys, tuple) and all(isinstance(w, str) for w in whys):
        return whys
    return ()


def from_bank(bank: Bank) -> Source:
    """A bank as the item model, for the exporters."""
    questions = []
    for item in bank.items:
        whys = choice_whys(item)
        choices = tuple(
            Choice(text, n in item.answer, whys[n - 1] if n <= len(whys) else "")
            for n, text in enumerate(item.choices, start=1)
        )
        questions.append(
            Question(
                line=item.line,
                question=item.question,
                choices=choices,
                name=item.id,
                explanation=item.explanation,
                tags=item.tags,
                shuffle=item.shuffle,
                image=item.image,
                image_alt=item.image_alt,
                explanation_image=item.explanation_image,
                explanation_image_alt=item.explanation_image_alt,
                recall=item.recall,
                retired=item.retired,
                formerly=item.formerly,
                anki_fields=item.anki_fields,
            )
        )
    return Source(
        path=bank.path,
        questions=tuple(questions),
        title=bank.title,
        description=bank.description,
        level=bank.level,
        topic=bank.topic,
        language=bank.language,
        deck=bank.deck,
        origin=bank.source,
        license=bank.license,
        tags=bank.tags,
        shuffle=bank.shuffle,
        recall=bank.recall,
        formerly=(bank.formerly_topics, bank.formerly_languages),
        anki_notetype=bank.anki_notetype,
    )


def store_image(data: bytes, name: str, prefix: str, media: dict[str, bytes]) -> str:
    """Check and clean an imported image as every image is, keep it for the media folder
    (`Source.media`) under `prefix`, and give its path there; ImageProblem if it cannot
    be used."""
    # Pillow, only for a file that has images
    processed = kept_or_processed(data, name, Settings())
    relative = f"{prefix}/{processed.name}" if prefix else processed.name
    media[relative] = processed.data
    return relative
