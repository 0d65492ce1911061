"""`ankigen release-notes --since REF`, across real git revisions."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.helpers import invoke, item, write_bank


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


def build(runner: CliRunner, monkeypatch: pytest.MonkeyPatch, epoch: int) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(epoch))
    result = invoke(runner, "build")
    assert result.exit_code == 0, result.output


def test_release_notes_between_git_revisions(
    project: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    banks = project / "banks"
    (project / ".gitignore").write_text("out/\n", encoding="utf-8")
    write_bank(banks, language="en", items=[item("a"), item("b"), item("c")])
    write_bank(
        banks,
        language="de",
        title="Demo-Quiz",
        items=[item("a", question="Welche?"), item("b", question="Was?"), item("c")],
    )
    write_bank(banks, "calm", "en")
    build(runner, monkeypatch, 1_700_000_000)
    # pretend the release had other card templates
    lock = json.loads((banks / "ankigen.lock").read_text(encoding="utf-8"))
    lock["notetype"]["hash"] = "0" * 16
    (banks / "ankigen.lock").write_text(json.dumps(lock), encoding="utf-8")
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "release 1")
    git(project, "tag", "v1")
    first = {
        d["language"]: d["version"]
        for d in json.loads(invoke(runner, "build", "--json").stdout)["decks"]
        if d["topic"] == "demo"
    }

    write_bank(
        banks,
        language="en",
        items=[item("a", question="Edited | a?"), item("b", retired=True), item("d")],
    )
    write_bank(
        banks,
        language="de",
        title="Neues Quiz",
        items=[item("a", question="Welche?"), item("b", question="Was?"), item("c")],
    )
    build(runner, monkeypatch, 1_700_000_000 + 86400)
    git(project, "commit", "-qam", "work in progress")  # REF may be any revision
    result = invoke(runner, "release-notes", "--since", "v1")
    assert result.exit_code == 0, result.output
    notes = result.stdout
    en_version = json.loads(invoke(runner, "build", "--json").stdout)["decks"][2]["version"]
    assert en_version.startswith("2023.11.15+")
    expected_en = f"""## demo quiz (en)

Version: `{en_version}` (since `{first["en"]}`)

### New questions

- Question d?

### Changed questions

- Edited \\| a?

### Retired questions

- Question b?

### Removed questions

- Question c?

### Card templates changed

### How to import

In Anki (23.10 or later): File → Import, choose the `.apkg` file, then set:

