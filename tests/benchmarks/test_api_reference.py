"""The plug-in API reference page documents the benchmark protocol too: every public type,
field and method of lme_bench/benchmarks/protocol.py, from their docstrings."""

from __future__ import annotations

import dataclasses
import importlib.util
import inspect
import sys
from pathlib import Path
from types import ModuleType

from lme_bench.benchmarks import protocol

ROOT = Path(__file__).resolve().parents[2]


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "gen_api_reference", ROOT / "docs" / "gen_api_reference.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gen_api_reference", module)
    spec.loader.exec_module(module)
    return module


gen = _generator()


def _public_names(cls: type) -> list[str]:
    """Fields, class attributes, methods and properties, read from the class itself."""
    names = [f.name for f in dataclasses.fields(cls)] if dataclasses.is_dataclass(cls) else []
    if cls is protocol.Benchmark:
        names += list(cls.__annotations__)
    return names + [
        name
        for name, value in vars(cls).items()
        if not name.startswith("_") and (inspect.isfunction(value) or isinstance(value, property))
    ]


def test_every_public_type_of_the_benchmark_protocol_has_a_section() -> None:
    assert gen.undocumented() == []
    public = {
        obj
        for name, obj in vars(protocol).items()
        if inspect.isclass(obj) and obj.__module__ == protocol.__name__ and not name.startswith("_")
    }
    assert public == set(gen.BENCHMARK_TYPES)


def test_the_page_names_every_field_and_method() -> None:
    page = gen.api_reference()
    assert "## Benchmarks: the contract" in page
    for cls in gen.BENCHMARK_TYPES:
        assert f"## `{cls.__name__}`" in page
        documented = {name for name, *_ in gen.attributes(cls)} | {m[0] for m in gen.methods(cls)}
        names = _public_names(cls)
        assert set(names) <= documented, (cls, set(names) - documented)
        for name in names:
            assert f"`{name}`" in page or f"def {name}(" in page, (cls, name)
