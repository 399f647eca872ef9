"""`mcp-tools`: any MCP server with memory tools of its own, as a `MemorySystem`.

The tools, their argument templates and the way results become hits are all parameters
(lme_bench/backends/mcp_tools_params.py), so raw ingestion needs no model: each session or
turn becomes one call of the ingest tool, filled in from the protocol's values only. configs/
mcp-knowledge-graph.toml sets it up for `@modelcontextprotocol/server-memory`.

- Isolation: 'server-per-memory' starts one server per memory (stdio) or talks to one URL per
  memory; with server-memory, whose only store is its MEMORY_FILE_PATH, that is the one real
  isolation. 'argument' suits servers that keep memories apart by an argument of every tool (a
  user id). 'prefix' shares a server and keeps the hits whose name carries the memory: the
  server itself still returns, and an agent could still write to, other memories' items.
- Ranking: hits come in the server's order, scored by rank (1, 1/2, 1/3 ...). Servers such as
  server-memory do not rank at all (search_nodes is a substring match of the whole query).
- Provenance: exact when the item's name (or a field) carries the session key the backend
  wrote; items the backend did not write (an agent's) carry none.
- Usage: always zero: the backend makes no model calls and the server makes none it reports.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, ClassVar

from langchain_mcp_adapters.interceptors import MCPToolCallRequest, MCPToolCallResult
from mcp.types import CallToolResult, TextContent

from lme_bench.backends.mcp_session import McpSession, McpToolError, parse_text
from lme_bench.backends.mcp_tools_params import (
    HitPath,
    McpToolsParams,
    dig,
    placeholders,
    render,
)
from lme_bench.backends.protocol import (
    BackendEnv,
    BackendParams,
    Capability,
    Hit,
    Session,
    Turn,
    Usage,
)
from lme_bench.config.settings import McpSettings

_SAFE_ID = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
HeldUnit = tuple[str, int | None]  # (session key, turn index or None per session)


def memory_id_for(title: str) -> str:
    """The title itself when it is safe in a file name and a URL, else a digest of it."""
    if _SAFE_ID.fullmatch(title):
        return title
    return "m-" + hashlib.sha256(title.encode()).hexdigest()[:40]


def offered(params: McpToolsParams) -> frozenset[Capability]:
    """What a configuration truly gives."""
    found: set[Capability] = set()
    if params.hit_path.provides("session_key"):
        found.add(Capability.PROVENANCE)
        if params.ingest_per == "turn" and params.hit_path.provides("turn_index"):
            found.add(Capability.TURN_PROVENANCE)
    if params.delete_tool:
        found.add(Capability.DELETES)
    if params.memory_scoping == "server-per-memory":
        found.add(Capability.AGENT_TOOLS)  # on a shared server an agent reaches every memory
    return frozenset(found)


def server_settings(params: McpToolsParams, memory_id: str, data_dir: Path) -> McpSettings:
    values = {"memory": memory_id, "data_dir": str(data_dir)}
    return McpSettings(
        transport=params.transport,
        command=params.command,
        args=render(params.args, values),
        env=render(params.env, values),
        url=render(params.url, values) if params.url else None,
        headers=render(params.headers, values),
        headers_from_env=params.headers_from_env,
        timeout_s=params.timeout_s,
    )


def _line(turn: Turn) -> str:
    """ "role: text", or for a named speaker (LoCoMo's text starts with the name) the text."""
    if turn.speaker is None:
        return f"{turn.role}: {turn.content}"
    said = turn.content.startswith(f"{turn.speaker}:")
    return turn.content if said else f"{turn.speaker}: {turn.content}"


def session_text(turns: list[Turn]) -> str:
    return "\n".join(_line(turn) for turn in turns)


def ingest_calls(
    params: McpToolsParams, memory_id: str, session: Session
) -> list[tuple[HeldUnit, dict[str, Any]]]:
    """(what the call stores, the ingest tool's arguments), one per session or non-empty turn."""
    turns = [turn for turn in session.turns if turn.content.strip()]
    base = {"memory": memory_id, "session_key": session.key, "date": session.date}
    if params.ingest_per == "session":
        if not turns:
            return []
        values = {**base, "session_text": session_text(turns)}
        return [((session.key, None), render(params.ingest_args, values))]
    return [
        (
            (session.key, turn.index),
            render(
                params.ingest_args,
                {**base, "turn_index": turn.index, "role": turn.role, "text": turn.content},
            ),
        )
        for turn in turns
    ]


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(_as_text(item) for item in value)
    return "" if value is None else json.dumps(value, ensure_ascii=False)


class Item:
    """One item of a tool's result, read through the hit_path rules."""

    def __init__(self, data: Any, rules: HitPath) -> None:
        self.text = _as_text(dig(data, rules.text))
        name = dig(data, rules.name) if rules.name else None
        self.name = name if isinstance(name, str) else None
        found: dict[str, str] = {}
        if rules.name_pattern and self.name is not None:
            match = re.fullmatch(rules.name_pattern, self.name)
            if match:
                found = {k: v for k, v in match.groupdict().items() if v is not None}
        for field, path in rules.fields.items():
            value = dig(data, path)
            if value is not None:
                found[field] = str(value)
        self.memory = found.get("memory")
        self.session_key = found.get("session_key")
        self.date = found.get("date")
        index = found.get("turn_index", "")
        self.turn_index = int(index) if index.isdigit() else None

    def hit(self, rank: int) -> Hit:
        return Hit(
            text=self.text,
            score=1.0 / (1 + rank),
            date=self.date,
            session_key=self.session_key,
            turn_index=self.turn_index,
        )


class _ThroughSession:
    """Sends an agent's tool call through the backend's McpSession (text results)."""

    def __init__(self, session: McpSession) -> None:
        self.session = session

    async def __call__(
        self,
        request: MCPToolCallRequest,
        handler: Callable[[MCPToolCallRequest], Awaitable[MCPToolCallResult]],
    ) -> MCPToolCallResult:
        try:
            text = await self.session.call(request.name, request.args)
        except McpToolError as error:
            return CallToolResult(
                content=[TextContent(type="text", text=error.message)], isError=True
            )
        return CallToolResult(content=[TextContent(type="text", text=text)])


class McpToolsSystem:
    """A memory system made of an MCP server's own tools ([memory.params]: McpToolsParams)."""

    Params: ClassVar[type[BackendParams]] = McpToolsParams
    name: ClassVar[str] = "mcp-tools"
    # What some configuration offers; an instance's `capabilities` is what its own offers.
    capabilities: ClassVar[frozenset[Capability]] = frozenset(
        {
            Capability.PROVENANCE,
            Capability.TURN_PROVENANCE,
            Capability.DELETES,
            Capability.AGENT_TOOLS,
        }
    )

    def __init__(self, params: BackendParams, env: BackendEnv) -> None:
        if not isinstance(params, McpToolsParams):
            raise TypeError(f"{self.name} takes McpToolsParams, not {type(params).__name__}")
        self.params = params
        self.env = env
        vars(self)["capabilities"] = offered(params)  # shadows the class's upper bound
        self._sessions: dict[str, McpSession] = {}
        self._held: dict[str, set[HeldUnit]] = {}
        self._ledger_dir = env.data_dir / "mcp-tools-held"

    def _session(self, memory_id: str) -> McpSession:
        key = memory_id if self.params.memory_scoping == "server-per-memory" else ""
        if key not in self._sessions:
            settings = server_settings(self.params, memory_id, self.env.data_dir)
            self._sessions[key] = McpSession(settings)
        return self._sessions[key]

    async def _items(self, memory_id: str, tool: str, arguments: dict[str, Any]) -> list[Item]:
        """The result's items that belong to the memory (under 'prefix': those naming it)."""
        session = self._session(memory_id)
        result = parse_text(await session.call(tool, arguments))
        found = dig(result, self.params.hit_path.items)
        if not isinstance(found, list):
            where = self.params.hit_path.items or "the top level"
            raise McpToolError(tool, session.server, f"no list of items at {where}")
        items = [Item(data, self.params.hit_path) for data in found]
        if self.params.memory_scoping == "prefix":
            items = [item for item in items if item.memory == memory_id]
        return items

    async def _list(self, memory_id: str) -> list[Item]:
        assert self.params.list_tool is not None
        arguments = render(self.params.list_args, {"memory": memory_id})
        return await self._items(memory_id, self.params.list_tool, arguments)

    def _ledger(self, memory_id: str) -> Path:
        return self._ledger_dir / f"{memory_id}.jsonl"

    @property
    def _server_tells_held(self) -> bool:
        """Whether list_tool's items name the session (and turn) each call stored."""
        rules, per_turn = self.params.hit_path, self.params.ingest_per == "turn"
        return bool(self.params.list_tool) and (
            rules.provides("session_key") and (rules.provides("turn_index") or not per_turn)
        )

    async def _held_units(self, memory_id: str) -> set[HeldUnit]:
        """What the memory already holds: from list_tool (the server's own names) where it
        tells, else from the backend's record of the calls it completed (cut off between a
        call and its record, that one call is sent again)."""
        if memory_id in self._held:
            return self._held[memory_id]
        held: set[HeldUnit] = set()
        per_turn = self.params.ingest_per == "turn"
        if self._server_tells_held:
            for item in await self._list(memory_id):
                if item.session_key is not None and (item.turn_index is not None or not per_turn):
                    held.add((item.session_key, item.turn_index if per_turn else None))
        elif self._ledger(memory_id).exists():
            for line in self._ledger(memory_id).read_text(encoding="utf-8").splitlines():
                key, index = json.loads(line)
                held.add((key, index))
        self._held[memory_id] = held
        return held

    def _record(self, memory_id: str, unit: HeldUnit) -> None:
        self._held[memory_id].add(unit)
        if not self._server_tells_held:
            self._ledger_dir.mkdir(parents=True, exist_ok=True)
            with self._ledger(memory_id).open("a", encoding="utf-8") as ledger:
                ledger.write(json.dumps(list(unit)) + "\n")

    async def open_memory(self, title: str) -> str:
        memory_id = memory_id_for(title)
        await self._session(memory_id).open()  # starts the memory's server, or reaches it
        return memory_id

    async def ingest_session(self, memory_id: str, session: Session) -> None:
        held = await self._held_units(memory_id)
        tool = self.params.ingest_tool
        for unit, arguments in ingest_calls(self.params, memory_id, session):
            if unit not in held:
                await self._session(memory_id).call(tool, arguments)
                self._record(memory_id, unit)

    async def wait_until_ready(self, memory_id: str) -> None:
        await self._session(memory_id).open()  # the tools answer once the write is done

    async def search(self, memory_id: str, query: str, *, question_date: str, k: int) -> list[Hit]:
        values = {"query": query, "k": k, "question_date": question_date, "memory": memory_id}
        arguments = render(self.params.search_args, values)
        items = await self._items(memory_id, self.params.search_tool, arguments)
        return [item.hit(rank) for rank, item in enumerate(items[:k])]

    async def delete_memory(self, memory_id: str) -> None:
        if not self.params.delete_tool:
            raise NotImplementedError(f"{self.name}: no delete_tool in [memory.params]")
        values: dict[str, Any] = {"memory": memory_id}
        if "names" in placeholders(self.params.delete_args):
            values["names"] = [item.name for item in await self._list(memory_id) if item.name]
        if values.get("names") != []:  # an empty memory needs no call
            await self._session(memory_id).call(
                self.params.delete_tool, render(self.params.delete_args, values)
            )
        self._forget(memory_id)

    def _forget(self, memory_id: str) -> None:
        self._held.pop(memory_id, None)
        self._ledger(memory_id).unlink(missing_ok=True)

    async def agent_tools(self, memory_id: str) -> list[Any]:
        """The memory server's own tools as LangChain tools, for an LLM memory agent. Their
        calls go through the memory's session as the backend's own do (timeout_s; a lost
        server raises MemoryConnectionError); a tool's error is the call's result, marked as
        an error, for the agent to read."""
        if Capability.AGENT_TOOLS not in offered(self.params):
            raise NotImplementedError(
                f"{self.name}: under memory_scoping {self.params.memory_scoping!r} an agent's"
                " tools would reach every memory on the server"
            )
        from langchain_mcp_adapters.tools import load_mcp_tools

        session = self._session(memory_id)
        tools = await load_mcp_tools(
            await session.open("agent tools"),
            server_name="memory",
            tool_interceptors=[_ThroughSession(session)],
        )
        allowed = self.params.agent_tools
        return [tool for tool in tools if allowed is None or tool.name in allowed]

    def usage(self) -> Usage:
        return Usage()  # no model calls here, and the server reports none

    async def close(self) -> None:
        sessions, self._sessions = list(self._sessions.values()), {}
        for session in sessions:
            await session.close()
