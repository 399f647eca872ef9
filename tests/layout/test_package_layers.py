"""The packages of lme_bench import each other in one direction only: the graph of imports
between packages (imports inside functions and under TYPE_CHECKING count) has no cycle, so
they stack in layers (pyproject.toml's layers contract says which order, lint-imports checks
it). A cycle is named with the module imports that make each of its steps."""

from __future__ import annotations

import graphlib
import itertools
from collections import defaultdict

import grimp


def _package(module: str) -> str:
    return ".".join(module.split(".")[:2])


def _imports_between_packages() -> dict[str, dict[str, list[str]]]:
    """importing package -> imported package -> the module imports that make that edge."""
    graph = grimp.build_graph("lme_bench")
    edges: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for importer in graph.modules:
        for imported in graph.find_modules_directly_imported_by(importer):
            source, target = _package(importer), _package(imported)
            if source != target and "lme_bench" not in (source, target):
                edges[source][target].append(f"{importer} -> {imported}")
    return edges


def _describe(cycle: list[str], edges: dict[str, dict[str, list[str]]]) -> str:
    lines = [" -> ".join(cycle)]
    for importer, imported in itertools.pairwise(cycle):
        lines += [f"  {importer} imports {imported}:"]
        lines += [f"    {line}" for line in sorted(edges[importer][imported])]
    return "\n".join(lines)


def test_no_two_packages_import_each_other() -> None:
    edges = _imports_between_packages()
    assert len(edges) > 10  # the walk found the packages
    graph = {package: set(imported) for package, imported in edges.items()}
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as error:
        # graphlib lists a cycle from the imported end; turn it into importer -> imported
        cycle = list(reversed(error.args[1]))
        raise AssertionError("packages in an import cycle:\n" + _describe(cycle, edges)) from None
