"""The one way into a bank a user keeps: every command that changes one (`translate
--update`, a PO file's import, `pull`) opens it here and writes it here.

Opening refuses a bank that is not the one the change is for: a PO file of
`collectives` in `de` written with `-o banks/fsdp/en.yaml` would otherwise append its
items to another topic's reference. Writing goes through `core.userfile`: in place
(callers replace texts where they stand, `bank.texts`, so comments, quoting and
layout stay), only while the file still holds what was read, never as a bank that would
not load, and atomically.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ankigen.bank.model import Bank
from ankigen.bank.reader import parse_bank
from ankigen.core.errors import InvalidBanks
from ankigen.core.userfile import Refused, Target, existing, write_all
from ankigen.text import lang


@dataclass(frozen=True)
class OpenBank:
    """A bank as it was read before a change, or where a new one will be."""

    path: Path
    topic: str
    language: str
    """The bank's, in canonical case: what the change is for."""
    before: bytes | None
    """The file's bytes as read; None where there is no bank yet."""
    bank: Bank | None
    inputs: tuple[Path, ...] = ()
    """What the change is read from: never written over."""

    @property
    def text(self) -> str | None:
        """The file's text to edit, its line breaks `\n`: a Windows file's `\r\n` and an
        old Mac file's lone `\r`, which YAML reads as line breaks, are given back by
        `written`, so that lines a change inserts end as the file's others do."""
        if self.before is None:
            return None
        text, line_break = self.before.decode("utf-8"), self._line_break
        return text.replace(line_break, "\n") if line_break != "\n" else text

    @property
    def _line_break(self) -> str:
        """The file's one kind of line break; `\n` for a file of mixed ones, left as it is."""
        data = self.before or b""
        ends, returns = data.count(b"\n"), data.count(b"\r")
        if returns and not ends:
            return "\r"
        if ends and returns == ends == data.count(b"\r\n"):
            return "\r\n"
        return "\n"

    def written(self, text: str) -> bytes:
        """The bytes of the edited `text`, with the file's own line breaks."""
        line_break = self._line_break
        return (text.replace("\n", line_break) if line_break != "\n" else text).encode("utf-8")

    def target(self, *, force: bool = False) -> Target:
        """Where the changed bank goes: replaced only while it holds what was read (a new
        one only where nothing appeared meanwhile), and only by a bank that loads."""
        return Target(
            self.path,
            "a bank",
            force,
            self.inputs,
            edits=self.before,
            check=loads_as_bank(str(self.path)),
        )


def open_bank(
    path: Path, topic: str, language: str, *, source: str, inputs: Sequence[Path] = ()
) -> OpenBank:
    """The bank at `path`, which must be the one of `topic` in `language` (those of
    `source`, named in the refusal); a bank with errors is InvalidBanks, and a path that
    may not be written at all (one of `inputs`, a FIFO, a folder) is Refused."""
    language = lang.canonical_tag(language)
    before = existing(Target(path, "a bank", inputs=tuple(inputs)))
    if before is None:
        return OpenBank(path, topic, language, None, None, tuple(inputs))
    bank, found = parse_bank(str(path), before)
    if bank is None:
        raise InvalidBanks(found)
    has = (bank.topic, lang.canonical_tag(bank.language))
    if has != (topic, language):
        raise Refused(
            f"{path} is the bank of {has[0]!r} in {has[1]!r}, not of {topic!r} in "
            f"{language!r} as {source} is; nothing was written: name the bank of {topic!r} "
            f"in {language!r}, or a new file"
        )
    return OpenBank(path, topic, language, before, bank, tuple(inputs))


def write_banks(changes: Sequence[tuple[OpenBank, str]], *, force: bool = False) -> list[bool]:
    """Each opened bank replaced by its changed text, all or none (`userfile.write_all`);
    whether each was written (False: it already held that text)."""
    writes = [(opened.target(force=force), opened.written(text)) for opened, text in changes]
    return write_all(writes)


def loads_as_bank(shown: str) -> Callable[[bytes], None]:
    """A check for `userfile.Target`: the text written must load as a bank, so a bank is
    never replaced by one that does not (InvalidBanks, naming each problem)."""

    def check(data: bytes) -> None:
        _, problems = parse_bank(shown, data)
        errors = [d for d in problems if d.severity == "error"]
        if errors:
            raise InvalidBanks(errors)

    return check
