"""The package's modules import each other without a loop (lme_bench, flows and tasks; imports
inside functions count too): a loop is found statically and named."""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = {"lme_bench": "lme_bench", "flows": "lme_bench_flows", "tasks": "lme_bench_tasks"}


def _modules() -> dict[str, Path]:
    found = {}
    for folder, package in PACKAGES.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = (package, *path.relative_to(ROOT / folder).with_suffix("").parts)
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _imported(path: Path, modules: dict[str, Path]) -> set[str]:
    named: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            named |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            named.add(node.module)
            named |= {f"{node.module}.{alias.name}" for alias in node.names}
    return named & modules.keys()


def test_no_import_loops() -> None:
    modules = _modules()
    graph = {name: _imported(path, modules) - {name} for name, path in modules.items()}
    assert len(graph) > 100  # the walk found the package
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as loop:
        raise AssertionError(f"import loop: {' -> '.join(loop.args[1])}") from None
