"""`ankigen push` into the real AnkiConnect add-on, loaded into the real Anki desktop under Xvfb.

The add-on's source is in ../shared/vendor/anki-connect/ (with its licence);
this test copies its `plugin/` into the throwaway Anki base folder's
`addons21/`, as AnkiWeb installs it, on a free port. The desktop harness is
the one of tests/desktop/ (the real-clients work); where it or the add-on is
absent, the test is skipped with a message naming what is missing.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.helpers import invoke, item, shared_path, write_bank
from tests.support.net import free_port

# the one gui test outside tests/card/ that no fixture marks: it starts the desktop itself
pytestmark = pytest.mark.gui


def ask(url: str, action: str, **params: Any) -> Any:
    from ankigen.ankiconnect import AnkiConnect

    reply = AnkiConnect(url).call(action, 30, **params)
    assert reply["error"] is None, reply
    return reply["result"]


def test_push_into_the_real_ankiconnect_in_anki_desktop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    harness = pytest.importorskip(
        "tests.desktop.harness",
        reason="the real Anki desktop harness (tests/desktop/harness.py) is not in this tree",
    )
    ankiconnect = shared_path("vendor/anki-connect/plugin")
    harness.require()

    port = free_port()
    addon = tmp_path / "addons" / "2055492159"  # AnkiConnect's folder name when installed
    shutil.copytree(ankiconnect, addon)
    config = json.loads((addon / "config.json").read_text(encoding="utf-8"))
    (addon / "config.json").write_text(json.dumps(config | {"webBindPort": port}), encoding="utf-8")
    url = f"http://127.0.0.1:{port}"

    project = tmp_path / "project"
    write_bank(project / "banks", "demo", "en")
    write_bank(project / "banks", "other", "ur")
    monkeypatch.chdir(project)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    runner = CliRunner()
    with harness.AnkiDesktop(tmp_path / "base", addons=[addon]):
        deadline = time.monotonic() + 60
        while True:
            result = invoke(runner, "push", "--url", url)
            if result.exit_code == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.5)  # the add-on starts listening just after the profile opens
        assert result.exit_code == 0, result.output
        assert result.stdout.splitlines() == [
            'pushed out/demo.en.apkg: Anki replied {"result": true, "error": null}',
            'pushed out/other.ur.apkg: Anki replied {"result": true, "error": null}',
            "2 packages pushed, 0 unchanged",
        ]
        assert f"AnkiConnect 6 at {url}" in result.stderr
        assert len(ask(url, "findNotes", query="ItemId:*")) == 4
        assert sorted(ask(url, "deckNames")) == ["Default", "demo quiz (en)", "other quiz (ur)"]

        result = invoke(runner, "push", "--url", url)
        assert result.stdout.splitlines()[-1] == "0 packages pushed, 2 unchanged"

        # an edit reaches the learner's collection as an update, not a duplicate
        edited = item("one", question="Question one, edited?")
        write_bank(project / "banks", "other", "ur", items=[edited, item("two", 2)])
        result = invoke(runner, "push", "--url", url)
        assert result.stdout.splitlines()[-1] == "1 package pushed, 1 unchanged", result.output
        notes = ask(url, "notesInfo", notes=ask(url, "findNotes", query="ItemId:one Language:ur"))
        assert [n["fields"]["Question"]["value"] for n in notes] == ["Question one, edited?"]
        assert len(ask(url, "findNotes", query="ItemId:*")) == 4

        # a fix made in Anki comes back: Anki exports the decks itself, on request
        note = ask(url, "findNotes", query="ItemId:two Language:ur")[0]
        ask(
            url,
            "updateNoteFields",
            note={"id": note, "fields": {"Explanation": "Fixed <i>here</i>."}},
        )
        result = invoke(runner, "pull", "anki", "--url", url)
        assert result.exit_code == 0, result.output
        assert result.stdout.splitlines() == ["pulled 1 text into banks/other/ur.yaml (two)"]
        assert f"AnkiConnect 6 at {url}" in result.stderr
        bank = (project / "banks" / "other" / "ur.yaml").read_text(encoding="utf-8")
        assert 'explanation: "Fixed <i>here</i>."' in bank
        result = invoke(runner, "pull", "anki", "--url", url)
        assert result.stdout.splitlines() == ["nothing to pull: 4 notes in step"], result.output
