"""Small tool-level steps the conformance tests share."""

from __future__ import annotations

from typing import Any

from tests.conformance.clients import ToolCallError, ToolClient
from tests.conformance.harness import RUN_ID, unique_title


async def get_or_create_vault(client: ToolClient, title: str) -> str:
    for vault in await client.call("list_vaults"):
        if vault["title"] == title:
            return str(vault["vaultId"])
    return str((await client.call("create_vault", title=title))["vaultId"])


async def new_memory(client: ToolClient, question_id: str = "q1") -> tuple[str, str]:
    """A fresh vault with one memory titled `{question_id}__{run_id}`: (vault_id, memory_id)."""
    vault_id = await get_or_create_vault(client, unique_title())
    memory = await client.call(
        "create_memory_in_vault",
        vault_id=vault_id,
        title=f"{question_id}__{RUN_ID}",
        memory_type="CHAT",
    )
    return vault_id, str(memory["memoryId"])


async def add(client: ToolClient, vault_id: str, memory_id: str, text: str, **tags: str) -> None:
    reply = await client.call(
        "add_entry",
        vault_id=vault_id,
        memory_id=memory_id,
        raw_entry=text,
        summary=text[:200],
        tags=tags,
    )
    assert reply == "enqueued"


async def all_entries(
    client: ToolClient, vault_id: str, memory_id: str, limit: int = 50
) -> list[dict[str, Any]]:
    """Every entry, paging with the `before` cursor."""
    found: list[dict[str, Any]] = []
    cursor: dict[str, str] = {}
    while True:
        page = await client.call(
            "list_entries", vault_id=vault_id, memory_id=memory_id, limit=limit, **cursor
        )
        found += page["entries"]
        if not page["entries"] or not page.get("next_before"):
            return found
        cursor = {"before": page["next_before"]}


async def expect_error(client: ToolClient, tool: str, **args: Any) -> str:
    """The tool must fail with a message; returns the message."""
    try:
        await client.call(tool, **args)
    except ToolCallError as exc:
        assert exc.message.strip(), f"{tool} failed without a message"
        return exc.message
    raise AssertionError(f"{tool}({args}) succeeded; expected an error")
