"""Mycelian's 13 memory tools as plain async methods over the embedded store (no MCP here).

`MemoryService.call(name, arguments)` returns each tool's text result, JSON or a plain word, as
Mycelian's MCP server does; the MCP server (mcp_server.py) only forwards to it.

Decisions where Mycelian leaves room:
- list_entries returns entries newest first. `next_before` (the oldest creationTime on the page)
  pages to older entries and `next_after` (the newest one) to newer entries; each is null when
  nothing lies beyond it. Creation times strictly increase within a memory, so paging with
  either cursor never skips or repeats an entry. An `after` page holds the entries right after
  the time, still listed newest first.
- create_vault and create_memory_in_vault refuse a title that already exists, naming the
  existing id (find existing ones with list_vaults / list_memories).
- Entry summaries are limited to 512 characters (Mycelian's capture rule, also what raw
  ingestion truncates to), so a summary is never silently cut; the error says to shorten it.
  A raw entry is limited to 262,144 characters and its tags to 16,384, so an entry always fits
  the HTTP body limit (4 MiB) and a larger one gets a tool error, not a dropped request.
- Entries are idempotent: one equal to an existing entry (raw text, summary and tags) is
  accepted and not stored twice.
- Writes are queued (add_entry / put_context return `enqueued`), but the answer comes only once
  the write is committed to the store (write_queue.py: group commit), so an acknowledged write
  survives a crash of the server. A write that fails is reported to its caller; one whose caller
  had gone is reported by the next await_consistency for its memory. When the queue is full,
  a write waits for room and then fails with a `server busy` error worth retrying.
- search_memories returns `latestContext` / `latestContextTimestamp` null when the memory has
  no context yet, and adds each entry's `tags`, so hits map back to sessions.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from lme_bench.entries.models import Memory, NewEntry
from lme_bench.reference_memory.store import EmbeddedStore, NotFoundError
from lme_bench.reference_memory.tool_args import (
    CONTEXT_MAX,
    LIST_LIMIT,
    RAW_ENTRY_MAX,
    SUMMARY_MAX,
    TOOL_PARAMS,
    TOP_KC,
    TOP_KE,
    Args,
    ToolError,
)
from lme_bench.reference_memory.tool_results import (
    PROMPT_TYPES,
    default_prompts,
    dumps,
    entry_json,
    memory_json,
)
from lme_bench.reference_memory.write_queue import QueueFullError, Write, WriteQueue

__all__ = ["BUSY", "MemoryService", "ToolError", "default_prompts"]

BUSY = "server busy:"  # starts the error of a write refused because the queue stayed full

log = logging.getLogger(__name__)


class MemoryService:
    TOOL_NAMES: tuple[str, ...] = tuple(TOOL_PARAMS)

    def __init__(self, store: EmbeddedStore, *, queue_writes: bool = True) -> None:
        self.store = store
        self.queue_writes = queue_writes
        self._queue = WriteQueue(store)
        self._vault_of: dict[str, str] = {}  # memory id -> vault id, for memories seen to exist
        self._create_lock = asyncio.Lock()
        self._tools: dict[str, Callable[[Args], Awaitable[str]]] = {
            name: getattr(self, f"_{name}") for name in self.TOOL_NAMES
        }

    async def call(self, name: str, arguments: dict[str, Any]) -> str:
        tool = self._tools.get(name) if isinstance(name, str) else None
        if tool is None:
            raise ToolError(f"unknown tool {name!r}; tools: {', '.join(self.TOOL_NAMES)}")
        try:
            return await tool(Args(name, arguments))
        except NotFoundError as exc:
            raise ToolError(f"{name}: {exc.args[0] if exc.args else 'not found'}") from None

    async def close(self) -> None:
        """Store every queued write; failures nobody collected are logged as errors."""
        for failure in await self._queue.drain():
            log.error("queued write failed and was never reported: %s", failure)

    # -- helpers ---------------------------------------------------------------------------------
    async def _run(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.to_thread(fn, *args)

    async def _memory(self, vault_id: str, memory_id: str) -> None:
        """Raise NotFoundError unless the memory exists in the vault (cached once seen)."""
        if self._vault_of.get(memory_id) != vault_id:
            memory = await self._run(self.store.get_memory, vault_id, memory_id)
            self._vault_of[memory.memory_id] = memory.vault_id

    async def _memory_exists(self, memory_id: str) -> None:
        if memory_id in self._vault_of:
            return

        def scan() -> None:
            for vault in self.store.list_vaults():
                for memory in self.store.list_memories(vault.vault_id):
                    self._vault_of[memory.memory_id] = memory.vault_id

        await self._run(scan)
        if memory_id not in self._vault_of:
            raise NotFoundError(f"memory {memory_id} not found")

    async def _write(self, memory_id: str, write: Write) -> str:
        if self.queue_writes:
            try:
                await self._queue.submit(memory_id, write)
            except QueueFullError as exc:
                what = "put_context" if write.context is not None else "add_entry"
                raise ToolError(f"{what}: {BUSY} {exc}") from None
        elif write.context is not None:
            await self._run(self.store.put_context, memory_id, write.context)
        else:
            await self._run(self.store.add_entries, memory_id, [write.entry])
        return "enqueued"

    # -- vaults and memories ---------------------------------------------------------------------
    async def _create_vault(self, args: Args) -> str:
        title = args.vault_title("title")
        description = args.text("description", "")

        def create() -> dict[str, str]:
            existing = {v.title: v.vault_id for v in self.store.list_vaults()}
            if title in existing:
                raise ToolError(
                    f"create_vault: vault {title!r} already exists (vaultId {existing[title]});"
                    " list_vaults finds existing vaults"
                )
            vault_id = self.store.get_or_create_vault(title, description)
            vault = next(v for v in self.store.list_vaults() if v.vault_id == vault_id)
            return {
                "vaultId": vault.vault_id,
                "title": vault.title,
                "description": vault.description,
                "createdAt": vault.created_at,
            }

        async with self._create_lock:
            return dumps(await self._run(create))

    async def _list_vaults(self, args: Args) -> str:
        vaults = await self._run(self.store.list_vaults)
        return dumps([{"vaultId": v.vault_id, "title": v.title} for v in vaults])

    async def _list_memories(self, args: Args) -> str:
        memories = await self._run(self.store.list_memories, args.ident("vault_id"))
        return dumps([{"memoryId": m.memory_id, "title": m.title} for m in memories])

    async def _get_memory(self, args: Args) -> str:
        memory = await self._run(
            self.store.get_memory, args.ident("vault_id"), args.ident("memory_id")
        )
        return dumps(memory_json(memory))

    async def _create_memory_in_vault(self, args: Args) -> str:
        vault_id = args.ident("vault_id")
        title = args.memory_title("title")
        memory_type = args.memory_type("memory_type")
        description = args.text("description", "")

        def create() -> Memory:
            existing = {m.title: m.memory_id for m in self.store.list_memories(vault_id)}
            if title in existing:
                raise ToolError(
                    f"create_memory_in_vault: memory {title!r} already exists in vault"
                    f" {vault_id} (memoryId {existing[title]}); list_memories finds it"
                )
            memory_id = self.store.get_or_create_memory(vault_id, title, memory_type, description)
            return self.store.get_memory(vault_id, memory_id)

        async with self._create_lock:
            memory = await self._run(create)
        self._vault_of[memory.memory_id] = vault_id
        return dumps(memory_json(memory))

    # -- entries -----------------------------------------------------------------------------------
    async def _add_entry(self, args: Args) -> str:
        vault_id, memory_id = args.ident("vault_id"), args.ident("memory_id")
        raw_entry = args.text("raw_entry")
        if len(raw_entry) > RAW_ENTRY_MAX:
            raise ToolError(
                f"add_entry: parameter 'raw_entry' must be at most {RAW_ENTRY_MAX:,} characters,"
                f" got {len(raw_entry):,}: split the message into several entries"
            )
        summary = args.text("summary")
        if len(summary) > SUMMARY_MAX:
            raise ToolError(
                f"add_entry: parameter 'summary' must be at most {SUMMARY_MAX} characters,"
                f" got {len(summary)}: shorten it and call add_entry again"
            )
        tags = args.tags("tags")
        await self._memory(vault_id, memory_id)
        return await self._write(memory_id, Write(entry=NewEntry(raw_entry, summary, tags)))

    async def _list_entries(self, args: Args) -> str:
        vault_id, memory_id = args.ident("vault_id"), args.ident("memory_id")
        limit = args.integer("limit", LIST_LIMIT)
        before = args.timestamp("before", round_up=True)
        after = args.timestamp("after", round_up=False)
        if before is not None and after is not None:
            raise ToolError("list_entries: give 'before' or 'after', not both")
        await self._memory(vault_id, memory_id)

        def page() -> dict[str, Any]:
            store = self.store
            rows = store.list_entries(memory_id, limit, before=before, after=after)  # oldest first
            older = bool(rows) and bool(
                store.list_entries(memory_id, 1, before=rows[0].creation_time)
            )
            newer = bool(rows) and bool(
                store.list_entries(memory_id, 1, after=rows[-1].creation_time)
            )
            return {
                "entries": [entry_json(entry) for entry in reversed(rows)],
                "count": len(rows),
                "applied_limit": limit,
                "next_before": rows[0].creation_time if older else None,
                "next_after": rows[-1].creation_time if newer else None,
            }

        return dumps(await self._run(page))

    async def _get_entry(self, args: Args) -> str:
        vault_id, memory_id = args.ident("vault_id"), args.ident("memory_id")
        entry_id = args.ident("entry_id")
        await self._memory(vault_id, memory_id)
        entry = await self._run(self.store.get_entry, memory_id, entry_id)
        return dumps(entry_json(entry))

    # -- contexts and consistency ------------------------------------------------------------------
    async def _put_context(self, args: Args) -> str:
        vault_id, memory_id = args.ident("vault_id"), args.ident("memory_id")
        content = args.text("content", max_len=CONTEXT_MAX)
        await self._memory(vault_id, memory_id)
        return await self._write(memory_id, Write(context=content))

    async def _get_context(self, args: Args) -> str:
        vault_id, memory_id = args.ident("vault_id"), args.ident("memory_id")
        await self._memory(vault_id, memory_id)
        latest = await self._run(self.store.latest_context, memory_id)
        return "context not found" if latest is None else str(latest[0])

    async def _await_consistency(self, args: Args) -> str:
        memory_id = args.ident("memory_id")
        failures = await self._queue.wait(memory_id)
        if failures:
            raise ToolError(
                f"await_consistency: writes for memory {memory_id} failed: " + "; ".join(failures)
            )
        await self._memory_exists(memory_id)
        return "consistent"

    # -- search and prompts ----------------------------------------------------------------------
    async def _search_memories(self, args: Args) -> str:
        memory_id = args.ident("memory_id")
        query = args.text("query")
        top_ke = args.integer("top_ke", TOP_KE)
        top_kc = args.integer("top_kc", TOP_KC)
        include_raw = args.flag("include_raw_entries", False)
        result = await self._run(self.store.search, memory_id, query, top_ke, top_kc, include_raw)
        entries = []
        for hit in result.entries:
            item: dict[str, Any] = {"entryId": hit.entry_id, "summary": hit.summary}
            if include_raw:
                item["rawEntry"] = hit.raw_entry
            item.update(score=hit.score, creationTime=hit.creation_time, tags=hit.tags)
            entries.append(item)
        return dumps(
            {
                "entries": entries,
                "count": len(entries),
                "latestContext": result.latest_context,
                "latestContextTimestamp": result.latest_context_timestamp,
                "contexts": [
                    {"context": c.context, "timestamp": c.timestamp, "score": c.score}
                    for c in result.contexts
                ],
            }
        )

    async def _get_default_prompts(self, args: Args) -> str:
        memory_type = args.text("memory_type", "chat").strip().lower()
        if memory_type not in PROMPT_TYPES:
            raise ToolError(
                f"get_default_prompts: unknown memory_type {memory_type!r};"
                f" supported: {', '.join(PROMPT_TYPES)}"
            )
        return dumps(default_prompts(memory_type))
