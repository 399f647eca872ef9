"""The `mcp` backend's store: the EntryMemory protocol over any MCP server with Mycelian's tools.

Works with our own server (`lme-bench memory serve`) and with a real Mycelian server, over stdio or
streamable HTTP, through one persistent session per backend instance (mcp_session.py).

Limits that come from the tool surface, not from this class:
- `search_memories` returns at most 25 entries (`top_ke` 0 to 25) and 1 to 10 context snapshots, so
  `search(top_ke=1000)` yields 25 entries: retrieval metrics at @30 and @50 are then bounded by
  what the first 25 entries hold (user and assistant turns alike), and are not comparable with an
  embedded run that ranks the whole memory. Compare @1..@10, or rank 25 on both sides.
- `top_kc=0` is sent as 1 (the tool's minimum) and the snapshots are dropped from the result.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from lme_bench.backends.mcp_session import McpSession, McpToolError, parse_text
from lme_bench.config.settings import McpSettings
from lme_bench.entries.models import ContextHit, Entry, EntryHit, NewEntry, SearchResult

CONTEXT_NOT_FOUND = "context not found"
MAX_TOP_KE = 25
MAX_TOP_KC = 10
PAGE_LIMIT = 50


def _tags(value: Any) -> dict[str, str] | None:
    """Tags as the harness wrote them: an object of strings (some servers send a JSON string)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    if not isinstance(value, dict):
        return None
    return {str(key): str(item) for key, item in value.items()}


def _context_hits(found: dict[str, Any]) -> list[ContextHit]:
    """Snapshots from the current shape (`contexts`) or the older one (`bestContext`)."""
    hits = []
    for item in found.get("contexts") or []:
        hits.append(
            ContextHit(
                str(item.get("context", "")),
                str(item.get("timestamp") or ""),
                float(item.get("score") or 0.0),
            )
        )
    best = found.get("bestContext")
    if not hits and best:
        if isinstance(best, dict):
            text = str(best.get("context") or best.get("content") or "")
            hits.append(
                ContextHit(text, str(best.get("timestamp") or ""), float(best.get("score") or 0.0))
            )
        else:
            hits.append(ContextHit(str(best), str(found.get("latestContextTimestamp") or ""), 0.0))
    return hits


