"""Bank problems: every one reported as PATH:LINE, all at once, exit 1, nothing written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.helpers import invoke, item, write_bank

BAD_BANK = """\
topic: Bad Topic
language: english
title: Broken
items:
  - id: a
    question: q
    choices: [same, same]
    answer: 3
    explaination: typo
  - id: b
    question: ""
    choices: [only]
    answer: ~
    explanation: fine
  - id: a
    question: again
    choices: [x, y]
    answer: [1, 1]
    explanation: dup
"""


def test_every_problem_is_reported_with_its_line(project: Path, runner: CliRunner) -> None:
    path = project / "banks" / "bad.yaml"
    path.write_text(BAD_BANK, encoding="utf-8")
    result = invoke(runner, "build")
    assert result.exit_code == 1
    assert result.output == (
        "banks/bad.yaml:1: error: topic 'Bad Topic' is not a slug (a-z, 0-9 and '-')\n"
        "banks/bad.yaml:2: error: language 'english' is not a BCP 47 tag such as en or pt-BR\n"
        "banks/bad.yaml:5: error: item 'a': missing key 'explanation'\n"
        "banks/bad.yaml:7: error: item 'a': choice 2 repeats choice 1 at line 7\n"
        "banks/bad.yaml:8: error: item 'a': answer 3 is out of range; choices are numbered 1 to 2\n"
        "banks/bad.yaml:9: error: item 'a': unknown key 'explaination'; did you mean 'explanation'?\n"
        "banks/bad.yaml:11: error: item 'b': question is empty\n"
        "banks/bad.yaml:12: error: item 'b': has 1 choices; an item needs 2 to 8\n"
        "banks/bad.yaml:13: error: item 'b': answer is missing: set the number of the correct choice\n"
        "banks/bad.yaml:18: error: item 'a': answer 1 is listed twice\n"
        "10 errors; nothing was written\n"
    )
    assert not (project / "out").exists()


def test_choices_laid_out_on_other_lines_are_other_choices(
    project: Path, runner: CliRunner
) -> None:
    """ "What does it print?": `20 40 60` and the same numbers a line each are two answers,
    which a learner tells apart; spaces within a line, and empty lines, still do not
    count. Before, the first pair was refused as a repeated choice (a real course's
    questions could not be exported)."""
    items = [
        item("layout", choices=2) | {"choices": ["20 40 60", "20\n40\n60"]},
        item("spaces", choices=2) | {"choices": ["20  40\n\n60", "20 40\n60"]},
    ]
    write_bank(project / "banks", items=items)
    result = invoke(runner, "lint")
    assert "item 'layout'" not in result.output
    assert "item 'spaces': choice 2 looks the same as choice 1" in result.output


def test_yaml_syntax_error_has_path_and_line(project: Path, runner: CliRunner) -> None:
    (project / "banks" / "x.yaml").write_text(
        "topic: x\nlanguage: en\ntitle: [unclosed\nitems: []\n", encoding="utf-8"
    )
    result = invoke(runner, "build")
    assert result.exit_code == 1
    assert result.output.startswith("banks/x.yaml:4: error: YAML syntax: did not find expected")
    assert "started at line 3" in result.output


def test_an_error_in_one_bank_leaves_existing_packages_untouched(
    project: Path, runner: CliRunner
) -> None:
    write_bank(project / "banks", "good")
    assert invoke(runner, "build").exit_code == 0
    package = project / "out" / "good.en.apkg"
    before = package.read_bytes()
    lock = (project / "banks" / "ankigen.lock").read_bytes()
    write_bank(project / "banks", "good", items=[{"id": "changed", "question": "?"}])
    write_bank(project / "banks", "other")
    result = invoke(runner, "build")
    assert result.exit_code == 1
    assert "banks/good/en.yaml:" in result.output
    assert package.read_bytes() == before
    assert not (project / "out" / "other.en.apkg").exists()
    assert (project / "banks" / "ankigen.lock").read_bytes() == lock


def test_same_topic_and_language_twice_is_an_error(project: Path, runner: CliRunner) -> None:
    write_bank(project / "banks", "demo")
    (project / "banks" / "copy.yaml").write_text(
        (project / "banks" / "demo" / "en.yaml").read_text(encoding="utf-8"), encoding="utf-8"
    )
    result = invoke(runner, "build")
    assert result.exit_code == 1
    assert "topic 'demo' in language 'en' is already defined in banks/copy.yaml" in result.output


def test_backup_topic_is_refused(project: Path, runner: CliRunner) -> None:
    write_bank(project / "banks", "backup-2024")
    result = invoke(runner, "build")
    assert result.exit_code == 1
    assert "collection backups" in result.output
    assert not (project / "out").exists()


def test_text_fields_keep_the_authors_spelling(project: Path, runner: CliRunner) -> None:
    (project / "banks" / "n.yaml").write_text(
        "topic: n\nlanguage: en\ntitle: 2024\nitems:\n"
        "  - id: a\n    question: 0.10\n    choices: [yes, no, 1e3, 010]\n"
        "    answer: 1\n    explanation: true\n",
        encoding="utf-8",
    )
    from ankigen.bank.reader import load_bank

    bank, problems = load_bank(project / "banks" / "n.yaml")
    assert problems == []
    assert bank is not None
    assert bank.title == "2024"
    assert bank.items[0].question == "0.10"
    assert bank.items[0].choices == ("yes", "no", "1e3", "010")
    assert bank.items[0].explanation == "true"


def test_missing_folder_and_empty_folder(project: Path, runner: CliRunner) -> None:
    result = invoke(runner, "build", "nowhere")
    assert (result.exit_code, result.output) == (1, "error: nowhere: no such folder of banks\n")
    result = invoke(runner, "build")
    assert (result.exit_code, result.output) == (1, "error: banks: no bank files (*.yaml) found\n")


def test_usage_error_exits_2(project: Path, runner: CliRunner) -> None:
    assert invoke(runner, "build", "--no-such-option").exit_code == 2


def test_no_traceback_from_the_real_command(project: Path) -> None:
    (project / "banks" / "x.yaml").write_bytes(b"topic: x\nlanguage: en\ntitle: \xff\xfe\n")
    done = subprocess.run(
        [sys.executable, "-m", "ankigen", "build"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 1
    assert (
        done.stderr
        == "banks/x.yaml:3: error: not UTF-8 text (byte 29); it looks like WINDOWS-1252: convert it with `iconv -f WINDOWS-1252 -t UTF-8 FILE > NEW`\n1 error; nothing was written\n"
    )
    assert "Traceback" not in done.stderr + done.stdout


def test_control_characters_are_reported_at_their_line(project: Path, runner: CliRunner) -> None:
    # found by the fuzzer: libyaml refuses them before parsing anything
    (project / "banks" / "x.yaml").write_bytes(b"topic: x\nlanguage: en\ntitle: a\x01b\n")
    result = invoke(runner, "build")
    assert (result.exit_code, result.output) == (
        1,
        "banks/x.yaml:3: error: YAML: the control character U+0001 is not allowed\n"
        "1 error; nothing was written\n",
    )


def test_a_bank_of_mostly_blank_lines_costs_no_more_than_twice_a_whole_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Items are composed a slice at a time, each slice padded with the lines above it;
    blank lines by the million would be read once per slice, so past a budget of
    about the file's length the document is composed whole, with the same result."""
    from ankigen.bank import yamltree
    from ankigen.bank.reader import parse_bank

    head = 'topic: t\nlanguage: en\ntitle: "T"\nitems:\n'
    item = "  - id: i{n}\n    question: Q {n}?\n    choices: [a, b]\n    answer: 1\n"
    text = head + "".join(
        item.format(n=n) + "    explanation: e\n" + "\n" * 200 for n in range(300)
    )
    composed: list[int] = []
    real = yamltree.compose_text

    def counting(path: str, source: str) -> object:
        composed.append(len(source))
        return real(path, source)

    monkeypatch.setattr(yamltree, "BATCH_BYTES", 256)  # a slice per item
    monkeypatch.setattr(yamltree, "compose_text", counting)
    sliced = parse_bank("x.yaml", text.encode())
    assert sum(composed) <= 2 * len(text) + (1 << 21)
    monkeypatch.setattr(yamltree, "items_layout", lambda text: None)
    assert parse_bank("x.yaml", text.encode()) == sliced
    assert sliced[0] is not None and len(sliced[0].items) == 300
