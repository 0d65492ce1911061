"""What the pull tests share: the demo bank built and imported into a real collection."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.helpers import AnkiCollection, invoke
from tests.support.pull import BANK


@pytest.fixture
def imported(project: Path, runner: CliRunner, collection: AnkiCollection) -> AnkiCollection:
    """The demo bank built, and its package imported into the collection."""
    (project / "banks" / "demo").mkdir()
    (project / "banks" / "demo" / "en.yaml").write_text(BANK, encoding="utf-8")
    assert invoke(runner, "build").exit_code == 0
    collection.import_package(project / "out" / "demo.en.apkg")
    return collection
