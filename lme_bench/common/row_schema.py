"""One definition per table: a row dataclass declares its Parquet columns, the writer and the
readers derive from it.

Column types follow the field annotations: `str` → string, `int` → int32 (`Int64` → int64),
`float` → float64, `bool` → bool, `list[str]` → list of strings, `dict[str, int]` → map of
string to int64; `X | None` makes the column nullable, anything else is required. Every table
leads with `run_id` and carries its name and schema version in its metadata.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Iterable, Sequence
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Annotated, Any, TypeVar

import pyarrow as pa
import pyarrow.parquet as pq

INT64 = "int64"
Int64 = Annotated[int, INT64]  # a count that can pass 2**31 (tokens)
R = TypeVar("R")

_SCALARS: dict[Any, pa.DataType] = {
    str: pa.string(),
    int: pa.int32(),
    float: pa.float64(),
    bool: pa.bool_(),
}


def _arrow(hint: Any) -> tuple[pa.DataType, bool]:
    """(arrow type, nullable) of one field annotation."""
    nullable = False
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(hint) if a is not type(None)]
        nullable = len(members) < len(typing.get_args(hint))
        (hint,) = members
    if typing.get_origin(hint) is Annotated:
        base, *extras = typing.get_args(hint)
        if base is int and INT64 in extras:
            return pa.int64(), nullable
        hint = base
    if hint in _SCALARS:
        return _SCALARS[hint], nullable
    origin, args = typing.get_origin(hint), tuple(typing.get_args(hint))
    if origin is list and args == (str,):
        return pa.list_(pa.string()), nullable
    if origin is dict and args == (str, int):
        return pa.map_(pa.string(), pa.int64()), nullable
    raise TypeError(f"no Parquet column type for the annotation {hint!r}")


def row_fields(row_type: type, skip: Iterable[str] = ()) -> list[pa.Field]:
    """The columns of a row dataclass, in field order."""
    if not is_dataclass(row_type):
        raise TypeError(f"{row_type!r} is not a dataclass")
    hints = typing.get_type_hints(row_type, include_extras=True)
    left_out = set(skip)
    found = []
    for f in fields(row_type):
        if f.name not in left_out:
            arrow, nullable = _arrow(hints[f.name])
            found.append(pa.field(f.name, arrow, nullable=nullable))
    return found


def table_schema(table: str, version: str, columns: Sequence[pa.Field]) -> pa.Schema:
    meta = {"lme_bench.table": table, "lme_bench.schema_version": version}
    return pa.schema([pa.field("run_id", pa.string(), nullable=False), *columns], metadata=meta)


def rows_table(run_id: str, rows: Iterable[Any], schema: pa.Schema) -> pa.Table:
    """A table of row dataclasses (map columns written from dicts)."""
    maps = {f.name for f in schema if pa.types.is_map(f.type)}
    names = [n for n in schema.names if n != "run_id"]
    records = []
    for row in rows:
        record: dict[str, Any] = {"run_id": run_id}
        for name in names:
            value = getattr(row, name)
            record[name] = list(value.items()) if name in maps else value
        records.append(record)
    return pa.Table.from_pylist(records, schema=schema)


def read_rows(path: Path, row_type: type[R], defaults: dict[str, Any] | None = None) -> list[R]:
    """The rows of a table written from `row_type`; columns it lacks (an older schema version)
    take `defaults`, columns it no longer has are left out. No file: no rows."""
    if not path.is_file():
        return []
    table = pq.read_table(path)
    maps = {f.name for f in table.schema if pa.types.is_map(f.type)}
    wanted = {f.name for f in fields(row_type)}  # type: ignore[arg-type]
    found = []
    for row in table.to_pylist():
        values = dict(defaults or {})
        values |= {k: (dict(v) if k in maps else v) for k, v in row.items() if k in wanted}
        found.append(row_type(**values))
    return found
