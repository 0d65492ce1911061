"""Every line a command prints, for standard output or error: the commands return what
they did, and this module alone words it.

Written without click, so that `ankigen build` prints its report before the command
line is loaded (`quick`); `app` echoes the same lines."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ankigen.core.errors import printable

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from ankigen.builder.result import BuildResult
    from ankigen.checks.run import Linted
    from ankigen.formats.convert import ExportWritten, ImportWritten
    from ankigen.preview.pages import Previewed
    from ankigen.pull.pull import Pulled
    from ankigen.push import PushReport
    from ankigen.translation.po import PoImported, PoWritten
    from ankigen.translation.start import Started


@dataclass(frozen=True)
class Line:
    text: str
    to_stderr: bool = False


def count(number: int, word: str) -> str:
    return f"{number} {word}{'' if number == 1 else 's'}"


def warning_summary(warnings: int) -> str | None:
    if not warnings:
        return None
    return f"{count(warnings, 'warning')} in the banks; 'ankigen lint' lists them"


def warning_lines(warnings: int) -> list[Line]:
    summary = warning_summary(warnings)
    return [Line(summary, True)] if summary else []


def build_lines(result: BuildResult, out: Path, as_json: bool) -> list[Line]:
    """The notices (standard error), then each deck or the JSON report (standard output)."""
    summary = warning_summary(len(result.warnings))
    lines = [Line(summary, True)] if summary else []
    lines += [Line(f"pruned deck {key!r} from the lock", True) for key in result.pruned]
    lines += [Line(str(change), True) for change in result.changes]
    if as_json:
        import json

        decks = [d.as_json() | {"path": str(out / d.path)} for d in result.decks]
        return [*lines, Line(json.dumps({"decks": decks}, indent=1))]
    for deck in result.decks:
        if not deck.written:
            lines.append(
                Line(
                    f"up to date {out / deck.path}: {count(deck.notes, 'note')}, "
                    f"version {deck.version}"
                )
            )
            continue
        retired = f", {deck.retired} retired" if deck.retired else ""
        lines.append(
            Line(
                f"wrote {out / deck.path}: {count(deck.notes, 'note')} "
                f"({deck.new} new, {deck.changed} changed, {deck.unchanged} unchanged, "
                f"{deck.removed} removed{retired}), version {deck.version}"
            )
        )
    return lines


def lint_lines(linted: Linted) -> list[Line]:
    lines = [Line(str(diagnostic)) for diagnostic in linted.diagnostics]
    summary = (
        f"{count(linted.errors, 'error')}, {count(linted.warnings, 'warning')} "
        f"in {count(linted.banks, 'bank')}"
    )
    return [*lines, Line(summary)]


def preview_lines(previewed: Previewed) -> list[Line]:
    return [
        *warning_lines(previewed.warnings),
        *(Line(f"wrote {page}") for page in previewed.pages),
    ]


def detected_line(path: Path, format_name: str, chosen_by: str) -> Line:
    said = f"reading {path} as {format_name} (chosen by {chosen_by}; --from sets it)"
    return Line(printable(said), True)


def import_lines(path: Path, written: ImportWritten) -> list[Line]:
    source = written.imported.source
    lines = [Line(f"{path}: {source.fields_read}", True)] if source.fields_read else []
    lines += [Line(f"{path}:{number}: note: {note}", True) for number, note in source.notes]
    lines += [Line(str(diagnostic), True) for diagnostic in written.imported.diagnostics]
    lines += [Line(f"{_done(wrote)} {image}", True) for image, wrote in written.images]
    if str(written.bank) != "-":
        todo = written.todo
        more = f"; fill in the {count(todo, 'place')} marked TODO" if todo else ""
        lines.append(Line(f"{_done(written.wrote)} {written.bank}{more}", True))
    count_line = f"{count(len(source.questions), 'item')} imported, {source.skipped} skipped"
    if written.lock is not None:
        kept = source.anki_notetype
        said = ADOPTED_KEPT.format(name=kept.name) if kept else ADOPTED
        lines += [Line(f"{_done(written.lock[1])} {written.lock[0]}", True), Line(said, True)]
    return [*lines, Line(count_line, True)]


ADOPTED_KEPT = (
    "the notes' GUIDs are in the lock and the bank keeps their note type {name!r} "
    "(anki_notetype:): a build updates the notes learners have, cards, reviews and "
    "scheduling kept, and Anki replaces that note type's card by ankigen's, drawn from the "
    "same fields, with no full sync (docs/round-trip.md, 'Adopting a deck')"
)

ADOPTED = (
    "the notes' GUIDs are in the lock: new learners get ankigen's cards, and no build adds "
    "those notes twice. Anki's importer does not change the note type of notes learners "
    "already have: by default it skips them, and their cards and reviews stay as they "
    "were; with 'Merge note types' ticked, each gets a new card, unreviewed, beside its old "
    "one (docs/round-trip.md, 'Adopting a deck')"
)


def export_lines(done: ExportWritten) -> list[Line]:
    lines = [Line(str(warning), True) for warning in done.exported.warnings]
    if str(done.out) != "-":
        items = count(len(done.exported.source.questions), "item")
        lines.append(Line(f"{_done(done.wrote)} {done.out}: {items}", True))
    return lines


def po_import_lines(po_path: Path, imported: PoImported) -> list[Line]:
    done = imported.done
    lines = [Line(str(warning), True) for warning in done.warnings]
    path = done.bank.path
    if str(path) != "-":
        translations = count(done.translated, "translation")
        fuzzy = (
            f"; {count(done.fuzzy, 'fuzzy translation')} not imported (marked to check: "
            "clear the mark, Poedit's 'Needs work', once checked)"
            if done.fuzzy
            else ""
        )
        said = f"{_done(imported.wrote)} {path}: {translations} from {po_path}{fuzzy}"
        lines.append(Line(said))
    return lines


def po_export_lines(po_path: Path, done: PoWritten) -> list[Line]:
    if str(po_path) == "-":
        return []
    how = ("merged into" if done.merged else "wrote") if done.wrote else "unchanged"
    return [Line(f"{how} {po_path}: {done.texts} texts, {done.translated} translated")]


def translate_lines(started: Started, update: bool) -> list[Line]:
    if update and not started.added and not started.renamed:
        return [Line(f"{started.path}: nothing to add")]
    what = "added" if update else "to translate"
    items = count(len(started.added), "item")
    lines = [Line(f"wrote {started.path}: {items} {what} from {started.reference.path}")]
    lines += [
        Line(f"  renamed {old!r} to {new!r}, as the reference did (formerly: [{old}])")
        for old, new in started.renamed
    ]
    if started.reference.anki_notetype is not None:
        lines.append(Line(TRANSLATED_KEPT.format(path=started.reference.path)))
    return lines


TRANSLATED_KEPT = (
    "{path} keeps an adopted deck's note type: a translation is a new deck, on ankigen's own "
    "note type, so it has neither anki_notetype: nor the items' anki_fields (the adopted "
    "notes' other fields, which stay with them)"
)


def release_notes_lines(out: Path | None, wrote: bool) -> list[Line]:
    return [Line(f"{_done(wrote)} {out}", True)] if out is not None and str(out) != "-" else []


def push_lines(report: PushReport) -> list[Line]:
    import json

    lines = [Line(f"unchanged since the last push: {path}") for path in report.unchanged]
    for pushed in report.pushed:
        reply = json.dumps(pushed.reply, ensure_ascii=False)
        lines.append(Line(f"pushed {pushed.path}: Anki replied {reply}"))
    pushed_count = count(len(report.pushed), "package")
    return [*lines, Line(f"{pushed_count} pushed, {len(report.unchanged)} unchanged")]


def _done(wrote: bool) -> str:
    return "wrote" if wrote else "unchanged"


def progress_text(done: int, total: int) -> str:
    """The build's counter on a terminal: one line rewritten, cleared at the end."""
    end = "\r\033[K" if done == total else ""
    return f"\rbuilding {done}/{total} decks{end}"


