"""The public API (`ankigen.__all__`, docs/library.md), used as a library caller uses it:
from a program of its own, in an interpreter that has imported nothing of ankigen before.

The callers run in subprocesses: until the `build` package is renamed, the function
`ankigen.builder` and that package share a name, and a process that has asked for the
function no longer finds the package's modules by attribute (as other tests do)."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from anki.collection import Collection, ImportAnkiPackageOptions, ImportAnkiPackageRequest

import ankigen

REPO = Path(__file__).resolve().parent.parent
# the checkout's source, not site-packages: CI installs the project (mypy refuses
# site-packages in MYPYPATH), and a caller's program must see this checkout's code
SRC = REPO / "src"
GIFT = REPO / "tests" / "data" / "formats" / "two_blocks.gift"


def caller(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`code` run as a caller's program, in a fresh interpreter, with this checkout's ankigen."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def answer(code: str, cwd: Path) -> object:
    """What the caller's program printed last, as JSON."""
    done = caller(code, cwd)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def declared() -> dict[str, str]:
    """Public name -> its module, from the `if TYPE_CHECKING:` imports of ankigen/__init__.py."""
    tree = ast.parse(Path(ankigen.__file__).read_text(encoding="utf-8"))
    [block] = [
        node
        for node in tree.body
        if isinstance(node, ast.If)
        and isinstance(node.test, ast.Name)
        and node.test.id == "TYPE_CHECKING"
    ]
    return {
        alias.name: statement.module
        for statement in block.body
        if isinstance(statement, ast.ImportFrom) and statement.module
        for alias in statement.names
    }


def test_importing_ankigen_loads_no_other_module(tmp_path: Path) -> None:
    """Every `ankigen.*` import runs `ankigen/__init__.py` first, a build with nothing to
    do among them: the API it names costs nothing until a name is used."""
    loaded = answer(
        """
        import json, sys
        before = set(sys.modules)
        import ankigen
        print(json.dumps(sorted(set(sys.modules) - before)))
        """,
        tmp_path,
    )
    assert loaded == ["ankigen"]


def test_every_public_name_is_its_modules_own_and_listed(tmp_path: Path) -> None:
    """`__all__`, the imports mypy reads and the names loaded at run time say the same."""
    homes = declared()
    assert sorted(homes) == sorted(ankigen.__all__)
    assert homes == ankigen._HOMES
    found = answer(
        """
        import importlib, json
        import ankigen
        homes = ankigen._HOMES
        same = {
            name: getattr(ankigen, name) is getattr(importlib.import_module(home), name)
            for name, home in homes.items()
        }
        try:
            ankigen.biuld
        except AttributeError as exc:
            missing = str(exc)
        print(json.dumps([same, sorted(set(ankigen.__all__) - set(dir(ankigen))), missing]))
        """,
        tmp_path,
    )
    assert found == [
        dict.fromkeys(homes, True),
        [],
        "module 'ankigen' has no attribute 'biuld'",
    ]


