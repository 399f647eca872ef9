"""Reference pages written from the code, so they cannot drift from it.

`configuration_reference()` walks the settings models (field types, defaults, bounds and
descriptions) and each built-in backend's `Params` (its `[memory.params]`);
`results_columns_reference()` reads the Parquet schemas the run writes, which are
derived from the row dataclasses, with each field's trailing source comment as its note. The
MkDocs hook (docs/hooks.py) adds both pages to the site at build time; `python
docs/gen_reference.py` prints them.
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from dataclasses import fields
from pathlib import Path
from typing import Any

import pyarrow as pa
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from lme_bench.backends.registry import params_class
from lme_bench.config.backend_names import BUILT_IN
from lme_bench.config.settings import Settings
from lme_bench.ingest.records import SessionRecord
from lme_bench.metrics.ranking_metrics import METRIC_NAMES
from lme_bench.results.ingest_table import INGEST_SCHEMA
from lme_bench.results.qa_tables import HYPOTHESES_SCHEMA, SCORES_SCHEMA, HypothesisRow, ScoreRow
from lme_bench.results.tables import RETRIEVAL_SCHEMA
from lme_bench.retrieval.official_ids import RetrievalRow

CONFIGURATION_PAGE = "reference/configuration.md"
RESULTS_COLUMNS_PAGE = "reference/results-columns.md"

# Each results table with the row dataclass its columns come from.
TABLES: list[tuple[pa.Schema, type]] = [
    (INGEST_SCHEMA, SessionRecord),
    (RETRIEVAL_SCHEMA, RetrievalRow),
    (HYPOTHESES_SCHEMA, HypothesisRow),
    (SCORES_SCHEMA, ScoreRow),
]


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _type_name(hint: Any) -> str:
    if typing.get_origin(hint) is typing.Annotated:
        hint = typing.get_args(hint)[0]
    if typing.get_origin(hint) is typing.Literal:
        return " \\| ".join(f'`"{v}"`' for v in typing.get_args(hint))
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return " \\| ".join(_type_name(a) for a in typing.get_args(hint))
    if hint is type(None):
        return "`none`"
    if isinstance(hint, type) and not typing.get_args(hint):
        return f"`{hint.__name__}`"
    return f"`{_plain(hint)}`"


def _plain(hint: Any) -> str:
    text = str(hint).replace("typing.", "").replace("pathlib.", "")
    return re.sub(r"<class '([\w.]+)'>", lambda m: m.group(1).rsplit(".", 1)[-1], text)


def _default(info: FieldInfo) -> str:
    if info.is_required():
        return "required"
    factory = info.default_factory
    value = factory() if factory is not None else info.default  # type: ignore[call-arg]
    if value is None or value is PydanticUndefined:
        return "unset"
    if isinstance(value, BaseModel):
        return "see below"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, str | Path):
        return f'`"{value}"`'
    return f"`{value!r}`" if value not in ({}, []) else "empty"


def _bounds(info: FieldInfo) -> str:
    marks = {"ge": "≥", "gt": ">", "le": "≤", "lt": "<"}
    parts = []
    for item in info.metadata:
        for attr, sign in marks.items():
            bound = getattr(item, attr, None)
            if bound is not None:
                parts.append(f"{sign} {bound}")
        pattern = getattr(item, "pattern", None)
        if pattern:
            parts.append(f"matches `{pattern}`")
    return ", ".join(parts)


def _model_of(hint: Any) -> tuple[type[BaseModel] | None, bool]:
    """(the settings model a field holds, whether it is a table of them keyed by name)."""
    if typing.get_origin(hint) is typing.Annotated:
        hint = typing.get_args(hint)[0]
    if isinstance(hint, type) and issubclass(hint, BaseModel):
        return hint, False
    if typing.get_origin(hint) is dict:
        value = typing.get_args(hint)[1]
        if isinstance(value, type) and issubclass(value, BaseModel):
            return value, True
    return None, False


def _section(
    model: type[BaseModel], table: str, env: str | None, out: list[str], title: str = ""
) -> None:
    level = title.split(" ")[0] if title else "##"  # nested tables: at their parent's level
    out += [title or f"## `[{table}]`", ""]
    if model.__doc__ and model is not Settings:
        out += [" ".join(model.__doc__.split()), ""]
    out += ["| key | type | default | bounds | meaning |", "|---|---|---|---|---|"]
    nested: list[tuple[type[BaseModel], str, str | None]] = []
    for name, info in model.model_fields.items():
        sub, keyed = _model_of(info.annotation)
        if sub is not None:
            if keyed:
                nested.append((sub, f"{table}.{name}.<name>" if table else f"{name}.<name>", None))
            else:
                sub_env = f"{env}{name.upper()}__" if env is not None else None
                nested.append((sub, f"{table}.{name}" if table else name, sub_env))
            if table:
                out.append(
                    f"| `{name}` | table | see `[{nested[-1][1]}]` | | "
                    f"{_cell(info.description or '')} |"
                )
            continue
        out.append(
            f"| `{name}` | {_type_name(info.annotation)} | {_default(info)} | "
            f"{_cell(_bounds(info))} | {_cell(info.description or '')} |"
        )
    if env is not None and table:
        out += ["", f"Environment: `{env}<KEY>` (keys in capitals)."]
    out.append("")
    for sub, sub_table, sub_env in nested:
        _section(sub, sub_table, sub_env, out, title=f"{level} `[{sub_table}]`")


def configuration_reference() -> str:
    """Every setting of a run config: one table per TOML section."""
    out = [
        "# Configuration reference",
        "",
        "Generated from the settings models (`lme_bench/config/settings.py`,",
        "`lme_bench/config/run_section.py`) each time the site is built. Every key can also be set",
        "from the environment as `LME_<SECTION>__<KEY>`; the environment wins over the file.",
        "Keys not listed here are refused. [Configuration](../configuration.md) explains them.",
        "",
    ]
    top = [(n, i) for n, i in Settings.model_fields.items() if _model_of(i.annotation)[0] is None]
    if top:
        out += ["## Top level", "", "| key | type | default | meaning |", "|---|---|---|---|"]
        out += [
            f"| `{n}` | {_type_name(i.annotation)} | {_default(i)} | {_cell(i.description or '')} |"
            for n, i in top
        ]
        out.append("")
    for name, info in Settings.model_fields.items():
        sub, keyed = _model_of(info.annotation)
        if sub is None:
            continue
        if keyed:
            out += [f"`[{name}.<name>]`: {_cell(info.description or 'one table per name')}.", ""]
            _section(sub, f"{name}.<name>", None, out)
        else:
            _section(sub, name, f"LME_{name.upper()}__", out)
    _backend_params(out)
    return "\n".join(out).rstrip() + "\n"


def _backend_params(out: list[str]) -> None:
    """Each built-in backend's `[memory.params]`, from its Params class."""
    out += [
        "## `[memory.params]` by backend",
        "",
        "Each backend checks `[memory.params]` with its own `Params` class; a key not listed for",
        "the configured backend is refused. A plugin's are its own (see",
        "[Memory systems](../memory-systems.md)).",
        "",
    ]
    for name in BUILT_IN:
        title = f'### `[memory.params]` of `backend = "{name}"`'
        _section(params_class(name), "memory.params", "LME_MEMORY__PARAMS__", out, title=title)


