"""`[memory.params]` of the `mcp-tools` backend, and the argument templates it fills in.

A template is any JSON value (a TOML table, array or string). Its strings may hold
placeholders such as `{query}` or `{text}`: a string that is exactly one placeholder becomes
the value itself (an integer for `{k}` and `{turn_index}`, a list for `{names}`), any other
string gets the values written into it. Values are never scanned for placeholders again, so a
turn that contains `{text}` goes to the server as it is. Templates cannot hold literal braces.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from lme_bench.backends.protocol import BackendParams

PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")
SEARCH_VALUES = frozenset({"query", "k", "question_date", "memory"})
SESSION_VALUES = frozenset({"memory", "session_key", "date", "session_text"})
TURN_VALUES = frozenset({"memory", "session_key", "date", "turn_index", "role", "text"})
LIST_VALUES = frozenset({"memory"})
DELETE_VALUES = frozenset({"memory", "names"})
SERVER_VALUES = frozenset({"memory", "data_dir"})
PROVENANCE_FIELDS = frozenset({"session_key", "turn_index", "date"})
PATTERN_GROUPS = PROVENANCE_FIELDS | {"memory"}


def _strings(template: Any) -> Iterator[str]:
    if isinstance(template, str):
        yield template
    elif isinstance(template, list):
        for item in template:
            yield from _strings(item)
    elif isinstance(template, dict):
        for key, value in template.items():
            yield str(key)
            yield from _strings(value)


def placeholders(template: Any) -> set[str]:
    """The placeholder names a template uses."""
    return {name for text in _strings(template) for name in PLACEHOLDER.findall(text)}


def render(template: Any, values: Mapping[str, Any]) -> Any:
    """The template with its placeholders filled in (see the module docstring)."""
    if isinstance(template, str):
        whole = PLACEHOLDER.fullmatch(template)
        if whole:
            return values[whole.group(1)]
        return PLACEHOLDER.sub(lambda match: str(values[match.group(1)]), template)
    if isinstance(template, list):
        return [render(item, values) for item in template]
    if isinstance(template, dict):
        return {key: render(value, values) for key, value in template.items()}
    return template


def dig(data: Any, path: str) -> Any:
    """`data` at a dotted path of keys (`""`: data itself); None where a key is missing."""
    for key in [part for part in path.split(".") if part]:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


class HitPath(BaseModel):
    """How a search (or list) tool's result becomes hits."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    items: str = Field(
        default="",
        description="dotted path in the tool's JSON result to the list of items ('' = the"
        " result is the list), e.g. 'entities' for server-memory",
    )
    text: str = Field(
        default="",
        description="dotted path in an item to the hit's text (a list is joined with newlines;"
        " '' = the item itself), e.g. 'observations'",
    )
    name: str | None = Field(
        default=None,
        description="dotted path in an item to the name the backend gave it at ingestion"
        " (e.g. 'name'); name_pattern reads provenance from it and delete's {names} lists it",
    )
    name_pattern: str | None = Field(
        default=None,
        description="regular expression matched against the whole name, with named groups"
        " among session_key, turn_index, date and memory (prefix scoping)",
    )
    fields: dict[str, str] = Field(
        default_factory=dict,
        description="session_key / turn_index / date -> dotted path in an item, for servers"
        " that keep them as fields of their own",
    )

    @model_validator(mode="after")
    def _check(self) -> HitPath:
        unknown = set(self.fields) - PROVENANCE_FIELDS
        if unknown:
            raise ValueError(
                f"fields: unknown {sorted(unknown)} (known: session_key, turn_index, date)"
            )
        if self.name_pattern is not None:
            if self.name is None:
                raise ValueError("name_pattern needs name (the item field it matches)")
            try:
                groups = set(re.compile(self.name_pattern).groupindex)
            except re.error as error:
                raise ValueError(f"name_pattern: {error}") from None
            if groups - PATTERN_GROUPS:
                raise ValueError(
                    f"name_pattern: unknown groups {sorted(groups - PATTERN_GROUPS)}"
                    f" (known: {', '.join(sorted(PATTERN_GROUPS))})"
                )
        return self

    def provides(self, field: str) -> bool:
        """Whether hits can carry `field` (a provenance field or memory)."""
        groups = set(re.compile(self.name_pattern).groupindex) if self.name_pattern else set()
        return field in groups or field in self.fields


def _check_template(where: str, template: Any, allowed: frozenset[str]) -> None:
    unknown = placeholders(template) - allowed
    if unknown:
        names = ", ".join("{" + name + "}" for name in sorted(unknown))
        known = ", ".join("{" + name + "}" for name in sorted(allowed))
        raise ValueError(f"{where}: unknown placeholder {names} (allowed here: {known})")


