"""The build's bytes are what the committed manifest says: the shipped banks and the
benchmark's, with a fixed SOURCE_DATE_EPOCH. A restructuring of the code that changes a
package, the lock or a file in OUT fails here (`tests/reproducible.py` makes it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests import reproducible


@pytest.fixture(scope="module")
def expected() -> dict[str, object]:
    made: dict[str, object] = json.loads(reproducible.MANIFEST.read_text(encoding="utf-8"))
    if made["environment"] != reproducible.environment():
        pytest.skip(
            "the manifest was made with other libraries "
            f"({made['environment']} here: {reproducible.environment()}); "
            "package bytes depend on them: run python -m tests.reproducible"
        )
    return made


def test_the_shipped_banks_build_to_the_manifests_bytes(
    expected: dict[str, object], tmp_path: Path
) -> None:
    assert reproducible.shipped(tmp_path) == expected["shipped"]


def test_the_benchmarks_banks_build_to_the_manifests_bytes(
    expected: dict[str, object], tmp_path: Path
) -> None:
    assert reproducible.benchmark(tmp_path) == expected["benchmark"]
