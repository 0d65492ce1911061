"""The project file, `BANKS/ankigen.toml`: settings for every bank of a project.

```toml
deck = "Distributed training::{topic_title}::{title} ({language})"
reference = "en"
tags = ["distributed-training"]
media = "../media"

[topics]
fsdp = "FSDP"
```

Read with the standard library's tomllib. Every problem is a Diagnostic at
its line, reported with the banks' own.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ankigen.bank.folder import PROJECT_NAME
from ankigen.bank.keys import PLACEHOLDERS, PROJECT_KEYS_TABLE, names
from ankigen.bank.model import MAX_DECK_PART, SLUG
from ankigen.core.errors import Diagnostic, InvalidBanks
from ankigen.core.reading import read_regular
from ankigen.text import lang

if TYPE_CHECKING:
    from ankigen.bank.model import Bank

KEYS = tuple(names(PROJECT_KEYS_TABLE))
MAX_FILE_BYTES = 1 << 20


@dataclass(frozen=True)
class Project:
    """The project's settings; all empty when there is no project file."""

    path: str = ""
    deck: str = ""
    """Deck-name template with {title} {topic} {language} {topic_title}; a bank's `deck:` wins."""
    reference: str = ""
    """The reference language of every topic; by default English where a topic has it."""
    tags: tuple[str, ...] = ()
    """Added to every note of every bank."""
    media: Path | None = None
    """The media folder, relative to the banks folder."""
    topics: tuple[tuple[str, str], ...] = ()
    """Display names of topics, for {topic_title}."""
    digest: str = ""
    """A hash of the file, so caches notice a change."""
    lines: dict[str, int] = field(default_factory=dict, compare=False, hash=False)

    def topic_title(self, topic: str) -> str:
        return dict(self.topics).get(topic) or topic

    def deck_name(self, bank: Bank) -> str:
        if bank.deck or not self.deck:
            return bank.deck_name
        values = {
            "title": bank.title,
            "topic": bank.topic,
            "language": bank.language,
            "topic_title": self.topic_title(bank.topic),
        }
        return _TEMPLATE_PART.sub(lambda m: _placed(m[0], values), self.deck)

    def apply(self, bank: Bank) -> Bank:
        """The bank with the project's deck name and tags."""
        if not self.path:
            return bank
        tags = tuple(dict.fromkeys((*self.tags, *bank.tags)))
        return dataclasses.replace(bank, deck=self.deck_name(bank), tags=tags)

    def apply_all(self, banks: Sequence[Bank]) -> tuple[Bank, ...]:
        return tuple(self.apply(bank) for bank in banks)


def project_path(banks_dir: Path) -> Path:
    return banks_dir / PROJECT_NAME


_TOML_AT = re.compile(r"\(at line (\d+), column \d+\)")


def load_project(banks_dir: Path) -> tuple[Project, list[Diagnostic]]:
    """The project file in the banks folder (an empty Project if there is none)."""
    path = project_path(banks_dir)
    shown = str(path)
    try:
        data = read_regular(path)
    except FileNotFoundError:
        return Project(), []
    except OSError as exc:
        return Project(), [Diagnostic(shown, 0, "error", f"cannot read: {exc.strerror}")]
    return parse_project(shown, data, banks_dir)


def parse_project(shown: str, data: bytes, banks_dir: Path) -> tuple[Project, list[Diagnostic]]:
    """A project file's content; `shown` names it in messages."""
    import tomllib  # here: only projects with a project file load it

    if len(data) > MAX_FILE_BYTES:
        return Project(), [Diagnostic(shown, 1, "error", "the project file is over 1 MiB")]
    try:
        text = data.decode("utf-8")
        raw = tomllib.loads(text)
    except UnicodeDecodeError:
        return Project(), [Diagnostic(shown, 1, "error", "not UTF-8 text: save it as UTF-8")]
    except tomllib.TOMLDecodeError as exc:
        found = _TOML_AT.search(str(exc))
        message = _TOML_AT.sub("", str(exc)).replace("(at end of document)", "").strip()
        line = int(found[1]) if found else text.rstrip("\n").count("\n") + 1
        return Project(), [Diagnostic(shown, line, "error", f"TOML syntax: {message}")]
    except ValueError:  # an integer of more digits than Python converts (over 4,300)
        return Project(), [Diagnostic(shown, 1, "error", "TOML: a number too long to read")]
    except RecursionError:
        return Project(), [Diagnostic(shown, 1, "error", "TOML: arrays or tables nested too deep")]
    return _read(shown, text, raw, banks_dir, hashlib.sha256(data).hexdigest()[:16])


def _line_of(text: str, key: str, table: str = "") -> int:
    """The line where `key = ...` is set (in `[table]` if given); 1 if not found."""
    start = 0
    if table:
        header = re.search(rf"(?m)^\s*\[\s*{re.escape(table)}\s*\]", text)
        if header:
            start = header.end()
    match = re.compile(rf"(?m)^\s*\"?{re.escape(key)}\"?\s*=").search(text, start)
    return text.count("\n", 0, match.start()) + 1 if match else 1


_Report = Callable[..., None]
"""Reports a problem at the line of a key: `report(key, message, table="")`."""


