from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import settings

from tests.helpers import TESTS, AnkiCollection
from tests.support import gui
from tests.support.browser import headless_chromium

# the key that authenticates cache entries (core.secret) is this run's own, not the
# developer's; builds run as subprocesses inherit it
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="ankigen-test-cache-")

# CI must not fail on a new random example nobody can reproduce; locally the
# fuzzing explores new inputs on every run
settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

# Tests that start a browser, WebKit or the Anki desktop are marked gui, so that
# `pytest -m "not gui"` is the fast loop. Marked here rather than by hand, so a new test
# cannot forget: every test in a folder of GUI tests, and every test that uses a fixture
# starting an engine. A test that starts one some other way fails (tests/support/gui.py).
GUI_FOLDERS = (TESTS / "card",)
GUI_FIXTURES = frozenset({"chromium"})


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        in_folder = any(folder in item.path.parents for folder in GUI_FOLDERS)
        if in_folder or GUI_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.gui)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[object]:
    gui.running.append(item)
    try:
        return (yield)
    finally:
        gui.running.pop()


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """Headless Chromium (Debian's, through Playwright), one per module; its tests are gui."""
    with headless_chromium() as browser:
        yield browser


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def collection(tmp_path: Path) -> Iterator[AnkiCollection]:
    col = AnkiCollection(tmp_path / "anki")
    yield col
    col.close()


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty project folder with banks/ and out/, as the working directory."""
    root = tmp_path / "project"
    (root / "banks").mkdir(parents=True)
    monkeypatch.chdir(root)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    return root


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file status vouches for its file at once: the banks of a test are seconds old."""
    import ankigen.bank.folder

    monkeypatch.setattr(ankigen.bank.folder, "SETTLE_NS", 0)


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The bank files each build reads, by name."""
    seen: list[str] = []
    import ankigen.bank.files

    real = ankigen.bank.files.read_bank_file

    def counting(path: Path) -> bytes:
        seen.append(f"{path.parent.name}/{path.name}")
        return real(path)

    monkeypatch.setattr(ankigen.bank.files, "read_bank_file", counting)
    return seen
