"""Import a file into a bank, export a bank into a file: the steps around the formats."""

from __future__ import annotations

import bisect
import functools
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from ankigen.bank.files import read_lock_bytes
from ankigen.bank.folder import LOCK_NAME
from ankigen.bank.reader import load_bank, parse_bank
from ankigen.bank.schema import with_schema_comment
from ankigen.checks.rules import content_checks
from ankigen.core.errors import Diagnostic, InvalidBanks
from ankigen.core.userfile import STDOUT, Target, write, write_all
from ankigen.formats.bankyaml import TODO, bank_yaml, filled_in, reads_as_yaml
from ankigen.formats.model import (
    Format,
    FormatError,
    Problems,
    Question,
    ReadOptions,
    Source,
    assign_ids,
    from_bank,
)
from ankigen.formats.registry import detect, get
from ankigen.identity.guid import deck_key
from ankigen.identity.lockfile import with_adopted
from ankigen.text import lang


@dataclass(frozen=True)
class Imported:
    source: Source
    format: Format
    chosen_by: str
    """Why this format: '' when --from named it."""
    bank: str
    """The bank's YAML."""
    diagnostics: tuple[Diagnostic, ...]
    ids: tuple[str, ...] = ()
    """The id each question got, in order."""
    topic: str = ""
    language: str = ""
    """The bank's, its tag in canonical case."""


def read_quiz_file(path: Path) -> bytes:
    """A quiz file's bytes; a FIFO or a device is refused, never waited on."""
    try:
        regular = stat.S_ISREG(path.stat().st_mode)
    except OSError as exc:
        raise FormatError(f"{path}: cannot read: {exc.strerror}") from None
    if not regular:
        raise FormatError(f"{path}: not a regular file")
    return path.read_bytes()


def import_file(
    path: Path,
    topic: str,
    language: str,
    format_name: str | None = None,
    choices: int | None = None,
    answers: str | None = None,
    columns: tuple[tuple[str, str], ...] = (),
    deck: str = "",
    fields: tuple[tuple[str, tuple[str, ...]], ...] = (),
    *,
    keep_notetype: bool = False,
) -> Imported:
    """Read a file in a quiz format into a bank; raises InvalidBanks if it has errors."""
    data = read_quiz_file(path)
    shown = str(path)
    if format_name is None:
        fmt, chosen_by = detect(shown, data)
    else:
        fmt, chosen_by = get(format_name), ""
    language = lang.canonical_tag(language)
    options = ReadOptions(
        topic,
        language,
        media_prefix=topic,
        choices=choices,
        answers=answers,
        columns=columns,
        deck=deck,
        fields=fields,
        keep_notetype=keep_notetype,
    )
    source = fmt.read(shown, data, options)
    problems = Problems(shown)
    ids = assign_ids(source, problems)
    diagnostics = tuple(sorted(source.diagnostics + tuple(problems.found)))
    if not source.questions and not any(d.severity == "error" for d in diagnostics):
        # a bank needs items: an empty one would be written, and refused by every build
        nothing = f"no question in it can become an item ({source.skipped} skipped)"
        diagnostics = (*diagnostics, Diagnostic(shown, 1, "error", nothing))
    if any(d.severity == "error" for d in diagnostics):
        raise InvalidBanks(diagnostics)
    text = bank_yaml(source, ids, topic, language)
    found = tuple(sorted([*diagnostics, *as_checked(text, source, ids)]))
    return Imported(source, fmt, chosen_by, text, found, tuple(ids), topic, language)


_ITEM_START = re.compile(r"^  - id: ", re.MULTILINE)
# a line of the bank a message names: "the same question as item 'a' (line 6)"
_BANK_LINE = re.compile(
    r"(?P<lead> \(first used at line | \(line | at line |,? line )(?P<line>\d+)(?P<end>\)?)"
)


