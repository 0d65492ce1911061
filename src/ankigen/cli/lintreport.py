"""`lint --format json|github|sarif`: the diagnostics for machines, each with its rule id
(`checks.ruleset`). The text format stays `output.lint_lines`'.

A column where the bank reader knows one (the start of the YAML node a problem is
about, or of a syntax error); a check of a whole item or line has none, so JSON says
`"column": null` and GitHub and SARIF leave it out. A problem with a file itself (line 0)
has no line either."""

from __future__ import annotations

import json
from pathlib import PurePath
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from ankigen.checks.ruleset import OTHER, RULES, rule_of
from ankigen.cli.output import Line
from ankigen.core.errors import printable
from ankigen.core.version import __version__

if TYPE_CHECKING:
    from ankigen.checks.run import Linted

FORMATS = ("text", "json", "github", "sarif")

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def json_lines(linted: Linted) -> list[Line]:
    diagnostics = [
        {
            "path": d.path,
            "line": d.line or None,
            "column": d.column or None,
            "severity": d.severity,
            "rule": rule_of(d).id,
            "message": d.message,
        }
        for d in linted.diagnostics
    ]
    counts = {"errors": linted.errors, "warnings": linted.warnings, "banks": linted.banks}
    return [Line(json.dumps({"diagnostics": diagnostics, **counts}, indent=1))]


def _escape_data(text: str) -> str:
    """As GitHub's toolkit escapes a command's message (@actions/core, command.ts)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    """As GitHub's toolkit escapes a command's property value: the data's, and `:` `,`."""
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_lines(linted: Linted) -> list[Line]:
    """One workflow command per problem (`::error file=...,line=...,title=...::message`);
    GitHub turns each into an annotation on the file and line."""
    lines = []
    for d in linted.diagnostics:
        properties = [f"file={_escape_property(printable(d.path))}"]
        if d.line:
            properties.append(f"line={d.line}")
            if d.column:
                properties.append(f"col={d.column}")
        properties.append(f"title={_escape_property(rule_of(d).id)}")
        message = _escape_data(printable(d.message))
        lines.append(Line(f"::{d.severity} {','.join(properties)}::{message}"))
    return lines


def _uri(path: str) -> str:
    """A SARIF artifact location: a relative path as a relative URI reference (code
    scanning resolves it against the checkout), an absolute one as a file: URI."""
    pure = PurePath(path)
    return pure.as_uri() if pure.is_absolute() else quote(pure.as_posix(), safe="/")


def sarif_lines(linted: Linted) -> list[Line]:
    """One SARIF 2.1.0 log (GitHub code scanning, editors' SARIF viewers)."""
    rules = [*RULES, OTHER]
    index = {rule.id: number for number, rule in enumerate(rules)}
    results = []
    for d in linted.diagnostics:
        rule = rule_of(d)
        location: dict[str, Any] = {"artifactLocation": {"uri": _uri(d.path)}}
        if d.line:
            location["region"] = {"startLine": d.line}
            if d.column:
                location["region"]["startColumn"] = d.column
        results.append(
            {
                "ruleId": rule.id,
                "ruleIndex": index[rule.id],
                "level": d.severity,
                "message": {"text": d.message},
                "locations": [{"physicalLocation": location}],
            }
        )
    driver = {
        "name": "ankigen",
        "version": __version__,
        "rules": [{"id": rule.id, "shortDescription": {"text": rule.summary}} for rule in rules],
    }
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{"tool": {"driver": driver}, "results": results}],
    }
    return [Line(json.dumps(log, indent=1))]
