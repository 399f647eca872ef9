"""The plug-in API reference page, written from the docstrings of the memory-system protocol
(lme_bench/backends/protocol.py), the conformance suite and the benchmark protocol
(lme_bench/benchmarks/protocol.py), so it cannot drift from them.

Fields and enum members are documented by a string right after them (an attribute
docstring, which mkdocstrings and IDEs read too); `undocumented()` lists any public field,
member or method without one (tests/backends/test_api_reference.py and
tests/benchmarks/test_api_reference.py keep it empty). The MkDocs
hook (docs/hooks.py) adds the page at build time; `python docs/gen_api_reference.py` prints it.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
from enum import Enum
from pathlib import Path
from typing import Any

from lme_bench.backends import protocol
from lme_bench.benchmarks import protocol as benchmark_protocol
from lme_bench.conformance import suite

API_PAGE = "reference/plugin-api.md"
SOURCE = Path(protocol.__file__)

# The public types in the order the page gives them.
TYPES: list[type] = [
    protocol.MemorySystem,
    protocol.BackendParams,
    protocol.BackendEnv,
    protocol.Session,
    protocol.Turn,
    protocol.Hit,
    protocol.Usage,
    protocol.Capability,
    protocol.TransientMemoryError,
]

# The benchmark protocol's public types, in the order the page gives them.
BENCHMARK_TYPES: list[type] = [
    benchmark_protocol.Benchmark,
    benchmark_protocol.Build,
    benchmark_protocol.BuildSession,
    benchmark_protocol.BuildTurn,
    benchmark_protocol.Question,
    benchmark_protocol.PublicQuestion,
    benchmark_protocol.Gold,
    benchmark_protocol.Scoring,
    benchmark_protocol.BenchmarkDataError,
]


@functools.cache
def _module_classes(source: Path) -> dict[str, ast.ClassDef]:
    tree = ast.parse(source.read_text())
    return {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}


def _class_nodes(cls: type | None = None) -> dict[str, ast.ClassDef]:
    """The class definitions of `cls`'s source file (the memory-system protocol's if None)."""
    return _module_classes(Path(inspect.getfile(cls)) if cls is not None else SOURCE)


def attributes(cls: type) -> list[tuple[str, str, str, str]]:
    """(name, type, default, docstring) of each field or member the class body declares."""
    found = []
    body = _class_nodes(cls)[cls.__name__].body
    for node, after in zip(body, [*body[1:], None], strict=True):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            name, kind = node.target.id, ast.unparse(node.annotation)
            default = ast.unparse(node.value) if node.value is not None else ""
        elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            name, kind, default = node.targets[0].id, "", ast.unparse(node.value)
        else:
            continue
        if name.startswith("_") or name == "model_config":
            continue
        doc = ""
        if (
            isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            doc = inspect.cleandoc(after.value.value)
        found.append((name, kind, default, doc))
    return found


def _signature(function: Any) -> str:
    """The signature as written (annotations are strings under `from __future__ import
    annotations`; shown without their quotes)."""
    return str(inspect.signature(function)).replace("'", "")


def methods(cls: type) -> list[tuple[str, str, str]]:
    """(name, signature, docstring) of each public method and property the class itself
    defines."""
    found = []
    for name, value in vars(cls).items():
        if isinstance(value, property) and not name.startswith("_") and value.fget is not None:
            returns = inspect.signature(value.fget).return_annotation
            signature = f"@property\ndef {name}(self) -> {returns}"
            found.append((name, signature, inspect.getdoc(value) or ""))
        if name.startswith("_") or not inspect.isfunction(value):
            continue
        prefix = "async " if inspect.iscoroutinefunction(value) else ""
        signature = f"{prefix}def {name}{_signature(value)}"
        found.append((name, signature, inspect.getdoc(value) or ""))
    return found


def undocumented() -> list[str]:
    """Every public type, field, member and method of the protocol without a docstring."""
    every = TYPES + BENCHMARK_TYPES
    missing = [cls.__name__ for cls in every if not (cls.__doc__ or "").strip()]
    for cls in every:
        missing += [f"{cls.__name__}.{a[0]}" for a in attributes(cls) if not a[3]]
        missing += [f"{cls.__name__}.{m[0]}" for m in methods(cls) if not m[2]]
    return missing


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _code(text: str) -> str:
    return f"`{text}`" if text else ""


def _type_section(cls: type) -> list[str]:
    kind = "enum" if issubclass(cls, Enum) else "exception" if issubclass(cls, Exception) else ""
    out = [f"## `{cls.__name__}`", ""]
    if kind:
        out += [f"*{kind}*", ""]
    out += [inspect.getdoc(cls) or "", ""]
    fields = attributes(cls)
    if issubclass(cls, Enum):
        out += ["| member | value | meaning |", "|---|---|---|"]
        out += [f"| `{n}` | `{_cell(d)}` | {_cell(doc)} |" for n, _, d, doc in fields]
    elif fields:
        with_defaults = dataclasses.is_dataclass(cls)
        if with_defaults:
            out += ["| field | type | default | meaning |", "|---|---|---|---|"]
        else:
            out += ["| attribute | type | meaning |", "|---|---|---|"]
        for name, annotation, default, doc in fields:
            if "field(" in default:
                default = "empty"
            shown = _code(default) if default and default != "empty" else (default or "required")
            middle = f" {shown} |" if with_defaults else ""
            out.append(f"| `{name}` | {_code(_cell(annotation))} |{middle} {_cell(doc)} |")
    if fields:
        out.append("")
    for _name, signature, doc in methods(cls):
        out += ["```python", signature, "```", "", doc, ""]
    return out


def _function_section(function: Any) -> list[str]:
    signature = f"def {function.__name__}{_signature(function)}"
    return ["```python", signature, "```", "", inspect.getdoc(function) or "", ""]


def api_reference() -> str:
    """The page: the protocol's contract, then each type, then the conformance suite."""
    out = [
        "# Plug-in API reference",
        "",
        "Generated from the docstrings of `lme_bench/backends/protocol.py`,",
        "`lme_bench/conformance/suite.py` and `lme_bench/benchmarks/protocol.py` each time the",
        "site is built. A memory system imports everything from `lme_bench.backends.protocol`;",
        "[Memory systems](../memory-systems.md#any-memory-system) walks through writing a",
        "backend. A benchmark's types follow the conformance suite:",
        "[Benchmarks: the contract](#benchmarks-the-contract).",
        "",
        "## The contract",
        "",
        inspect.getdoc(protocol) or "",
        "",
    ]
    for cls in TYPES:
        out += _type_section(cls)
    out += [
        "## Conformance suite",
        "",
        "`from lme_bench.conformance import MemorySystemConformance, build_system`",
        "",
        "### `MemorySystemConformance`",
        "",
        inspect.getdoc(suite.MemorySystemConformance) or "",
        "",
        "Its checks: "
        + ", ".join(f"`{n}`" for n in dir(suite.MemorySystemConformance) if n.startswith("test_"))
        + ".",
        "",
        "### `build_system`",
        "",
        *_function_section(suite.build_system),
        "",
        "## Benchmarks: the contract",
        "",
        "From `lme_bench/benchmarks/protocol.py`; import the types from",
        "`lme_bench.benchmarks.protocol`. [Benchmarks](../benchmarks.md#adding-a-benchmark)",
        "walks through writing one and running it.",
        "",
        inspect.getdoc(benchmark_protocol) or "",
        "",
    ]
    for cls in BENCHMARK_TYPES:
        out += _type_section(cls)
    return "\n".join(out).rstrip() + "\n"


if __name__ == "__main__":
    print(api_reference())
