"""The `mcp` backend's mapping onto Mycelian's tools, against a scripted session (no server):
the older search shape, tags fetched with get_entry, paging, limits, and config handling."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from lme_bench.backends.entry_system import open_entry_store
from lme_bench.backends.mcp_session import McpToolError, connection_config, describe_server
from lme_bench.backends.mycelian_mcp import McpEntryStore
from lme_bench.common.secrets import redact_secrets, secret_env_names
from lme_bench.config.settings import ConfigError, McpSettings, load_settings
from lme_bench.run.transient import is_transient


class ScriptedSession:
    """Answers tool calls from a table of handlers and records every call."""

    server = "scripted"

    def __init__(self, search_params: list[str], **handlers: Any) -> None:
        self.input_schemas = {"search_memories": {"properties": {key: {} for key in search_params}}}
        self.handlers = handlers
        self.calls: list[tuple[str, dict[str, Any]]] = []

    async def open(self) -> None:
        return None

    async def call(self, tool: str, arguments: dict[str, Any]) -> str:
        self.calls.append((tool, arguments))
        reply = self.handlers[tool](**arguments)
        return reply if isinstance(reply, str) else json.dumps(reply)

    async def close(self) -> None:
        return None


def _backend(session: ScriptedSession) -> McpEntryStore:
    backend = McpEntryStore(McpSettings(url="http://memory.invalid/mcp"))
    backend.session = session  # type: ignore[assignment]
    return backend


def _vaults(**_: Any) -> list[dict[str, str]]:
    return [{"vaultId": "v1", "title": "lme"}]


def _memories(**_: Any) -> list[dict[str, str]]:
    return [{"memoryId": "m1", "title": "q__r"}]


def test_older_search_shape_and_tags_from_get_entry() -> None:
    def search(**args: Any) -> dict[str, Any]:
        assert args == {"memory_id": "m1", "query": "dog", "top_k": 25}
        entries = [{"entryId": f"e{n}", "summary": f"s{n}", "score": 1.0 / (n + 1)} for n in (0, 1)]
        return {"entries": entries, "bestContext": "the context"}

    def get_entry(**args: Any) -> dict[str, Any]:
        assert args["vault_id"] == "v1"
        return {"entryId": args["entry_id"], "rawEntry": "raw", "tags": {"session_key": "s7"}}

    session = ScriptedSession(
        ["memory_id", "query", "top_k"],
        search_memories=search,
        get_entry=get_entry,
        list_vaults=_vaults,
        list_memories=_memories,
    )
    backend = _backend(session)
    for _ in range(2):
        found = asyncio.run(backend.search("m1", "dog", top_ke=1000))
        assert [h.tags for h in found.entries] == [{"session_key": "s7"}] * 2
        assert [h.raw_entry for h in found.entries] == ["raw", "raw"]
        assert [c.context for c in found.contexts] == ["the context"]
    assert [tool for tool, _ in session.calls].count("get_entry") == 2  # cached per entry id


def test_current_shape_clamps_limits_and_drops_unwanted_contexts() -> None:
    def search(**args: Any) -> dict[str, Any]:
        assert (args["top_ke"], args["top_kc"], args["include_raw_entries"]) == (25, 1, True)
        return {
            "entries": [
                {
                    "entryId": "e1",
                    "summary": "s",
                    "rawEntry": "r",
                    "score": 2.5,
                    "creationTime": "t",
                    "tags": {"turn_index": "3"},
                }
            ],
            "count": 1,
            "latestContext": "latest",
            "latestContextTimestamp": "t2",
            "contexts": [{"context": "c", "timestamp": "t1", "score": 0.5}],
        }

    params = ["memory_id", "query", "top_ke", "top_kc", "include_raw_entries"]
    backend = _backend(ScriptedSession(params, search_memories=search))
    found = asyncio.run(backend.search("m1", "q", top_ke=1000, top_kc=0))
    assert found.entries[0].tags == {"turn_index": "3"} and found.entries[0].score == 2.5
    assert found.contexts == [] and found.latest_context == "latest"


def test_count_pages_with_the_before_cursor() -> None:
    entries = [{"entryId": f"e{n}"} for n in range(120)]

    def list_entries(**args: Any) -> dict[str, Any]:
        assert args["limit"] == 50
        end = int(args.get("before", 120))
        page = entries[max(0, end - 50) : end]
        older = end - 50 > 0
        return {
            "entries": page,
            "count": len(page),
            "next_before": str(end - 50) if older else None,
        }

    session = ScriptedSession(
        [], list_entries=list_entries, list_vaults=_vaults, list_memories=_memories
    )
    assert asyncio.run(_backend(session).count_entries("m1")) == 120
    assert len(session.calls) == 2 + 3  # find the vault, then three pages


def test_entry_tags_page_through_every_entry_and_fetch_tags_a_listing_lacks() -> None:
    def tags(n: int) -> dict[str, str]:
        return {"session_key": f"s{n // 10:03d}", "turn_index": str(n % 10)}

    # A server that lists tags as a JSON string for most entries and leaves them out for some.
    entries = [
        {"entryId": f"e{n}", **({} if n % 40 == 0 else {"tags": json.dumps(tags(n))})}
        for n in range(120)
    ]

    def list_entries(**args: Any) -> dict[str, Any]:
        assert args["vault_id"] == "v1" and args["limit"] == 50
        end = int(args.get("before", 120))
        return {
            "entries": entries[max(0, end - 50) : end][::-1],  # newest first
            "next_before": str(end - 50) if end > 50 else None,
        }

    def get_entry(**args: Any) -> dict[str, Any]:
        return {"entryId": args["entry_id"], "tags": tags(int(args["entry_id"][1:]))}

    session = ScriptedSession([], list_entries=list_entries, get_entry=get_entry)
    found = asyncio.run(_backend(session).entry_tags("v1", "m1"))
    assert sorted(found, key=lambda t: (t["session_key"], t["turn_index"])) == [
        tags(n) for n in range(120)
    ]
    fetched = [args["entry_id"] for tool, args in session.calls if tool == "get_entry"]
    assert sorted(fetched) == ["e0", "e40", "e80"]  # only the entries listed without tags


def test_get_or_create_matches_titles_and_survives_a_creation_race() -> None:
    created: list[str] = []

    def create_memory_in_vault(**args: Any) -> dict[str, str]:
        created.append(args["title"])
        assert args["memory_type"] == "CHAT"
        return {"memoryId": "m2", "vaultId": "v1", "title": args["title"]}

    def create_vault(**args: Any) -> dict[str, str]:
        raise McpToolError("create_vault", "scripted", "vault exists")

    session = ScriptedSession(
        [],
        list_vaults=_vaults,
        list_memories=_memories,
        create_memory_in_vault=create_memory_in_vault,
        create_vault=create_vault,
    )
    backend = _backend(session)
    assert asyncio.run(backend.get_or_create_vault("lme")) == "v1"
    assert asyncio.run(backend.get_or_create_memory("v1", "q__r")) == "m1"
    assert asyncio.run(backend.get_or_create_memory("v1", "other")) == "m2"
    assert created == ["other"]
    with pytest.raises(McpToolError) as caught:
        asyncio.run(backend.get_or_create_vault("missing"))
    assert not is_transient(caught.value)


def test_headers_from_env_are_read_at_connect_time_and_never_shown(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings = McpSettings(
        url="https://user:pw@memory.example/mcp?key=abc",
        headers={"X-Team": "bench"},
        headers_from_env={"Authorization": "LME_TEST_MEMORY_TOKEN"},
    )
    monkeypatch.delenv("LME_TEST_MEMORY_TOKEN", raising=False)
    with pytest.raises(ConfigError, match="LME_TEST_MEMORY_TOKEN"):
        connection_config(settings)
    monkeypatch.setenv("LME_TEST_MEMORY_TOKEN", "Bearer s3cret")
    config = connection_config(settings)
    assert config.get("headers") == {"X-Team": "bench", "Authorization": "Bearer s3cret"}
    shown = describe_server(settings)
    assert shown == "https://memory.example/mcp"
    assert "s3cret" not in repr(load_settings(None).redacted())


def test_mcp_backend_config_is_checked() -> None:
    with pytest.raises(ConfigError, match=r"url"):
        open_entry_store(load_settings(None, **{"memory.backend": "mcp"}))
    stdio = {"memory.backend": "mcp", "memory.params": {"transport": "stdio"}}
    with pytest.raises(ConfigError, match=r"command"):
        open_entry_store(load_settings(None, **stdio))
    settings = load_settings(
        None, **{"memory.backend": "mcp", "memory.params": {"url": "http://127.0.0.1:1/mcp"}}
    )
    backend = open_entry_store(settings)
    assert isinstance(backend, McpEntryStore) and backend.name == "mcp"
    asyncio.run(backend.close())  # never opened: nothing to do


def test_headers_from_env_take_a_prefix_and_the_variable_stays_secret(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings = McpSettings(
        url="http://127.0.0.1:11546/mcp",
        headers_from_env={"Authorization": "Bearer LME_TEST_BEARER"},
    )
    monkeypatch.setenv("LME_TEST_BEARER", "  abcdefgh12345678 ")
    assert connection_config(settings).get("headers") == {
        "Authorization": "Bearer abcdefgh12345678"
    }
    params = {"url": settings.url, "headers_from_env": settings.headers_from_env}
    full = load_settings(None, **{"memory.backend": "mcp", "memory.params": params})
    assert "LME_TEST_BEARER" in secret_env_names(full, {})
    assert redact_secrets("sent abcdefgh12345678", full) == "sent [redacted LME_TEST_BEARER]"