def as_checked(text: str, source: Source, ids: list[str]) -> list[Diagnostic]:
    """The bank checked as `lint` checks it (but for translation, which needs the bank's
    language right and the other banks), each problem a warning at its question's line
    in the source file: what `build` would refuse, the teacher hears of at once. Its
    TODOs are the author's to fill in and are not problems here."""
    filled = filled_in(text)
    bank, problems = parse_bank(source.path, filled.encode("utf-8"))
    if bank is not None:
        problems.extend(content_checks(bank))
    # each item's first line, counted on from the one before (not from the top each time:
    # 100,000 questions make a file that size)
    starts: list[int] = []
    number, counted = 1, 0
    for item in _ITEM_START.finditer(filled):
        number += filled.count("\n", counted, item.start())
        counted = item.start()
        starts.append(number)

    def question_at(line: int) -> tuple[int, Question | None]:
        """The number of the item on this line of the bank, and its question."""
        at = bisect.bisect_right(starts, line) - 1
        return at, source.questions[at] if 0 <= at < len(source.questions) else None

    def in_the_file(named: re.Match[str], own: Question | None) -> str:
        """A line of the bank a message names, as its question's line in the file the
        teacher has; left out where it is the problem's own question's, or none's."""
        lead, end = named["lead"], named["end"]
        _, question = question_at(int(named["line"]))
        if question is not None and question is not own:
            return f"{lead}{question.line}{end}"
        return "" if lead.startswith(" (") else end  # an outer parenthesis stays

    found = []
    for problem in problems:
        at, question = question_at(problem.line)
        message = _BANK_LINE.sub(functools.partial(in_the_file, own=question), problem.message)
        if question is not None and f"item {ids[at]!r}" not in message:
            message = f"item {ids[at]!r}: {message}"
        if problem.severity == "error":
            message += " (`ankigen build` refuses it until it is fixed)"
        line = question.line if question is not None else 1
        found.append(Diagnostic(source.path, line, "warning", message))
    return found


@dataclass(frozen=True)
class Exported:
    data: bytes
    source: Source
    warnings: tuple[Diagnostic, ...]
    """What the format cannot carry, item by item."""

    def ours(self, before: bytes) -> bool:
        """Whether a file holds an export of the same bank, which this one may replace:
        its first lines carry the same mark (CSV carries none, so it never does)."""
        mark = self.source.export_mark.encode("utf-8")
        if mark not in self.data:
            return False
        ends = re.compile(re.escape(mark) + rb"(?: -->)?\s*$")
        return any(ends.search(line) for line in before.splitlines()[:3])


def export_bank(path: Path, format_name: str, media_dir: Path) -> Exported:
    """A bank file written in another format; raises InvalidBanks if the bank has errors."""
    fmt = get(format_name)
    assert fmt.write is not None, format_name
    bank, problems = load_bank(path)
    if bank is None:
        raise InvalidBanks(problems)
    source = from_bank(bank)
    return Exported(fmt.write(source, media_dir), source, tuple(losses(source, format_name)))


def losses(source: Source, format_name: str) -> list[Diagnostic]:
    """A warning for each thing of an item the format cannot carry (GIFT loses most:
    Moodle XML carries `recall` in an element of ankigen's own, CSV in a column; none
    has a place for an adopted note's fields)."""
    found = []
    for question in source.questions:
        lost = []
        if question.anki_fields:
            lost.append("its anki_fields (its Anki note's own fields: only Anki has them)")
        if format_name == "gift":
            if question.image or question.explanation_image:
                lost.append("its images (GIFT files carry none)")
            if question.shuffle is False:
                lost.append("shuffle: false (GIFT has no such setting)")
            if len(question.tags) > 1:
                lost.append("its tags after the first (GIFT has one category per question)")
            if question.recall:
                lost.append("recall: true (GIFT has no such setting)")
        for what in lost:
            found.append(
                Diagnostic(
                    source.path,
                    question.line,
                    "warning",
                    f"item {question.name!r}: {what} not exported",
                )
            )
    return found


