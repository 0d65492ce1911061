"""`lint --format`: the same problems for machines: JSON, GitHub workflow commands and
SARIF 2.1.0 (validated against the OASIS schema, tests/data/sarif/)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
from click.testing import CliRunner

from ankigen.cli.lintreport import _escape_data, _escape_property
from tests.helpers import DATA, invoke, item, write_bank


def bad_project(banks: Path) -> None:
    """An error, a warning with a `%` in its message, and a folder whose name holds the
    characters a workflow command's property must escape."""
    write_bank(banks, "demo", items=[item("one", answer=9), item("two", question="%s?")])
    odd = banks / "odd,name:x"
    odd.mkdir()
    write_bank(odd, "other")
    (odd / "other" / "en.yaml").write_text("topic: [other\n", encoding="utf-8")


def test_text_is_the_default_and_unchanged(project: Path, runner: CliRunner) -> None:
    bad_project(project / "banks")
    plain = invoke(runner, "lint")
    assert plain.exit_code == 1
    assert invoke(runner, "lint", "--format", "text").output == plain.output
    assert "banks/demo/en.yaml:12: error: item 'one': answer 9 is out of range" in plain.output


def test_json(project: Path, runner: CliRunner) -> None:
    bad_project(project / "banks")
    result = invoke(runner, "lint", "--format", "json")
    assert result.exit_code == 1
    report = json.loads(result.output)
    assert (report["errors"], report["warnings"], report["banks"]) == (2, 1, 2)
    first = report["diagnostics"][0]
    line = (project / "banks" / "demo" / "en.yaml").read_text("utf-8").splitlines()[11]
    assert first == {
        "path": "banks/demo/en.yaml",
        "line": 12,
        "column": line.index("9") + 1,  # the answer's value, where an editor puts the cursor
        "severity": "error",
        "rule": "ankigen/answer-out-of-range",
        "message": first["message"],
    }
    rules = [d["rule"] for d in report["diagnostics"]]
    assert rules == ["ankigen/answer-out-of-range", "ankigen/placeholder", "ankigen/yaml-syntax"]
    # a check of a whole item has no column; a syntax error has the parser's
    assert [d["column"] for d in report["diagnostics"][1:]] == [None, 1]


def test_github_workflow_commands(project: Path, runner: CliRunner) -> None:
    bad_project(project / "banks")
    result = invoke(runner, "lint", "--format", "github")
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert len(lines) == 3
    assert lines[0].startswith(
        "::error file=banks/demo/en.yaml,line=12,col=11,title=ankigen/answer-out-of-range::item 'one'"
    )
    assert lines[1].startswith("::warning file=banks/demo/en.yaml,line=")
    assert ",col=" not in lines[1]
    assert "'%25s'" in lines[1] and "'%s'" not in lines[1]
    assert lines[2].startswith(
        "::error file=banks/odd%2Cname%3Ax/other/en.yaml,line=2,col=1,title=ankigen/yaml-syntax::"
    )


def test_github_escaping_is_the_toolkits() -> None:
    assert _escape_data("50% a:b,c\r\nd") == "50%25 a:b,c%0D%0Ad"
    assert _escape_property("50% a:b,c\r\nd") == "50%25 a%3Ab%2Cc%0D%0Ad"


def test_sarif_is_valid_sarif_2_1_0(project: Path, runner: CliRunner) -> None:
    bad_project(project / "banks")
    (project / "banks" / "demo" / "de.yaml").mkdir()  # a problem with a file, no line
    result = invoke(runner, "lint", "--format", "sarif")
    assert result.exit_code == 1
    log = json.loads(result.output)
    schema = json.loads((DATA / "sarif" / "sarif-schema-2.1.0.json").read_text("utf-8"))
    jsonschema.validate(log, schema, cls=jsonschema.Draft4Validator)
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    results = run["results"]
    assert [r["ruleId"] for r in results] == [
        "ankigen/file-unreadable",
        "ankigen/answer-out-of-range",
        "ankigen/placeholder",
        "ankigen/yaml-syntax",
    ]
    assert all(rules[r["ruleIndex"]]["id"] == r["ruleId"] for r in results)
    assert "region" not in results[0]["locations"][0]["physicalLocation"]
    located = results[1]["locations"][0]["physicalLocation"]
    assert located == {
        "artifactLocation": {"uri": "banks/demo/en.yaml"},
        "region": {"startLine": 12, "startColumn": 11},
    }
    assert results[3]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == (
        "banks/odd%2Cname%3Ax/other/en.yaml"
    )
    assert [r["level"] for r in results] == ["error", "error", "warning", "error"]


def test_the_vendored_schema_refuses_what_is_not_sarif() -> None:
    """The validation above could fail: the schema is the real one, not an empty one."""
    schema = json.loads((DATA / "sarif" / "sarif-schema-2.1.0.json").read_text("utf-8"))
    bad = {"version": "2.1.0", "runs": [{"tool": {"driver": {}}, "results": []}]}
    validator = jsonschema.Draft4Validator(schema)
    assert not validator.is_valid(bad)