def connected_line(version: object, url: str) -> Line:
    return Line(f"AnkiConnect {version} at {url}", True)


def media_line(media: Path) -> Line:
    return Line(f"reading images from {media}, outside the project (--media)", True)


def pull_lines(
    pulled: Pulled,
    wrote: list[str] | None,
    missing: Sequence[str],
    unseen: Mapping[str, int] | None = None,
) -> list[Line]:
    """What a pull found (standard error), then what it wrote or would write; `wrote` is
    None for a dry run, or when conflicts kept it from writing."""
    lines = [Line(f"Anki has no deck {name!r}: nothing pulled from it", True) for name in missing]
    lines += [
        Line(
            f"{count(number, 'note')} of the deck {name!r} not in it in Anki (cards moved "
            "to another deck, or notes deleted): nothing pulled from them; export the deck "
            "they are in and pull that file",
            True,
        )
        for name, number in sorted((unseen or {}).items())
    ]
    lines += [Line(str(warning), True) for warning in pulled.warnings]
    lines += _conflict_lines(pulled)
    lines += _unpulled_lines(pulled)
    by_bank: dict[str, list[str]] = {}
    for change in pulled.changes:
        by_bank.setdefault(change.path, []).append(change.item)
    for path, items in sorted(by_bank.items()) if not pulled.conflicts else ():
        done = "would pull" if wrote is None else "pulled" if path in wrote else "unchanged"
        names = ", ".join(dict.fromkeys(items))
        lines.append(Line(f"{done} {count(len(items), 'text')} into {path} ({names})"))
    if not pulled.changes and not pulled.conflicts:
        lines.append(Line(_nothing_to_pull(pulled)))
    return lines


