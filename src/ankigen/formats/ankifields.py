"""An adopted deck's fields (`formats.apkg`): which field of its note type holds what
(`FieldMap`, from `--fields` or the Multiple Choice add-on's names), which are carried as
they are (`carried_fields`), and how the import says so (`fields_read`)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ankigen.bank.model import MAX_CARRIED_TEXT, KeptNotetype
from ankigen.formats.model import FormatError, Problems

ROLES = ("question", "choices", "answer", "explanation", "title", "sources", "kind")
"""What `--fields` can name: `kind` is a field like the add-on's QType (0 Kprim, 1 several
answers, 2 one answer)."""

_CHOICE_FIELD = re.compile(r"Q_(\d+)")
_RANGE = re.compile(r"(.*?)(\d+)\.\.(?:\1)?(\d+)")
_LETTERS = re.compile(r"(.*?)([A-Za-z])\.\.(?:\1)?([A-Za-z])")


@dataclass(frozen=True)
class FieldMap:
    """Which field of the note type holds what."""

    question: str
    choices: tuple[str, ...]
    answer: str
    explanation: tuple[str, ...] = ()
    title: str = ""
    sources: str = ""
    kind: str = ""

    @property
    def parts(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """The fields named, by role in `ROLES` order."""
        named = ((role, getattr(self, role)) for role in ROLES)
        return tuple((role, (f,) if isinstance(f, str) else f) for role, f in named if f)

    @property
    def names(self) -> set[str]:
        return {name for _, names in self.parts for name in names}


def _expand(name: str) -> list[str]:
    """The field names one name of `--fields` stands for: `Q_1..Q_5`, `A..D`,
    `ChoiceA..ChoiceD`, or itself."""
    ranged, letters = _RANGE.fullmatch(name), _LETTERS.fullmatch(name)
    if letters:  # A..D, ChoiceA..ChoiceD
        first, last = ord(letters[2]), ord(letters[3])
        names = [f"{letters[1]}{chr(c)}" for c in range(first, last + 1)]
    elif ranged:
        start, end = int(ranged[2]), int(ranged[3])
        names = [f"{ranged[1]}{n}" for n in range(start, end + 1)]
    else:
        return [name] if name else []
    if not names:
        raise FormatError(f"{name!r} runs backwards: a range goes from the first field to the last")
    return names


def parse_fields(spec: str) -> dict[str, tuple[str, ...]]:
    """`--fields question=Front,choices=Q_1..Q_5,...` by role; a FormatError saying what is
    wrong with it."""
    found: dict[str, tuple[str, ...]] = {}
    for part in filter(None, (p.strip() for p in spec.split(","))):
        role, equals, value = part.partition("=")
        role = role.strip()
        if not equals or role not in ROLES or not value.strip():
            raise FormatError(f"{part!r} is not ROLE=FIELD, ROLE one of {', '.join(ROLES)}")
        found[role] = tuple(name for n in value.split("+") for name in _expand(n.strip()))
        if len(found[role]) > 1 and role not in ("choices", "explanation"):
            raise FormatError(
                f"{part!r}: {role} is one field (only choices and explanation join several)"
            )
    for role in ("question", "answer"):
        if role not in found:
            raise FormatError(f"{role}=FIELD is needed")
    return found


def field_map(fields: Sequence[str], given: Mapping[str, tuple[str, ...]] | None) -> FieldMap:
    """The mapping for a note type with these fields: the one given, checked against
    them, or the add-on's, recognized by its field names."""
    if given:
        missing = [name for names in given.values() for name in names if name not in fields]
        if missing:
            raise FormatError(
                f"--fields names {', '.join(map(repr, missing))}, which the note type lacks "
                f"(its fields: {', '.join(fields)})"
            )
        one = {role: names[0] if names else "" for role, names in given.items()}
        return FieldMap(
            question=one["question"],
            choices=given.get("choices", ()),
            answer=one["answer"],
            explanation=given.get("explanation", ()),
            title=one.get("title", ""),
            sources=one.get("sources", ""),
            kind=one.get("kind", ""),
        )
    numbered = sorted(
        (int(m[1]), name) for name in fields if (m := _CHOICE_FIELD.fullmatch(name)) is not None
    )
    kind = next((name for name in fields if name.startswith("QType")), "")
    if not ({"Question", "Answers"} <= set(fields) and numbered and kind):
        raise FormatError(
            f"a note type with the fields {', '.join(fields)} is not the Multiple Choice "
            "add-on's: say which field holds what with --fields question=FIELD,"
            "choices=FIELD..FIELD,answer=FIELD[,explanation=FIELD]"
        )
    return FieldMap(
        question="Question",
        choices=tuple(name for _, name in numbered),
        answer="Answers",
        explanation=tuple(name for name in ("Extra 1",) if name in fields),
        title="Title" if "Title" in fields else "",
        sources="Sources" if "Sources" in fields else "",
        kind=kind,
    )


