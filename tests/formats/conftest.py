"""Fixtures of the importers' tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.adopt import addon_package


@pytest.fixture
def shared(tmp_path: Path) -> Path:
    """The add-on's deck as its author shares it."""
    return addon_package(tmp_path)
