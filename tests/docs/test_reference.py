"""The generated reference pages cover every setting and every results column."""

from __future__ import annotations

import importlib.util
import re
import sys
import typing
from pathlib import Path
from types import ModuleType

import yaml
from pydantic import BaseModel

from lme_bench.common.row_schema import row_fields
from lme_bench.config.settings import Settings

ROOT = Path(__file__).resolve().parents[2]


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "docs" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


gen = _load("gen_reference")


def _sections(page: str) -> dict[str, str]:
    """Each `## `[table]`` heading of a page with the text under it."""
    parts = re.split(r"^## `\[?([^`\]]+)\]?`$", page, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def _models(model: type[BaseModel], table: str) -> list[tuple[str, type[BaseModel]]]:
    found = []
    for name, info in model.model_fields.items():
        hint = info.annotation
        if typing.get_origin(hint) is typing.Annotated:
            hint = typing.get_args(hint)[0]
        keyed = typing.get_origin(hint) is dict
        inner = typing.get_args(hint)[1] if keyed else hint
        if isinstance(inner, type) and issubclass(inner, BaseModel):
            sub = f"{table}.{name}" if table else name
            sub = f"{sub}.<name>" if keyed else sub
            found += [(sub, inner), *_models(inner, sub)]
    return found


def test_every_setting_has_its_row_in_its_section() -> None:
    sections = _sections(gen.configuration_reference())
    models = _models(Settings, "")
    assert {table for table, _ in models} == set(sections)
    for table, model in models:
        for name in model.model_fields:
            assert f"| `{name}` |" in sections[table], f"[{table}] {name} missing"


def test_a_setting_shows_its_default_bounds_and_description() -> None:
    ingest = _sections(gen.configuration_reference())["limits"]
    field = Settings.model_fields["limits"].annotation.model_fields["ingest"]  # type: ignore[union-attr]
    row = next(line for line in ingest.splitlines() if line.startswith("| `ingest` |"))
    assert f"`{field.default}`" in row
    assert "≥ 1" in row and "≤ 256" in row
    assert field.description in row


def test_every_results_column_is_listed_with_its_type() -> None:
    sections = _sections(gen.results_columns_reference())
    for schema, row_type in gen.TABLES:
        name = schema.metadata[b"lme_bench.table"].decode()
        text = sections[f"{name}.parquet"]
        for column in schema:
            assert f"| `{column.name}` | `{column.type}`" in text, f"{name}: {column.name}"
        # The table's columns come from its row type (all but what the writer spreads out).
        derived = {f.name for f in row_fields(row_type, skip=("metrics",))}
        assert derived <= set(schema.names)


def test_field_notes_are_the_source_comments() -> None:
    from lme_bench.ingest.records import SessionRecord

    notes = gen.field_notes(SessionRecord)
    assert notes["resumed"] == "taken from a checkpoint of an earlier attempt"
    assert "question_id" not in notes


def test_the_site_lists_the_generated_pages() -> None:
    config = (ROOT / "mkdocs.yml").read_text()
    nav = yaml.safe_load(config)["nav"]
    flat = str(nav)
    assert gen.CONFIGURATION_PAGE in flat and gen.RESULTS_COLUMNS_PAGE in flat
    assert "docs/hooks.py" in yaml.safe_load(config)["hooks"]


def test_each_built_in_backend_has_its_params_listed() -> None:
    from lme_bench.backends.registry import params_class
    from lme_bench.config.backend_names import BUILT_IN

    page = gen.configuration_reference()  # the same page with or without the extras
    for name in BUILT_IN:
        heading = f'### `[memory.params]` of `backend = "{name}"`'
        assert heading in page, f"{name}: no [memory.params] section"
        part = page.split(heading)[1].split("\n### ")[0]
        for key in params_class(name).model_fields:
            assert f"| `{key}` |" in part, f"{name}: [memory.params] {key} missing"
