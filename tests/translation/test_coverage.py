"""`ankigen status`: translation coverage, topic by language."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from ankigen.checks.run import check_paths
from ankigen.translation.coverage import coverage, matrix_html
from tests.helpers import invoke, item, write_bank


def make_banks(banks: Path) -> None:
    write_bank(banks, "t", "en", items=[item("a"), item("b"), item("c")])
    write_bank(
        banks,
        "t",
        "hi",
        items=[
            item("a"),
            item("b", question="सवाल?", explanation="क्योंकि।", choices=2)
            | {"choices": ["एक", "दो"]},
        ],
    )
    (banks / "t" / "de.yaml").write_text("topic: t\nlanguage: de\ntitle: [\n", encoding="utf-8")


def test_status_table(project: Path, runner: CliRunner) -> None:
    make_banks(project / "banks")
    result = invoke(runner, "status")
    assert result.exit_code == 0
    assert result.output == (
        "topic  language  items  translated  untranslated  missing  errors\n"
        "t      de            0           0             0        3       1\n"
        "t      en            3           3             0        0       0\n"
        "t      hi            2           1             1        1       0\n"
    )


def test_preview_index_shows_the_same_matrix(project: Path) -> None:
    make_banks(project / "banks")
    rows = coverage(check_paths(sorted((project / "banks").rglob("*.yaml"))))
    markup = matrix_html(rows)
    assert '<td class="complete" data-state="complete"' in markup
    assert 'data-state="partial"' in markup and ">1/3</td>" in markup
    assert 'data-state="errors"' in markup and "0/3 · 1 errors" in markup
