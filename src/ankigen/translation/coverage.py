"""Translation coverage: for each topic and language, how complete the bank is."""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ankigen.bank.project import require_project
from ankigen.bank.workspace import find_bank_paths
from ankigen.checks.run import Checked, check_paths
from ankigen.checks.translation import untranslated_items


@dataclass(frozen=True)
class Coverage:
    topic: str
    language: str
    items: int
    translated: int
    untranslated: int
    missing: int
    errors: int


def coverage(checked: Checked) -> list[Coverage]:
    """One row per bank file, broken ones included (named after their path)."""
    topic_ids: dict[str, set[str]] = {}
    for bank in checked.banks:
        topic_ids.setdefault(bank.topic, set()).update(i.id for i in bank.items)
    errors: dict[str, int] = {}
    for d in checked.diagnostics:
        if d.severity == "error":
            errors[d.path] = errors.get(d.path, 0) + 1
    rows = []
    untranslated = untranslated_items(checked.banks, checked.reference)
    for bank in checked.banks:
        foreign = len(untranslated.get(bank.key, {}))
        rows.append(
            Coverage(
                topic=bank.topic,
                language=bank.language,
                items=len(bank.items),
                translated=len(bank.items) - foreign,
                untranslated=foreign,
                missing=len(topic_ids[bank.topic] - {i.id for i in bank.items}),
                errors=errors.get(bank.path, 0),
            )
        )
    for path in checked.failed:
        # a bank that did not load: known only by the folder convention topic/language.yaml
        rows.append(
            Coverage(
                topic=Path(path).parent.name,
                language=Path(path).stem,
                items=0,
                translated=0,
                untranslated=0,
                missing=len(topic_ids.get(Path(path).parent.name, set())),
                errors=errors.get(str(path), 0),
            )
        )
    return sorted(rows, key=lambda r: (r.topic, r.language))


HEADERS = ("topic", "language", "items", "translated", "untranslated", "missing", "errors")


def table(rows: Sequence[Coverage]) -> str:
    cells = [HEADERS] + [
        (
            r.topic,
            r.language,
            *(str(n) for n in (r.items, r.translated, r.untranslated, r.missing, r.errors)),
        )
        for r in rows
    ]
    widths = [max(len(row[i]) for row in cells) for i in range(len(HEADERS))]
    lines = []
    for row in cells:
        text = [row[0].ljust(widths[0]), row[1].ljust(widths[1])]
        text += [cell.rjust(width) for cell, width in zip(row[2:], widths[2:], strict=True)]
        lines.append("  ".join(text).rstrip())
    return "\n".join(lines) + "\n"


def _cell_state(row: Coverage | None) -> str:
    if row is None:
        return "absent"
    if row.errors:
        return "errors"
    if row.untranslated or row.missing:
        return "partial"
    return "complete"


MATRIX_CSS = """
.pv-matrix td.absent { background: #eeeeee; color: #777; }
.pv-matrix td.errors { background: #f8d0cc; }
.pv-matrix td.partial { background: #fbe7b5; }
.pv-matrix td.complete { background: #cdebd3; }
"""


def matrix_html(rows: Sequence[Coverage]) -> str:
    """Topics down, languages across; each cell coloured by how complete it is."""
    topics = sorted({r.topic for r in rows})
    languages = sorted({r.language for r in rows}, key=lambda code: (code != "en", code))
    by_key = {(r.topic, r.language): r for r in rows}
    head = "".join(f"<th>{html.escape(code)}</th>" for code in languages)
    body = []
    for topic in topics:
        cells = []
        for code in languages:
            row = by_key.get((topic, code))
            state = _cell_state(row)
            if row is None:
                text = "—"
            else:
                text = f"{row.translated}/{row.items + row.missing}"
                if row.errors:
                    text += f" · {row.errors} errors"
            title = (
                f"{row.items} items, {row.translated} translated, {row.untranslated} untranslated, "
                f"{row.missing} missing, {row.errors} errors"
                if row
                else "no bank"
            )
            cells.append(
                f'<td class="{state}" data-state="{state}" title="{html.escape(title)}">{text}</td>'
            )
        body.append(f"<tr><th>{html.escape(topic)}</th>{''.join(cells)}</tr>")
    return (
        f"<style>{MATRIX_CSS}</style>"
        f'<table class="pv-matrix"><thead><tr><th></th>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>"
    )


def status(banks_dir: Path) -> str:
    """The coverage table of every bank of the folder, for `ankigen status`."""
    reference = require_project(banks_dir).reference
    return table(coverage(check_paths(find_bank_paths(banks_dir), reference=reference)))