class McpToolsParams(BackendParams):
    """Any MCP server with tools of its own: which tools store, search, list and delete, and
    how their arguments and results map onto sessions and hits."""

    transport: Literal["stdio", "streamable_http"] = Field(
        default="stdio", description="how to reach the server"
    )
    command: str | None = Field(default=None, description="stdio: the server command")
    args: list[str] = Field(
        default_factory=list, description="stdio: its arguments ({memory}, {data_dir} allowed)"
    )
    env: dict[str, str] = Field(
        default_factory=dict,
        description="stdio: extra environment ({memory}, {data_dir} allowed), e.g."
        " MEMORY_FILE_PATH = '{data_dir}/{memory}.jsonl'",
    )
    url: str | None = Field(
        default=None, description="streamable_http: the endpoint ({memory} allowed)"
    )
    headers: dict[str, str] = Field(
        default_factory=dict, description="streamable_http: headers, no secrets ({memory} allowed)"
    )
    headers_from_env: dict[str, str] = Field(
        default_factory=dict,
        description="streamable_http: header -> environment variable holding its value, or"
        " 'PREFIX VARIABLE', e.g. 'Bearer MY_TOKEN'",
    )
    timeout_s: float = Field(default=60.0, gt=0, description="per tool call")
    memory_scoping: Literal["server-per-memory", "argument", "prefix"] = Field(
        default="server-per-memory",
        description="'server-per-memory': one server (stdio process or URL) per memory, its"
        " env/args/url/headers naming {memory}; 'argument': one server that keeps memories"
        " apart itself, every tool's arguments naming {memory} (a user or namespace id);"
        " 'prefix': one shared server, ingest_args name {memory} and hit_path.name_pattern's"
        " memory group keeps a memory's own hits",
    )
    search_tool: str = Field(description="the tool that searches, e.g. 'search_nodes'")
    search_args: dict[str, Any] = Field(
        default_factory=lambda: {"query": "{query}"},
        description="its arguments: a template with {query}, {k}, {question_date}, {memory}",
    )
    ingest_tool: str = Field(description="the tool that stores, e.g. 'create_entities'")
    ingest_args: dict[str, Any] = Field(
        description="its arguments: a template with {memory}, {session_key}, {date} and per"
        " turn {turn_index}, {role}, {text}, or per session {session_text} ('role: text' lines)"
    )
    ingest_per: Literal["session", "turn"] = Field(
        default="turn", description="one ingest_tool call per session or per non-empty turn"
    )
    hit_path: HitPath = Field(description="how the search tool's result becomes hits")
    list_tool: str | None = Field(
        default=None,
        description="a tool returning everything a memory holds (read through hit_path), e.g."
        " 'read_graph': tells which turns are held (when hit_path reads their session and"
        " turn), and the names delete_args' {names} lists; otherwise the backend keeps its own"
        " record of the calls it completed",
    )
    list_args: dict[str, Any] = Field(
        default_factory=dict, description="its arguments: a template with {memory}"
    )
    delete_tool: str | None = Field(
        default=None, description="the tool that deletes (with it the backend DELETES)"
    )
    delete_args: dict[str, Any] = Field(
        default_factory=dict,
        description="its arguments: a template with {memory} and {names} (every name the"
        " memory holds, from list_tool)",
    )
    agent_tools: list[str] | None = Field(
        default=None,
        description="the server's tools a memory agent may call (default: all of them)",
    )

    @model_validator(mode="after")
    def _check(self) -> McpToolsParams:
        if self.transport == "stdio" and not self.command:
            raise ValueError("transport 'stdio' needs command")
        if self.transport == "streamable_http" and not self.url:
            raise ValueError("transport 'streamable_http' needs url")
        server = (
            [self.command or "", *self.args, self.env]
            if self.transport == "stdio"
            else [self.url or "", self.headers]
        )
        _check_template("server", server, SERVER_VALUES)
        _check_template("search_args", self.search_args, SEARCH_VALUES)
        per = TURN_VALUES if self.ingest_per == "turn" else SESSION_VALUES
        _check_template(f"ingest_args (ingest_per = {self.ingest_per!r})", self.ingest_args, per)
        _check_template("list_args", self.list_args, LIST_VALUES)
        _check_template("delete_args", self.delete_args, DELETE_VALUES)
        if "names" in placeholders(self.delete_args) and not (
            self.list_tool and self.hit_path.name
        ):
            raise ValueError("delete_args {names} needs list_tool and hit_path.name")
        if self.memory_scoping == "server-per-memory" and "memory" not in placeholders(server):
            where = "env or args" if self.transport == "stdio" else "url or headers"
            raise ValueError(
                f"memory_scoping 'server-per-memory' needs {{memory}} in the server's {where}"
                " (e.g. env MEMORY_FILE_PATH = '{data_dir}/{memory}.jsonl'), or memories"
                " would share one store"
            )
        if self.memory_scoping == "argument":
            unnamed = [
                where
                for where, template, used in (
                    ("search_args", self.search_args, True),
                    ("ingest_args", self.ingest_args, True),
                    ("list_args", self.list_args, self.list_tool is not None),
                    ("delete_args", self.delete_args, self.delete_tool is not None),
                )
                if used and "memory" not in placeholders(template)
            ]
            if unnamed:
                raise ValueError(
                    f"memory_scoping 'argument' needs {{memory}} in {', '.join(unnamed)}"
                )
        if self.memory_scoping == "prefix" and not (
            "memory" in placeholders(self.ingest_args) and self.hit_path.provides("memory")
        ):
            raise ValueError(
                "memory_scoping 'prefix' needs {memory} in ingest_args and a memory group in"
                " hit_path.name_pattern"
            )
        return self