- **Import any learning progress**: off (the package carries none; your reviews are kept)
- **Import any deck presets**: off
- **Merge notetypes**: off
- **Update notes**: If newer (changed questions replace your copy unless you edited it after your last import)
- **Update notetypes**: If newer (it installs the new card templates; choose **Always** if you edited the note type yourself and want the new templates over your edits)
- Retired questions are tagged `ankigen::retired`: Browse, search `tag:ankigen::retired`, and delete them if you no longer want them.
- Anki never deletes notes on import: removed questions stay in your collection until you delete them.
"""
    assert expected_en in notes
    # the German deck: headings in German, the rename and how to move the cards
    assert "## Neues Quiz (de)\n\nVersion: `" in notes
    assert (
        "Keine Änderungen an den Fragen.\n\n### Stapel umbenannt\n\n`Demo-Quiz (de)` → `Neues Quiz (de)`"
        in notes
    )
    assert "### So importierst du" in notes
    assert (
        'search `"deck:Demo-Quiz (de)"`, select all, Cards → Change Deck → `Neues Quiz (de)`'
        in notes
    )
    assert notes.startswith(
        "<!-- release notes of banks/, written by ankigen release-notes -->\n\n"
        "# Release notes since v1\n"
    )
    # the new templates concern every deck, even one whose questions did not change
    assert "## calm quiz (en)\n\nVersion: `2023.11.14+" in notes
    assert "No changes to the questions.\n\n### Card templates changed" in notes
    # since the last commit nothing changed: every deck listed with its version, none described
    none = invoke(runner, "release-notes", "--since", "HEAD").stdout
    assert none == (
        "<!-- release notes of banks/, written by ankigen release-notes -->\n\n"
        "# Release notes since HEAD\n\n## Unchanged decks\n\n"
        f"- calm quiz (en): `{none.split('calm quiz (en): `')[1].split('`')[0]}`\n"
        f"- Neues Quiz (de): `{none.split('Neues Quiz (de): `')[1].split('`')[0]}`\n"
        f"- demo quiz (en): `{en_version}`\n"
    )

    written = invoke(runner, "release-notes", "--since", "HEAD~1", "-o", "notes.md")
    assert written.exit_code == 0
    # HEAD~1 is v1: the same notes, under the revision as given
    assert (project / "notes.md").read_text(encoding="utf-8") == notes.replace(
        "since v1", "since HEAD~1"
    )


def test_a_bad_revision_is_a_clear_error(project: Path, runner: CliRunner) -> None:
    write_bank(project / "banks")
    outside = invoke(runner, "release-notes", "--since", "v1")
    assert outside.exit_code == 1 and outside.output.startswith("error: git rev-parse")
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "one")
    result = invoke(runner, "release-notes", "--since", "no-such-tag")
    assert result.exit_code == 1
    assert result.output.startswith("error: --since 'no-such-tag': no such revision")


def test_release_notes_agree_with_the_build_on_what_changed(
    project: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A why, recall or an image alone is a changed question, as the build says; banks
    at the revision are found as the build finds them."""
    banks = project / "banks"
    (project / ".gitignore").write_text("out/\n", encoding="utf-8")
    items = [item("a"), item("b"), item("c")]
    write_bank(banks, language="en", items=items)
    write_bank(banks, "upper", "en")
    (banks / "upper" / "en.yaml").rename(banks / "upper" / "EN.YAML")
    (banks / "demo" / ".#en.yaml").write_text("not a bank: an editor's lock", encoding="utf-8")
    build(runner, monkeypatch, 1_700_000_000)
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "release 1")
    write_bank(banks, language="en", items=[item("a"), item("b", recall=True), item("c")])
    report = json.loads(invoke(runner, "build", "--json").stdout)
    demo = next(d for d in report["decks"] if d["topic"] == "demo")
    assert (demo["changed"], demo["new"]) == (1, 0)
    notes = invoke(runner, "release-notes", "--since", "HEAD")
    assert notes.exit_code == 0, notes.output
    assert "### Changed questions\n\n- Question b?\n" in notes.stdout
    assert "### New questions" not in notes.stdout  # the upper-case bank was there before
    assert "- upper quiz (en): `" in notes.stdout


def test_a_bank_name_that_is_not_utf8_at_the_revision_is_an_error(
    project: Path, runner: CliRunner
) -> None:
    banks = project / "banks"
    write_bank(banks)
    odd = Path(bytes(banks / "demo").decode() + "/\udcff.yaml")
    odd.write_bytes((banks / "demo" / "en.yaml").read_bytes())
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "one")
    odd.unlink()
    result = invoke(runner, "release-notes", "--since", "HEAD")
    assert result.exit_code == 1
    assert "banks/demo/\ufffd.yaml: error: the file name is not valid UTF-8; rename it" in (
        result.output
    )
    assert "internal error" not in result.output


@pytest.mark.parametrize(
    ("script", "said"),
    [
        ("exec sleep 30", "error: git rev-parse --show-toplevel: no answer within 1 s"),
        (
            "echo \"fatal: detected dubious ownership in repository at '/r'\" >&2; "
            "printf 'To add an exception, call:\\n\\n\\tgit config --global --add "
            "safe.directory /r\\n' >&2; exit 128",
            "error: git rev-parse --show-toplevel: fatal: detected dubious ownership in "
            "repository at '/r' To add an exception, call: git config --global --add "
            "safe.directory /r",
        ),
    ],
)
def test_a_git_that_hangs_or_refuses_is_said_plainly(
    project: Path,
    runner: CliRunner,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    script: str,
    said: str,
) -> None:
    """A git that does not answer (a hung network share) was reported as a bug of
    ankigen; one that refuses kept only its last line, the command that helps without
    the problem it helps with."""
    import ankigen.releasenotes

    monkeypatch.setattr(ankigen.releasenotes, "GIT_WAIT", 1)
    fake = tmp_path / "bin" / "git"
    fake.parent.mkdir()
    fake.write_text(f"#!/bin/sh\n{script}\n", encoding="utf-8")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:{os.environ['PATH']}")
    write_bank(project / "banks")
    result = invoke(runner, "release-notes", "--since", "HEAD")
    assert (result.exit_code, result.output.strip()) == (1, said)
