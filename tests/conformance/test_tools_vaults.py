"""Vaults, memories and default prompts, on every implementation of the memory tools."""

from __future__ import annotations

from tests.conformance.clients import ToolClient
from tests.conformance.harness import RUN_ID, Implementation, unique_title
from tests.conformance.steps import expect_error, get_or_create_vault


def test_vault_get_or_create(tools: Implementation) -> None:
    title = unique_title()

    async def scenario(client: ToolClient) -> None:
        assert title not in {v["title"] for v in await client.call("list_vaults")}
        created = await client.call("create_vault", title=title, description="conformance")
        assert created["title"] == title and created["vaultId"]
        listed = {v["title"]: v["vaultId"] for v in await client.call("list_vaults")}
        assert listed[title] == created["vaultId"]
        assert await get_or_create_vault(client, title) == created["vaultId"]
        message = await expect_error(client, "create_vault", title=title)
        assert title in message or "exist" in message.lower()
        await expect_error(client, "create_vault", title="Not A Valid Title!")

    tools.run(scenario)


def test_one_memory_per_question(tools: Implementation) -> None:
    async def scenario(client: ToolClient) -> None:
        vault_id = await get_or_create_vault(client, unique_title())
        assert await client.call("list_memories", vault_id=vault_id) == []
        ids = {}
        for question_id in ("q1", "q2_abs"):
            title = f"{question_id}__{RUN_ID}"
            memory = await client.call(
                "create_memory_in_vault",
                vault_id=vault_id,
                title=title,
                memory_type="CHAT",
                description="one question",
            )
            assert memory["title"] == title and memory["vaultId"] == vault_id
            assert memory["memoryType"].upper() == "CHAT"
            assert {"memoryId", "description", "createdAt"} <= set(memory)
            ids[title] = memory["memoryId"]
        listed = await client.call("list_memories", vault_id=vault_id)
        assert {m["title"]: m["memoryId"] for m in listed} == ids
        memory_id = ids[f"q1__{RUN_ID}"]
        fetched = await client.call("get_memory", vault_id=vault_id, memory_id=memory_id)
        assert (fetched["memoryId"], fetched["title"]) == (memory_id, f"q1__{RUN_ID}")
        await expect_error(
            client,
            "create_memory_in_vault",
            vault_id=vault_id,
            title=f"q1__{RUN_ID}",
            memory_type="CHAT",
        )

    tools.run(scenario)


def test_default_prompts_shape(tools: Implementation) -> None:
    async def scenario(client: ToolClient) -> None:
        prompts = await client.call("get_default_prompts", memory_type="chat")
        assert prompts["version"]
        assert isinstance(prompts["context_summary_rules"], str)
        templates = prompts["templates"]
        assert {"context_prompt", "entry_capture_prompt", "summary_prompt"} <= set(templates)
        assert all(isinstance(text, str) and text.strip() for text in templates.values())

    tools.run(scenario)
