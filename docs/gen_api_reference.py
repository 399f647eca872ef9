"""The plug-in API reference page, written from the docstrings of the memory-system protocol
(lme_bench/backends/protocol.py) and the conformance suite, so it cannot drift from them.

Fields and enum members are documented by a string right after them (an attribute
docstring, which mkdocstrings and IDEs read too); `undocumented()` lists any public field,
member or method without one (tests/backends/test_api_reference.py keeps it empty). The MkDocs
hook (docs/hooks.py) adds the page at build time; `python docs/gen_api_reference.py` prints it.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
from enum import Enum
from pathlib import Path
from typing import Any

from lme_bench.backends import protocol
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


def _class_nodes() -> dict[str, ast.ClassDef]:
    tree = ast.parse(SOURCE.read_text())
    return {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}


def attributes(cls: type) -> list[tuple[str, str, str, str]]:
    """(name, type, default, docstring) of each field or member the class body declares."""
    found = []
    body = _class_nodes()[cls.__name__].body
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
    """(name, signature, docstring) of each public method the class itself defines."""
    found = []
    for name, value in vars(cls).items():
        if name.startswith("_") or not inspect.isfunction(value):
            continue
        prefix = "async " if inspect.iscoroutinefunction(value) else ""
        signature = f"{prefix}def {name}{_signature(value)}"
        found.append((name, signature, inspect.getdoc(value) or ""))
    return found


def undocumented() -> list[str]:
    """Every public type, field, member and method of the protocol without a docstring."""
    missing = [cls.__name__ for cls in TYPES if not (cls.__doc__ or "").strip()]
    for cls in TYPES:
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
        "Generated from the docstrings of `lme_bench/backends/protocol.py` and",
        "`lme_bench/conformance/suite.py` each time the site is built. Import everything from",
        "`lme_bench.backends.protocol`; [Memory systems](../memory-systems.md#any-memory-system)",
        "walks through writing a backend.",
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
    ]
    return "\n".join(out).rstrip() + "\n"


if __name__ == "__main__":
    print(api_reference())