def field_notes(row_type: type) -> dict[str, str]:
    """Each dataclass field's trailing `# comment` in its source (its note in the docs)."""
    source = inspect.getsource(row_type)
    notes = {}
    names = {f.name for f in fields(row_type)}
    for line in source.splitlines():
        found = re.match(r"\s+(\w+):[^#]*#\s*(.+)$", line)
        if found and found.group(1) in names:
            notes[found.group(1)] = found.group(2).strip()
    return notes


def _arrow_name(field: pa.Field) -> str:
    text = str(field.type)
    return f"`{text}`" + ("" if field.nullable else ", required")


def results_columns_reference() -> str:
    """The columns of every Parquet table a run writes, in order."""
    out = [
        "# Results columns",
        "",
        "Generated from the Parquet schemas the run writes, which derive from the row dataclasses",
        "(`lme_bench/common/row_schema.py`), each time the site is built. Every table leads with",
        "`run_id` and records its name and schema version in the file's metadata.",
        "[Results files](../results.md) describes the whole run folder.",
        "",
    ]
    for schema, row_type in TABLES:
        meta = schema.metadata or {}
        name = meta.get(b"lme_bench.table", b"").decode()
        version = meta.get(b"lme_bench.schema_version", b"").decode()
        notes = field_notes(row_type)
        out += [
            f"## `{name}.parquet`",
            "",
            f"Rows of `{row_type.__module__}.{row_type.__name__}`; schema version {version}.",
            "",
            "| column | type | note |",
            "|---|---|---|",
        ]
        for column in schema:
            note = notes.get(column.name, "")
            if column.name == "run_id":
                note = "the run's id"
            elif column.name in METRIC_NAMES and column.name not in notes:
                note = "an official retrieval metric (from the row's metrics)"
            out.append(f"| `{column.name}` | {_arrow_name(column)} | {_cell(note)} |")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


if __name__ == "__main__":
    print(configuration_reference())
    print(results_columns_reference())
