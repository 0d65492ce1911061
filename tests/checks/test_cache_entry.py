"""The bank cache's entries (`checks.cache_entry`): what a check found comes back whole."""

from __future__ import annotations

from pathlib import Path

from ankigen.bank.files import read_sources
from ankigen.checks import cache_entry
from ankigen.checks.rules import load_and_check
from tests.helpers import item, write_bank


def test_a_problems_column_survives_the_bank_cache(tmp_path: Path) -> None:
    """`lint --format json` and a build that read a bank from the cache must point at the
    same place as one that checked it afresh."""
    write_bank(tmp_path, "demo", items=[item("one", answer=9), item("two", question="%s?")])
    (source,), _ = read_sources(tmp_path)
    found = load_and_check(source)
    columns = [d.column for d in found[1]]
    assert any(columns) and not all(columns)  # the answer's value has one, an item's check not
    entry = cache_entry.dump(source, found, ("en",))
    _, diagnostics = cache_entry.load(source, entry, ("en",))
    assert diagnostics == found[1]
    assert [d.column for d in diagnostics] == columns
