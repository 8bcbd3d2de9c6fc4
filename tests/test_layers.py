"""The package's layers point down only: no module imports from a layer above its own, and
packages that share a layer do not import each other. The layers are the import-linter
contract in pyproject.toml (``make lint`` runs ``lint-imports`` on the same contract)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import grimp

PYPROJECT = Path(__file__).parents[1] / "pyproject.toml"


def _layers() -> list[list[str]]:
    config = tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]
    [contract] = [c for c in config["contracts"] if c["type"] == "layers"]
    return [[p.strip() for p in layer.split("|")] for layer in contract["layers"]]


def _package(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "rapport" else None


def wrong_imports(graph: grimp.ImportGraph, layers: list[list[str]]) -> list[str]:
    """Every import that goes up a layer or across to a sibling of the same layer."""
    level = {pkg: i for i, layer in enumerate(layers) for pkg in layer}
    wrong = []
    for importer in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            src, dst = _package(importer), _package(imported)
            if src is None or dst is None or src == dst or src not in level or dst not in level:
                continue
            if level[dst] <= level[src]:
                wrong.append(f"{importer} -> {imported}")
    return wrong


def test_every_package_has_a_layer() -> None:
    graph = grimp.build_graph("rapport")
    placed = {pkg for layer in _layers() for pkg in layer}
    packages = {_package(m) for m in graph.modules} - {None}
    assert packages <= placed


def test_rapport_imports_only_downwards() -> None:
    assert wrong_imports(grimp.build_graph("rapport"), _layers()) == []


def test_an_upward_or_sideways_import_is_caught() -> None:
    graph = grimp.ImportGraph()
    for module in ("rapport.log._a", "rapport.eval._b", "rapport.report._c", "rapport.train._d"):
        graph.add_module(module)
    graph.add_import(importer="rapport.log._a", imported="rapport.eval._b")
    graph.add_import(importer="rapport.report._c", imported="rapport.train._d")
    graph.add_import(importer="rapport.eval._b", imported="rapport.log._a")
    assert wrong_imports(graph, _layers()) == [
        "rapport.log._a -> rapport.eval._b",
        "rapport.report._c -> rapport.train._d",
    ]


ARCHITECTURE = Path(__file__).parents[1] / "docs" / "architecture.md"


def _pictured_layers() -> list[list[str]]:
    """The layers docs/architecture.md draws, top to bottom (the code block after its
    ``layers`` marker)."""
    text = ARCHITECTURE.read_text()
    block = text.split("<!-- layers:", 1)[1].split("```", 2)[1]
    chain = " ".join(block.split())
    return [[p.strip() for p in part.split("|")] for part in chain.split("->")]


def test_the_architecture_picture_matches_the_contract() -> None:
    assert _pictured_layers() == _layers()