class McpEntryStore:
    """EntryMemory over MCP. Ids the protocol leaves out (vault of a memory) are looked up."""

    name = "mcp"

    def __init__(self, settings: McpSettings) -> None:
        self.session = McpSession(settings)
        self._vault_of: dict[str, str] = {}
        self._entries: dict[str, tuple[dict[str, str], str | None]] = {}  # get_entry cache

    @property
    def server(self) -> str:
        return self.session.server

    async def _call(self, tool: str, **arguments: Any) -> Any:
        return parse_text(await self.session.call(tool, arguments))

    async def _json(self, tool: str, **arguments: Any) -> Any:
        text = await self.session.call(tool, arguments)
        try:
            return json.loads(text)
        except ValueError:
            raise McpToolError(tool, self.server, f"expected JSON, got {text[:200]!r}") from None

    # -- vaults and memories -----------------------------------------------------------------
    async def _find(self, tool: str, title: str, key: str, **arguments: Any) -> str | None:
        listed = await self._json(tool, **arguments)
        for item in listed if isinstance(listed, list) else []:
            if item.get("title") == title:
                return str(item[key])
        return None

    async def get_or_create_vault(self, title: str, description: str = "") -> str:
        found = await self._find("list_vaults", title, "vaultId")
        if found:
            return found
        args = {"title": title, **({"description": description} if description else {})}
        try:
            return str((await self._json("create_vault", **args))["vaultId"])
        except McpToolError:
            found = await self._find("list_vaults", title, "vaultId")  # created meanwhile?
            if found:
                return found
            raise

    async def get_or_create_memory(
        self, vault_id: str, title: str, memory_type: str = "CHAT", description: str = ""
    ) -> str:
        memory_id = await self._find("list_memories", title, "memoryId", vault_id=vault_id)
        if memory_id is None:
            args = {"vault_id": vault_id, "title": title, "memory_type": memory_type}
            if description:
                args["description"] = description
            try:
                memory_id = str((await self._json("create_memory_in_vault", **args))["memoryId"])
            except McpToolError:
                memory_id = await self._find("list_memories", title, "memoryId", vault_id=vault_id)
                if memory_id is None:
                    raise
        self._vault_of[memory_id] = vault_id
        return memory_id

    async def _vault(self, memory_id: str) -> str:
        """The vault holding a memory (remembered, else found by listing every vault)."""
        if memory_id not in self._vault_of:
            for vault in await self._json("list_vaults"):
                vault_id = str(vault["vaultId"])
                for memory in await self._json("list_memories", vault_id=vault_id):
                    self._vault_of[str(memory["memoryId"])] = vault_id
        if memory_id not in self._vault_of:
            raise McpToolError("list_memories", self.server, f"memory {memory_id} not found")
        return self._vault_of[memory_id]

    # -- writes ------------------------------------------------------------------------------
    async def add_entries(self, vault_id: str, memory_id: str, entries: Sequence[NewEntry]) -> None:
        self._vault_of[memory_id] = vault_id
        for entry in entries:  # in order: creation times follow the conversation
            await self._call(
                "add_entry",
                vault_id=vault_id,
                memory_id=memory_id,
                raw_entry=entry.raw_entry,
                summary=entry.summary,
                tags=dict(entry.tags),
            )

    async def put_context(self, vault_id: str, memory_id: str, content: str) -> None:
        self._vault_of[memory_id] = vault_id
        await self._call("put_context", vault_id=vault_id, memory_id=memory_id, content=content)

    async def await_consistency(self, memory_id: str) -> None:
        await self._call("await_consistency", memory_id=memory_id)

    async def get_context(self, vault_id: str, memory_id: str) -> str | None:
        self._vault_of[memory_id] = vault_id
        text = await self._call("get_context", vault_id=vault_id, memory_id=memory_id)
        text = text if isinstance(text, str) else json.dumps(text)
        return None if not text.strip() or text.strip() == CONTEXT_NOT_FOUND else text

    async def recent_entries(self, vault_id: str, memory_id: str, limit: int) -> list[Entry]:
        """The newest entries (one list_entries page, at most 50), oldest first."""
        self._vault_of[memory_id] = vault_id
        page = await self._json(
            "list_entries", vault_id=vault_id, memory_id=memory_id, limit=min(limit, PAGE_LIMIT)
        )
        entries = [
            Entry(
                entry_id=str(item.get("entryId", "")),
                memory_id=memory_id,
                raw_entry=str(item.get("rawEntry") or ""),
                summary=str(item.get("summary") or ""),
                tags=_tags(item.get("tags")) or {},
                creation_time=str(item.get("creationTime") or ""),
            )
            for item in page.get("entries") or []
        ]
        return sorted(entries, key=lambda e: e.creation_time)

    async def default_prompts(self, memory_type: str = "chat") -> dict[str, Any] | None:
        """The server's prompts, or None when it has no get_default_prompts tool or it fails."""
        try:
            found = await self._json("get_default_prompts", memory_type=memory_type)
        except McpToolError:
            return None
        return found if isinstance(found, dict) else None

    async def _every_entry(self, memory_id: str) -> dict[str, dict[str, Any]]:
        """Every entry by id: list_entries pages (newest first, 50 a page) until a page brings
        nothing new."""
        vault_id = await self._vault(memory_id)
        seen: dict[str, dict[str, Any]] = {}
        cursor: dict[str, str] = {}
        while True:
            page = await self._json(
                "list_entries", vault_id=vault_id, memory_id=memory_id, limit=PAGE_LIMIT, **cursor
            )
            items = {str(entry["entryId"]): entry for entry in page.get("entries") or []}
            if not items.keys() - seen.keys():
                return seen
            seen |= items
            if len(items) < PAGE_LIMIT or not page.get("next_before"):
                return seen
            cursor = {"before": str(page["next_before"])}

    async def count_entries(self, memory_id: str) -> int:
        return len(await self._every_entry(memory_id))

    async def entry_tags(self, vault_id: str, memory_id: str) -> list[dict[str, str]]:
        """Tags from list_entries, or from get_entry for a server whose listing has none."""
        self._vault_of[memory_id] = vault_id
        found = []
        for entry_id, entry in (await self._every_entry(memory_id)).items():
            tags = _tags(entry.get("tags"))
            if tags is None:
                fetched = await self._json(
                    "get_entry", vault_id=vault_id, memory_id=memory_id, entry_id=entry_id
                )
                tags = _tags(fetched.get("tags")) or {}
            found.append(tags)
        return found

    # -- search ------------------------------------------------------------------------------
    def _has_param(self, tool: str, name: str) -> bool:
        schema = self.session.input_schemas.get(tool, {})
        return name in (schema.get("properties") or {})

    async def search(
        self, memory_id: str, query: str, *, top_ke: int, top_kc: int = 2
    ) -> SearchResult:
        """search_memories, best first; `top_ke` is capped at 25 (see the module docstring)."""
        await self.session.open()  # the tool schemas tell which shape the server speaks
        top_ke = max(0, min(top_ke, MAX_TOP_KE))
        args: dict[str, Any] = {"memory_id": memory_id, "query": query}
        if self._has_param("search_memories", "top_ke"):
            args.update(top_ke=top_ke, top_kc=max(1, min(top_kc, MAX_TOP_KC)))
        else:  # the older surface: one top_k, entries + bestContext
            args["top_k"] = max(1, top_ke)
        if self._has_param("search_memories", "include_raw_entries"):
            args["include_raw_entries"] = True
        found = await self._json("search_memories", **args)
        items = (found.get("entries") or [])[:top_ke]  # an older server may send more
        return SearchResult(
            entries=[await self._hit(memory_id, item) for item in items],
            contexts=_context_hits(found) if top_kc > 0 else [],
            latest_context=found.get("latestContext") or None,
            latest_context_timestamp=found.get("latestContextTimestamp") or None,
        )

    async def _hit(self, memory_id: str, item: dict[str, Any]) -> EntryHit:
        entry_id = str(item["entryId"])
        tags = _tags(item.get("tags"))
        raw = item.get("rawEntry")
        if tags is None:  # a server that does not return tags in search results
            if entry_id not in self._entries:
                entry = await self._json(
                    "get_entry",
                    vault_id=await self._vault(memory_id),
                    memory_id=memory_id,
                    entry_id=entry_id,
                )
                stored = entry.get("rawEntry")
                self._entries[entry_id] = (
                    _tags(entry.get("tags")) or {},
                    None if stored is None else str(stored),
                )
            tags, stored_raw = self._entries[entry_id]
            raw = raw if raw is not None else stored_raw
        return EntryHit(
            entry_id=entry_id,
            summary=str(item.get("summary") or ""),
            raw_entry=None if raw is None else str(raw),
            score=float(item.get("score") or 0.0),
            creation_time=str(item.get("creationTime") or ""),
            tags=tags,
        )

    async def close(self) -> None:
        await self.session.close()
