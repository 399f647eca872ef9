"""Whether a tool call's arguments fit the tool they name, checked before the call is made.

A memory server's tools come as LangChain tools whose schema is the server's JSON Schema (a
dict), which LangChain passes on unchecked; a tool built on a pydantic model is checked by it.
For a JSON Schema the check is what a model gets wrong in practice: arguments that are not an
object, a required argument left out, an argument of the wrong JSON type. Deeper rules are the
server's to enforce (its error goes back to the model as the call's result).
"""

from __future__ import annotations

from typing import Any

from langchain_core.tools import BaseTool
from pydantic import BaseModel, ValidationError

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list, tuple),
    "object": (dict,),
    "null": (type(None),),
}


def _json_type_fits(value: Any, declared: Any) -> bool:
    names = declared if isinstance(declared, list) else [declared]
    known = [name for name in names if name in _JSON_TYPES]
    if not known:
        return True  # no type, or one this check does not know: the server decides
    if isinstance(value, bool) and "boolean" not in known:
        return False  # a JSON true is no number
    return any(isinstance(value, _JSON_TYPES[name]) for name in known)


def argument_problem(tool: BaseTool, args: Any) -> str | None:
    """Why `args` do not fit `tool`'s schema, or None when they do (or it declares none)."""
    if not isinstance(args, dict):
        return "arguments are not an object"
    schema = tool.args_schema
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        try:
            schema.model_validate(args)
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "arguments"
            return f"{where}: {first['msg']}"
        return None
    if not isinstance(schema, dict):
        return None
    missing = [name for name in schema.get("required", []) if name not in args]
    if missing:
        return "missing " + ", ".join(missing)
    properties = schema.get("properties") or {}
    for name, value in args.items():
        declared = properties.get(name, {})
        if isinstance(declared, dict) and not _json_type_fits(value, declared.get("type")):
            return f"{name}: not of type {declared.get('type')}"
    return None
