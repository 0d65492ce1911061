"""docs/architecture.md kept true: its diagram names every top-level package and module
of the tree, and draws the layers of the import-linter contract in pyproject.toml, in
the same order and grouping; the contract that keeps `core` free of the libraries
ankigen wraps names every one of them.

Names are read from the tree and from pyproject.toml, never written here: a package
renamed or added fails until the document and the contract say so."""

from __future__ import annotations

import importlib.metadata
import re
import tomllib
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DOCUMENT = REPO / "docs" / "architecture.md"
PYPROJECT = REPO / "pyproject.toml"

# a layer's line in the diagram: its names (`pkg/` a package, `mod.py` a module), apart
# as in the contract (`|` independent, `:` not), then two spaces and what it holds
_NAME = r"[A-Za-z_]\w*(?:/|\.py)"
_LAYER = re.compile(rf"(?P<names>{_NAME}(?:\s+[|:]\s+{_NAME})*)(?:\s{{2,}}\S.*)?")

Layer = tuple[str, frozenset[str]]
"""A layer: how its names stand to each other (`|` or `:`) and the names."""


def settings() -> dict[str, Any]:
    with PYPROJECT.open("rb") as file:
        return tomllib.load(file)


def root() -> str:
    name: str = settings()["tool"]["importlinter"]["root_package"]
    return name


def layer(names: list[str]) -> Layer:
    separators = set(names[1::2])
    assert len(separators) <= 1, f"one layer mixes | and : {names}"
    return (separators.pop() if separators else "|", frozenset(names[::2]))


def contract_layers() -> list[Layer]:
    """The `layers` contract over the root package, each layer as import-linter reads it."""
    [contract] = [
        c
        for c in settings()["tool"]["importlinter"]["contracts"]
        if c["type"] == "layers" and c.get("containers") == [root()]
    ]
    return [layer(re.split(r"\s*([|:])\s*", text.strip())) for text in contract["layers"]]


def diagram() -> list[str]:
    """The lines of the document's first `text` block: the diagram."""
    text = DOCUMENT.read_text(encoding="utf-8")
    found = re.search(r"^```text\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
    assert found, f"{DOCUMENT}: no ```text block with the layers"
    return found.group(1).splitlines()


def diagram_layers() -> list[Layer]:
    """One layer for each line that starts at the margin; an indented line goes on
    saying what the layer above holds."""
    layers = []
    for line in diagram():
        if not line.strip() or line[0].isspace():
            continue
        match = _LAYER.fullmatch(line)
        assert match, f"{DOCUMENT}: not a layer of names and what they hold: {line!r}"
        names = re.split(r"\s+([|:])\s+", match["names"])
        layers.append(layer(names))
    return layers


def tree() -> set[str]:
    """The root package's top-level packages (`name/`) and modules (`name.py`)."""
    package = REPO / "src" / root()
    found = {f"{p.name}/" for p in package.iterdir() if (p / "__init__.py").is_file()}
    found |= {p.name for p in package.glob("*.py") if p.name != "__init__.py"}
    return found


def bare(name: str) -> str:
    return name.removesuffix("/").removesuffix(".py")


def test_the_diagram_names_every_top_level_package_and_module_as_the_tree_has_it() -> None:
    drawn = {name for _, names in diagram_layers() for name in names}
    assert sorted(tree() - drawn) == [], "missing from docs/architecture.md"
    assert sorted(drawn - tree()) == [], "in docs/architecture.md, not in the tree as written"


def test_the_diagram_draws_the_layers_of_the_import_linter_contract() -> None:
    drawn = [(kind, frozenset(bare(n) for n in names)) for kind, names in diagram_layers()]
    assert drawn == contract_layers()


def test_core_is_forbidden_every_library_ankigen_depends_on() -> None:
    """A library is forbidden by its import name (`PIL` for Pillow) if any of its
    top-level names is in the list."""
    project = settings()
    [contract] = [
        c
        for c in project["tool"]["importlinter"]["contracts"]
        if c["type"] == "forbidden" and f"{root()}.core" in c["source_modules"]
    ]
    forbidden = set(contract["forbidden_modules"])

    def normal(name: str) -> str:
        return re.sub(r"[-_.]+", "-", name).lower()

    provides: dict[str, set[str]] = {}
    for top, distributions in importlib.metadata.packages_distributions().items():
        for distribution in distributions:
            provides.setdefault(normal(distribution), set()).add(top)
    required = [
        re.match(r"[A-Za-z0-9._-]+", spec).group()  # type: ignore[union-attr]
        for spec in project["project"]["dependencies"]
    ]
    unforbidden = [name for name in required if not provides[normal(name)] & forbidden]
    assert unforbidden == []
