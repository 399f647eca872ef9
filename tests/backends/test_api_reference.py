"""The plug-in API reference page (docs/gen_api_reference.py) documents every public type,
field, enum member and method of the protocol, from their docstrings."""

from __future__ import annotations

import dataclasses
import importlib.util
import inspect
import sys
from pathlib import Path
from types import ModuleType

import yaml

from lme_bench.backends import protocol

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
    """What an implementer meets: dataclass fields, enum members, protocol attributes and
    methods, from the classes themselves rather than the generator's reading of them."""
    if dataclasses.is_dataclass(cls):
        return [f.name for f in dataclasses.fields(cls)] + [
            n for n, v in vars(cls).items() if inspect.isfunction(v) and not n.startswith("_")
        ]
    if issubclass(cls, protocol.Capability):
        return [member.name for member in cls]
    if cls is protocol.MemorySystem:
        return [
            *cls.__annotations__,
            *(n for n in vars(cls) if inspect.isfunction(vars(cls)[n]) and not n.startswith("_")),
        ]
    return []


def test_every_public_type_field_member_and_method_has_a_docstring() -> None:
    assert gen.undocumented() == []
    public = [
        obj
        for name, obj in vars(protocol).items()
        if inspect.isclass(obj) and obj.__module__ == protocol.__name__ and not name.startswith("_")
    ]
    assert set(public) == set(gen.TYPES)  # a new public type gets a section


def test_the_page_names_every_field_member_and_method() -> None:
    page = gen.api_reference()
    for cls in gen.TYPES:
        assert f"## `{cls.__name__}`" in page
        documented = {name for name, *_ in gen.attributes(cls)} | {m[0] for m in gen.methods(cls)}
        names = _public_names(cls)
        assert set(names) <= documented, (cls, set(names) - documented)
        for name in names:
            assert f"`{name}`" in page or f"def {name}(" in page, (cls, name)
    for env_field in ("embedder", "chat_model", "data_dir"):
        assert f"| `{env_field}` |" in page
    assert "TransientMemoryError" in page and "asyncio.gather" in page  # the contract


def test_the_page_is_in_the_site_navigation() -> None:
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text().replace("!!", "#"))["nav"]
    assert gen.API_PAGE in str(nav)