def _read(
    shown: str, text: str, raw: dict[str, object], banks_dir: Path, digest: str
) -> tuple[Project, list[Diagnostic]]:
    problems: list[Diagnostic] = []

    def report(key: str, message: str, table: str = "") -> None:
        problems.append(Diagnostic(shown, _line_of(text, key, table), "error", message))

    for key in raw:
        if key not in KEYS:
            import difflib

            hint = difflib.get_close_matches(key, KEYS, n=1)
            report(key, f"unknown key {key!r}" + (f"; did you mean {hint[0]!r}?" if hint else ""))
    deck = _deck(raw.get("deck", ""), report)
    reference = _reference(raw.get("reference", ""), report)
    tags = _tags(raw.get("tags", []), report)
    media = _media(raw.get("media"), banks_dir, report)
    pairs = _topics(raw.get("topics", {}), report)
    project = Project(
        path=shown,
        deck=deck,
        reference=lang.canonical_tag(reference) if reference else "",
        tags=tuple(tags),
        media=(banks_dir / media) if media else None,
        topics=tuple(pairs),
        digest=digest,
        lines={key: _line_of(text, key) for key in raw},
    )
    return project, problems


def _deck(deck: object, report: _Report) -> str:
    if not isinstance(deck, str):
        report("deck", "deck must be text")
        return ""
    problem = _template_problem(deck) if deck else None
    if problem:
        report("deck", problem)
        return ""
    return deck


def _reference(reference: object, report: _Report) -> str:
    if not isinstance(reference, str) or (reference and not lang.is_valid_tag(reference)):
        report("reference", f"reference {reference!r} is not a BCP 47 tag such as en")
        return ""
    return reference


def _tags(tags: object, report: _Report) -> list[str]:
    if not isinstance(tags, list) or not all(
        isinstance(t, str) and t and not any(c.isspace() for c in t) for t in tags
    ):
        report("tags", "tags must be a list of tags without white space")
        return []
    return tags


def _media(media: object, banks_dir: Path, report: _Report) -> str | None:
    if media is not None and (not isinstance(media, str) or "\0" in media):
        report("media", "media must be a folder path")
        return None
    if media and outside_project(banks_dir, banks_dir / media):
        # a one-line change in a contributed pull request must not ship any image the
        # builder can read; --media on the command line is the user's own choice
        report(
            "media",
            f"media {media!r} is outside the project folder ({banks_dir.parent.resolve()}); "
            "images come from inside it (the command line's --media may point anywhere)",
        )
        return None
    return media


def _topics(topics: object, report: _Report) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    if not isinstance(topics, dict):
        report("topics", "topics must be a table of topic = display name")
        return pairs
    for slug, title in topics.items():
        if not SLUG.fullmatch(slug):
            report(slug, f"topics: {slug!r} is not a topic slug", "topics")
        elif not isinstance(title, str) or not title.strip():
            report(slug, f"topics: the display name of {slug!r} must be text", "topics")
        else:
            pairs.append((slug, title.strip()))
    return pairs


_TEMPLATE_PART = re.compile(r"\{\{|\}\}|\{[^{}]*\}|[{}]")
"""What a deck template holds besides text: `{{`, `}}`, `{name}`, or a stray brace."""


def _placed(part: str, values: dict[str, str]) -> str:
    if part in ("{{", "}}"):
        return part[0]
    return values[part[1:-1]]


def _template_problem(template: str) -> str | None:
    """Only `{name}` with the documented names, and `{{`/`}}` for braces: no conversion,
    no format spec (`str.format` would let `{title:>300000000}` take gigabytes)."""
    known = ", ".join("{" + p + "}" for p in PLACEHOLDERS)
    for match in _TEMPLATE_PART.finditer(template):
        part = match[0]
        if part in ("{{", "}}"):
            continue
        if part in ("{", "}"):
            return f"deck template: a lone {part!r}; write {part * 2!r} for a brace, or use {known}"
        name = part[1:-1]
        if name not in PLACEHOLDERS and any(mark in name for mark in "!:[]."):
            return f"deck template: {part} has a conversion or format spec; use {known}"
        if name not in PLACEHOLDERS:
            return f"deck template: unknown placeholder {part}; use {known}"
    if any(unicodedata.category(char) in ("Cc", "Cs", "Co", "Cn") for char in template):
        return "deck template: a control character or noncharacter; remove it"
    parts = _TEMPLATE_PART.sub("x", template).split("::")
    if any(not part.strip() for part in parts):
        return f"deck template {template!r} has an empty part around '::'"
    if any(len(part) > MAX_DECK_PART for part in parts):
        return f"deck template: a part between '::' is longer than {MAX_DECK_PART} characters"
    return None


def outside_project(banks_dir: Path, folder: Path) -> bool:
    """Whether a folder (links resolved) lies outside the project: the folder that
    holds the banks folder, where the project file's `media` must stay."""
    try:
        return not folder.resolve().is_relative_to(banks_dir.resolve().parent)
    except (OSError, RuntimeError):  # a link loop
        return True


def require_project(banks_dir: Path) -> Project:
    """The project, or InvalidBanks with its problems."""
    project, problems = load_project(banks_dir)
    if problems:
        raise InvalidBanks(problems)
    return project
