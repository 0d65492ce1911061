"""The `gui` marker's guard: a test that starts Chromium, WebKit or the Anki desktop
must carry the marker, so that `pytest -m "not gui"` (the fast loop) never starts one.

tests/conftest.py marks tests automatically (by their folder, tests/card/, or by a
fixture that starts an engine) and tells this module which test is running; each
engine's launcher calls `check` before it starts, and fails a test that is not marked.
"""

from __future__ import annotations

import pytest

# the test being set up, run or torn down (none outside a pytest run)
running: list[pytest.Item] = []


def check(engine: str) -> None:
    """Fail the running test if it starts `engine` without the gui marker."""
    if running and running[-1].get_closest_marker("gui") is None:
        pytest.fail(
            f"{running[-1].nodeid} starts {engine} but is not marked gui: use the fixture "
            "that starts it (`chromium`), put it in tests/card/, or mark it "
            "@pytest.mark.gui, so that `pytest -m 'not gui'` leaves it out",
            pytrace=False,
        )
