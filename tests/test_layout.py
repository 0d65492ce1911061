"""The tests mirror the package: a folder per sub-package of ankigen (or a file named
after a top-level module), shared code in conftest.py files, tests/helpers.py,
tests/support/ and tests/desktop/, and no test module importing another."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.helpers import SRC, TESTS
from tests.support import gui

# folders of tests that are not one sub-package's: the card in its engines, and commands
# meeting each other
ACROSS = {"card", "seams"}
# folders of helpers and data, which hold no tests
NOT_TESTS = {"support", "desktop", "webkit", "browser", "data", "golden", "pages", "artifacts"}


def all_test_modules() -> list[Path]:
    return sorted(TESTS.rglob("test_*.py"))


def imported_modules(source: str, package: tuple[str, ...]) -> list[tuple[int, str]]:
    """Each module `source` imports, at any depth of its code, with its line; a relative
    import is resolved against `package`, and `importorskip("x")` counts."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = list(package[: len(package) - node.level + 1]) if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            found.append((node.lineno, module))
            # `from tests.card import test_chromium` names a module, too
            found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", None))
            in ("importorskip", "import_module", "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.append((node.lineno, node.args[0].value))
    return found


def imports_of_test_modules(source: str, package: tuple[str, ...]) -> list[tuple[int, str]]:
    return [
        (line, name)
        for line, name in imported_modules(source, package)
        if name.startswith("tests.") and name.rpartition(".")[2].startswith("test_")
    ]


def test_no_test_module_imports_another() -> None:
    """Shared code lives in conftest.py, tests/helpers.py or tests/support/: a test module
    that imports another runs that module's tests' fixtures and drags its imports along."""
    found = []
    for path in [*all_test_modules(), *TESTS.rglob("conftest.py")]:
        package = path.relative_to(TESTS.parent).parts[:-1]
        for line, name in imports_of_test_modules(path.read_text(encoding="utf-8"), package):
            found.append(f"{path.relative_to(TESTS.parent)}:{line}: imports {name}")
    assert found == []


@pytest.mark.parametrize(
    "source",
    [
        "from tests.card.test_chromium import Client\n",
        "from tests.card import test_chromium\n",
        "import tests.test_push\n",
        "from .test_chromium_rich import site\n",
        "x = pytest.importorskip('tests.card.test_desktop')\n",
        "def f():\n    from tests.pull.test_pull import BANK\n",
    ],
)
def test_the_import_check_sees_every_spelling(source: str) -> None:
    """The check above would pass vacuously if it missed a spelling."""
    assert imports_of_test_modules(source, ("tests", "card")) != []
    assert imports_of_test_modules(source.replace("test_", "fixtures_"), ("tests", "card")) == []


def test_every_folder_of_tests_is_a_sub_package_or_across_them() -> None:
    packages = {p.parent.name for p in (SRC / "ankigen").glob("*/__init__.py")}
    folders = {p.parent for p in all_test_modules()} - {TESTS}
    strays = sorted(str(f.relative_to(TESTS)) for f in folders if f.name not in packages | ACROSS)
    assert strays == []
    assert not {f.name for f in folders} & NOT_TESTS
    # each folder is a package, as tests/ is: modules named alike in two folders stay apart
    assert [f for f in folders if not (f / "__init__.py").exists()] == []


def test_every_top_level_test_file_names_a_module_or_the_whole() -> None:
    """A file directly in tests/ names a top-level module of ankigen (test_push.py for
    push.py), a sub-package too small for a folder, or the project as a whole."""
    modules = {p.stem for p in (SRC / "ankigen").glob("*.py")}
    modules |= {p.parent.name for p in (SRC / "ankigen").glob("*/__init__.py")}
    whole = {"layout", "reproducible", "hypothesis", "api", "architecture", "house"}
    names = {p.stem.removeprefix("test_") for p in TESTS.glob("test_*.py")}
    # the file of a module may hold more than one kind of its tests (test_push_desktop.py)
    strays = sorted(n for n in names if n not in whole and n.split("_")[0] not in modules)
    assert strays == []


def test_a_test_that_starts_an_engine_unmarked_fails_and_a_marked_one_may(
    request: pytest.FixtureRequest,
) -> None:
    """`pytest -m "not gui"` leaves out what the marker names; the guard makes sure the
    marker names every test that starts Chromium, WebKit or the desktop."""
    assert request.node.get_closest_marker("gui") is None
    with pytest.raises(pytest.fail.Exception, match=r"test_layout\.py::.* starts Chromium"):
        gui.check("Chromium")
    request.node.add_marker(pytest.mark.gui)
    gui.check("Chromium")
