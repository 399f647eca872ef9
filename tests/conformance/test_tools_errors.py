"""Bad calls fail with a message, and the server keeps answering, on every implementation."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.conformance.clients import ToolClient
from tests.conformance.harness import Implementation
from tests.conformance.steps import expect_error, new_memory

CONTEXT_MAX = 65_536


def _cases(vault_id: str, memory_id: str) -> dict[str, tuple[str, dict[str, Any]]]:
    unknown = str(uuid.uuid4())
    ids = dict(vault_id=vault_id, memory_id=memory_id)
    return {
        "unknown memory (search)": ("search_memories", dict(memory_id=unknown, query="x")),
        "unknown memory (list)": ("list_entries", dict(vault_id=vault_id, memory_id=unknown)),
        "unknown entry": ("get_entry", dict(entry_id=unknown, **ids)),
        "missing summary": ("add_entry", dict(raw_entry="hello", **ids)),
        "missing query": ("search_memories", dict(memory_id=memory_id)),
        "top_ke 26": ("search_memories", dict(memory_id=memory_id, query="x", top_ke=26)),
        "top_ke -1": ("search_memories", dict(memory_id=memory_id, query="x", top_ke=-1)),
        "top_kc 0": ("search_memories", dict(memory_id=memory_id, query="x", top_kc=0)),
        "top_kc 11": ("search_memories", dict(memory_id=memory_id, query="x", top_kc=11)),
        "oversize context": ("put_context", dict(content="x" * (CONTEXT_MAX + 1), **ids)),
    }


CASES = list(_cases("v", "m"))


@pytest.mark.parametrize("case", CASES)
def test_bad_call_is_an_error_and_the_server_still_answers(
    tools: Implementation, case: str
) -> None:
    async def scenario(client: ToolClient) -> None:
        vault_id, memory_id = await new_memory(client)
        tool, args = _cases(vault_id, memory_id)[case]
        await expect_error(client, tool, **args)
        assert await client.call("get_context", vault_id=vault_id, memory_id=memory_id)
        listed = await client.call("list_memories", vault_id=vault_id)
        assert [m["memoryId"] for m in listed] == [memory_id]

    tools.run(scenario)


def test_context_at_the_limit_is_accepted(tools: Implementation) -> None:
    async def scenario(client: ToolClient) -> None:
        vault_id, memory_id = await new_memory(client)
        ids = dict(vault_id=vault_id, memory_id=memory_id)
        await client.call("put_context", content="y" * CONTEXT_MAX, **ids)
        await client.call("await_consistency", memory_id=memory_id)
        assert len(await client.call("get_context", **ids)) == CONTEXT_MAX

    tools.run(scenario)