def _nothing_to_pull(pulled: Pulled) -> str:
    """Why nothing was pulled: every note in step, or none of ankigen's at all (a package
    of other decks, which "0 notes in step" left to guess)."""
    ours = pulled.in_step + pulled.other_build + len(pulled.kept) + len(pulled.strangers)
    if not ours and pulled.other_types:
        return (
            f"nothing to pull: none of its {count(pulled.other_types, 'note')} is of "
            "ankigen's note type (a package of other decks?)"
        )
    return f"nothing to pull: {count(pulled.in_step, 'note')} in step"


def _conflict_lines(pulled: Pulled) -> list[Line]:
    """Each text changed on both sides, then how to choose."""
    lines = []
    for c in pulled.conflicts:
        lines += [
            Line(
                f"{c.path}:{c.line}: error: item {c.item!r}: {c.context} changed in Anki and "
                "in the bank since the last build"
                + ("" if c.known else " (or in one of them: what that build issued is gone)"),
                True,
            ),
            Line(f"    in Anki:     {c.anki!r}", True),
            Line(f"    in the bank: {c.bank!r}", True),
        ]
    if pulled.conflicts:
        items = sorted({c.item for c in pulled.conflicts})
        lines.append(
            Line(
                f"{count(len(pulled.conflicts), 'conflict')} in {count(len(items), 'item')}: "
                "nothing was written. Choose with --take anki or --take bank (all), or "
                f"--take anki:ITEM / --take bank:ITEM (say, --take anki:{items[0]})",
                True,
            )
        )
    return lines


def _unpulled_lines(pulled: Pulled) -> list[Line]:
    """The notes a pull leaves alone, and the texts it keeps, with why."""
    lines = []
    if pulled.strangers:
        lines += _listed(
            f"{count(len(pulled.strangers), 'note')} of ankigen's note type that these banks' "
            "lock never issued (not imported; notes are matched by GUID only):",
            [f"{n.guid}  {n.deck or '(no deck)'}  {n.fields[6]!r}" for n in pulled.strangers],
        )
    if pulled.others:
        lines += _listed(
            f"{count(len(pulled.others), 'note')} of another note type in these decks "
            "(not pulled):",
            [f"{o.guid}  {o.deck}  {o.notetype}  {o.words!r}" for o in pulled.others],
        )
    if pulled.kept:
        lines.append(
            Line(
                f"kept the bank's text for {count(len(pulled.kept), 'text')} (--take bank): "
                "the next build sends it to Anki",
                True,
            )
        )
    if pulled.other_build:
        lines.append(
            Line(
                f"{count(pulled.other_build, 'note')} in Anki hold another build's text, not "
                "an edit: import the latest build there",
                True,
            )
        )
    return lines


def _listed(heading: str, rows: list[str], shown: int = 20) -> list[Line]:
    """A heading and the first rows under it, on standard error, with how many more."""
    lines = [Line(heading, True), *(Line(f"    {row}", True) for row in rows[:shown])]
    if len(rows) > shown:
        lines.append(Line(f"    and {len(rows) - shown} more", True))
    return lines