@dataclass(frozen=True)
class ImportWritten:
    """An import written out: the bank (to `bank`, `-` for standard output) and the
    images it embeds (each with whether it was written or already there)."""

    imported: Imported
    images: tuple[tuple[Path, bool], ...]
    bank: Path
    wrote: bool
    lock: tuple[Path, bool] | None = None
    """The lock an adopted deck's GUIDs went into, and whether it was written."""

    @property
    def todo(self) -> int:
        """The places the author is to fill in."""
        return self.imported.bank.count(TODO)


def write_import(
    imported: Imported,
    path: Path,
    out: Path | None,
    media: Path,
    *,
    force: bool = False,
    banks_dir: Path = Path("banks"),
) -> ImportWritten:
    """Write the bank `import_file` read from `path`, with its images under `media`:
    nothing is written unless everything may be (`userfile`). A deck adopted from Anki
    goes into `banks_dir`, its notes' GUIDs into the lock beside it."""
    adopted = any(question.guid for question in imported.source.questions)
    if adopted and out is None:
        out = banks_dir / imported.topic / f"{imported.language}.yaml"
    bank_path = out or Path(STDOUT)
    # an existing image is replaced only by the same bytes (and then left alone)
    images = [
        (Target(media / relative, "an image", force, (path,)), data)
        for relative, data in imported.source.media
    ]
    # every problem of the bank is a warning of the import's (`as_checked`): what is
    # written only has to be YAML that reads as a bank
    bank = Target(bank_path, "a bank", force, (path,), check=reads_as_yaml(str(bank_path)))
    # where the bank goes is known only now
    text = with_schema_comment(bank_path, imported.bank)
    writes = [*images, (bank, text.encode("utf-8"))]
    if adopted:
        writes.append(_adopted_lock(imported, bank_path, banks_dir))
    written = write_all(writes)
    shown = tuple((target.path, wrote) for (target, _), wrote in zip(images, written, strict=False))
    lock = (writes[-1][0].path, written[-1]) if adopted else None
    return ImportWritten(imported, shown, bank_path, written[len(images)], lock)


def _adopted_lock(imported: Imported, bank_path: Path, banks_dir: Path) -> tuple[Target, bytes]:
    """The lock with the adopted deck's notes, by the ids their items got: the bank must be
    one of the banks the lock is beside, or no build would find them there."""
    try:
        relative = bank_path.resolve().relative_to(banks_dir.resolve())
    except ValueError:
        raise FormatError(
            f"{bank_path}: an adopted deck's bank goes into the banks folder ({banks_dir}), "
            "where its lock keeps its notes' GUIDs; choose -o there, or --banks"
        ) from None
    notes = {
        item: (question.guid, question.modified)
        for item, question in zip(imported.ids, imported.source.questions, strict=True)
    }
    lock_path = banks_dir / LOCK_NAME
    raw = read_lock_bytes(lock_path)
    key = deck_key(imported.topic, imported.language)
    # the deck's name as the build will name it (the bank keeps the deck's own, nested
    # decks whole): under the title alone, the first build warned of a rename
    name = imported.source.deck or imported.source.title or key
    data = with_adopted(str(lock_path), raw, key, name, relative.as_posix(), notes)
    # replaced only while it holds what was read: a build meanwhile is not undone
    return Target(lock_path, "a lock file", edits=raw), data


@dataclass(frozen=True)
class ExportWritten:
    exported: Exported
    out: Path
    """Where it went: `-` for standard output."""
    wrote: bool


def export_to(
    path: Path, format_name: str, out: Path | None, media_dir: Path, force: bool = False
) -> ExportWritten:
    """A bank written in another format: an existing file is replaced only if it is an
    export of the same bank, or with `force`."""
    exported = export_bank(path, format_name, media_dir)
    target = Target(out or Path(STDOUT), format_name, force, (path,), ours=exported.ours)
    return ExportWritten(exported, target.path, write(target, exported.data))
