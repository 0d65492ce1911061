"""`ankigen schema`, and the schema line that `translate` and `import` put at the top of
the banks they start (never into a bank that exists)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import yaml
from click.testing import CliRunner

from ankigen.bank.schema import schema_path
from tests.helpers import DATA, invoke, item, write_bank

MODELINE = "# yaml-language-server: $schema="


def named_schema(bank: Path) -> Path:
    """The schema a bank's first line names, as yaml-language-server finds it: a path
    relative to the bank's folder."""
    first = bank.read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith(MODELINE), first
    return (bank.parent / first.removeprefix(MODELINE)).resolve()


def test_schema_prints_the_shipped_schemas(runner: CliRunner) -> None:
    for kind in ("bank", "project"):
        result = invoke(runner, "schema", kind)
        assert result.exit_code == 0
        assert result.stdout == schema_path(kind).read_text(encoding="utf-8")
        jsonschema.Draft202012Validator.check_schema(json.loads(result.stdout))


def test_schema_of_something_else_is_a_usage_error(runner: CliRunner) -> None:
    result = invoke(runner, "schema", "deck")
    assert result.exit_code == 2 and "'deck' is not one of 'bank', 'project'" in result.output


def test_a_new_translation_names_the_schema_and_lints(project: Path, runner: CliRunner) -> None:
    write_bank(project / "banks", items=[item("one"), item("two", 2)])
    assert invoke(runner, "translate", "demo", "--to", "yo").exit_code == 0
    bank = project / "banks" / "demo" / "yo.yaml"
    assert named_schema(bank) == schema_path("bank").resolve()
    data = yaml.safe_load(bank.read_text(encoding="utf-8"))
    assert jsonschema.Draft202012Validator(json.loads(schema_path("bank").read_text())).is_valid(
        data
    )
    lint = invoke(runner, "lint")
    assert lint.exit_code == 0, lint.output


def test_an_update_leaves_the_top_of_a_bank_as_it_was(project: Path, runner: CliRunner) -> None:
    banks = project / "banks"
    write_bank(banks, items=[item("one"), item("two", 2)])
    existing = write_bank(banks, language="yo", items=[item("one")])
    before = existing.read_text(encoding="utf-8")
    assert invoke(runner, "translate", "demo", "--to", "yo", "--update").exit_code == 0
    after = existing.read_text(encoding="utf-8")
    assert MODELINE not in after and after.startswith(before.split("items:")[0])


def test_an_imported_bank_names_the_schema(project: Path, runner: CliRunner) -> None:
    out = project / "banks" / "quiz" / "en.yaml"
    out.parent.mkdir(parents=True)
    quiz = DATA / "formats" / "quiz.csv"
    result = invoke(runner, "import", str(quiz), "--topic", "quiz", "--lang", "en", "-o", str(out))
    assert result.exit_code == 0, result.output
    assert named_schema(out) == schema_path("bank").resolve()
    assert yaml.safe_load(out.read_text(encoding="utf-8"))["topic"] == "quiz"


def test_an_import_to_standard_output_names_none(runner: CliRunner) -> None:
    quiz = DATA / "formats" / "quiz.csv"
    result = invoke(runner, "import", str(quiz), "--topic", "quiz", "--lang", "en")
    assert result.exit_code == 0, result.output
    assert MODELINE not in result.stdout