_ROLE_NOTES = {"title": " (in bold above the question)", "sources": " (after the explanation)"}


def fields_read(mapping: FieldMap, unmapped: Sequence[str], kept: KeptNotetype | None) -> str:
    """Which field became what, which are carried as they are (or, on ankigen's note type,
    not read), for the import's output."""
    said = ", ".join(
        f"{_names(names)} -> {role}{_ROLE_NOTES.get(role, '')}" for role, names in mapping.parts
    )
    emptied = [name for name in sorted(mapping.names) if kept and name not in kept.mapped]
    if emptied:
        said += f"; read into the items' texts, then left empty: {', '.join(emptied)}"
    if unmapped:
        said += (
            f"; carried as they are: {', '.join(unmapped)}"
            if kept
            else f"; not read (ankigen's note type has no field for them): {', '.join(unmapped)}"
        )
    return f"fields: {said}"


def _names(names: Sequence[str]) -> str:
    """Fields as `--fields` would name them: a range where they make one."""
    if len(names) > 2 and _expand(f"{names[0]}..{names[-1]}") == list(names):
        return f"{names[0]}..{names[-1]}"
    return " + ".join(names)


# where Anki finds a field's media (rslib's `media::files`): an element's src (or an
# object's data), and sound tags
_MEDIA = re.compile(
    r"""<(?:img|audio|video|source|object)\b[^>]*?\b(?:src|data)\s*=\s*"""
    r"""(?:"([^"]+)"|'([^']+)'|([^\s"'>]+))|\[sound:(.+?)\]""",
    re.IGNORECASE,
)


def carried_fields(
    fields: Mapping[str, str],
    names: Sequence[str],
    line: int,
    problems: Problems,
    media: dict[str, int],
) -> tuple[tuple[str, str], ...]:
    """A note's fields `names`, carried as they are (but the empty ones: a build writes
    the others empty), and into `media` the files they show, by the first note that does."""
    carried = []
    for name in names:
        value = fields.get(name, "")
        if len(value) > MAX_CARRIED_TEXT:
            problems.warn(
                line,
                f"field {name!r} holds {len(value)} characters, more than a bank carries "
                f"({MAX_CARRIED_TEXT}): not carried, a build leaves it empty",
            )
        elif value:
            carried.append((name, value))
            for found in _MEDIA.finditer(value):
                file = next(group for group in found.groups() if group)
                if "://" not in file and not file.startswith("data:"):
                    media.setdefault(file, line)
    return tuple(carried)


def warn_of_media(media: dict[str, int], problems: Problems) -> None:
    """The media the carried fields show, which no package of the bank holds."""
    if not media:
        return
    files = sorted(media, key=media.__getitem__)
    problems.warn(
        min(media.values()),
        f"fields carried as they are show media ({', '.join(map(repr, files[:5]))}"
        f"{', ...' if len(files) > 5 else ''}): the package a build makes does not hold "
        "those files; learners who have the deck keep theirs, and ankigen's card does not "
        "show these fields",
    )
