from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from hypothesis import settings

from tests.helpers import AnkiCollection

# the key that authenticates cache entries (core.secret) is this run's own, not the
# developer's; builds run as subprocesses inherit it
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="ankigen-test-cache-")

# CI must not fail on a new random example nobody can reproduce; locally the
# fuzzing explores new inputs on every run
settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


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
    import ankigen.bank.files

    monkeypatch.setattr(ankigen.bank.files, "SETTLE_NS", 0)


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


def invoke(runner: CliRunner, *args: str) -> Result:
    from ankigen.cli.app import cli

    return runner.invoke(cli, list(args), catch_exceptions=False)