def test_a_library_caller_builds_lints_imports_exports_and_translates(tmp_path: Path) -> None:
    shutil.copytree(REPO / "banks", tmp_path / "banks")
    shutil.copytree(REPO / "media", tmp_path / "media")
    shutil.copy(GIFT, tmp_path / "europe.gift")
    bad = tmp_path / "bad" / "demo" / "en.yaml"
    bad.parent.mkdir(parents=True)
    bad.write_text(
        "topic: demo\nlanguage: en\ntitle: Demo\nitems:\n"
        "  - id: one\n    question: Which?\n    choices: [a, b]\n    answer: 3\n"
        "    explanation: Because.\n",
        encoding="utf-8",
    )
    (tmp_path / "empty").mkdir()
    told = answer(
        """
        import json
        from pathlib import Path

        from ankigen import (
            AnkigenError, BuildResult, DeckReport, Diagnostic, ExportWritten, ImportWritten,
            InvalidBanks, Linted, NoBanks, PoWritten, Refused, build, export_to, export_po,
            import_file, lint, write_import,
        )

        told = {}
        result = build(Path("banks"), Path("out"))
        assert isinstance(result, BuildResult), type(result)
        assert all(isinstance(deck, DeckReport) for deck in result.decks)
        told["decks"] = {deck.path: deck.notes for deck in result.decks if deck.written}

        linted = lint(Path("bad"))
        assert isinstance(linted, Linted) and linted.fails(strict=False)
        assert all(isinstance(d, Diagnostic) for d in linted.diagnostics)
        told["lint"] = [str(d) for d in linted.diagnostics]
        try:
            build(Path("bad"), Path("bad-out"))
        except InvalidBanks as exc:
            told["build"] = [str(d) for d in exc.diagnostics]
            told["written"] = Path("bad-out").exists()
        try:
            lint(Path("empty"))
        except NoBanks as exc:
            told["empty"] = [isinstance(exc, AnkigenError), exc.message]

        imported = import_file(Path("europe.gift"), topic="europe", language="en")
        done = write_import(
            imported, Path("europe.gift"), Path("mine/europe/en.yaml"), Path("mine-media")
        )
        assert isinstance(done, ImportWritten)
        told["import"] = [done.wrote, list(imported.ids), lint(Path("mine")).errors]

        exported = export_to(Path("mine/europe/en.yaml"), "gift", Path("europe-again.gift"),
                             Path("mine-media"))
        assert isinstance(exported, ExportWritten)
        gift = Path("europe-again.gift").read_text(encoding="utf-8")
        told["export"] = [exported.wrote, "What is the capital of France?" in gift]
        try:
            export_to(Path("mine/europe/en.yaml"), "gift", Path("europe.gift"), Path("mine-media"))
        except Refused as exc:
            told["refused"] = isinstance(exc, AnkigenError)

        po = export_po(Path("banks"), "collectives", "de", Path("collectives.de.po"))
        assert isinstance(po, PoWritten)
        told["po"] = [po.wrote, po.texts > 0, po.translated]
        print(json.dumps(told))
        """,
        tmp_path,
    )
    assert isinstance(told, dict)
    # what the build reported is what Anki's own importer finds in each package
    decks = told["decks"]
    assert len(decks) >= 10
    for path, notes in decks.items():
        folder = tmp_path / "anki" / Path(path).name
        folder.mkdir(parents=True)
        col = Collection(str(folder / "collection.anki2"))
        try:
            request = ImportAnkiPackageRequest(
                package_path=str(tmp_path / "out" / path), options=ImportAnkiPackageOptions()
            )
            col.import_anki_package(request)
            assert col.note_count() == notes > 0, path
        finally:
            col.close()
    [problem] = told["lint"]
    assert problem == (
        "bad/demo/en.yaml:8: error: item 'one': answer 3 is out of range; "
        "choices are numbered 1 to 2"
    )
    assert told["build"] == told["lint"]
    assert told["written"] is False
    assert told["empty"] == [True, "empty: no bank files (*.yaml) found"]
    assert told["import"] == [
        True,
        ["capital-of-france", "longest-river", "highest-mountain", "euro-in-slovakia"],
        0,
    ]
    assert told["export"] == [True, True]
    assert told["refused"] is True
    assert told["po"] == [True, True, 0]


CALLER = """\
from pathlib import Path

from ankigen import BuildResult, Diagnostic, InvalidBanks, build, lint


def decks(banks: Path, out: Path) -> list[str]:
    try:
        result: BuildResult = build(banks, out, prune=True)
    except InvalidBanks as exc:
        problems: list[Diagnostic] = exc.diagnostics
        return [problem.message for problem in problems]
    return [deck.path for deck in result.decks if deck.written] + [
        str(d) for d in lint(banks).diagnostics
    ]
"""

MISTAKES = """\
from pathlib import Path

from ankigen import biuld
from ankigen import build, lint

count: int = build(Path("banks"), Path("out"))
lint("banks")
"""


def test_a_callers_code_type_checks_against_the_api(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """mypy --strict reads the names from the `if TYPE_CHECKING:` imports: a caller's right
    code passes, and a misspelt name, a wrong result type and a wrong argument fail."""
    from mypy import api

    (tmp_path / "caller.py").write_text(CALLER, encoding="utf-8")
    (tmp_path / "mistakes.py").write_text(MISTAKES, encoding="utf-8")
    (tmp_path / "mypy.ini").write_text("[mypy]\n", encoding="utf-8")  # not the project's
    monkeypatch.setenv("MYPYPATH", str(SRC))  # this checkout's ankigen, not the installed one
    out, err, _ = api.run(
        [
            "--strict",
            "--cache-dir",
            str(tmp_path / "cache"),
            "--config-file",
            str(tmp_path / "mypy.ini"),
            str(tmp_path / "caller.py"),
            str(tmp_path / "mistakes.py"),
        ]
    )
    # only the caller's files: mypy reports nothing inside an installed package (ankigen's own
    # `mypy` run in CI checks it), while a MYPYPATH package is read as if it were the caller's
    found = [
        line.split(": error: ")[0]
        for line in out.splitlines()
        if ": error: " in line and line.startswith(str(tmp_path))
    ]
    assert [line.rsplit("/", 1)[-1] for line in found] == [
        "mistakes.py:3",
        "mistakes.py:6",
        "mistakes.py:7",
    ], out + err


def test_build_is_the_function_even_after_its_package_was_imported(tmp_path: Path) -> None:
    found = answer(
        """
        import json
        import ankigen.builder.pipeline
        from ankigen import build
        print(json.dumps(callable(build)))
        """,
        tmp_path,
    )
    assert found is True
