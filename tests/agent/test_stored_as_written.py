"""Text goes into memory as it was said, however often the memory agent copies it back.

The agent's model runs on a loopback OpenAI-compatible server that shows the model its prompt
HTML-escaped, as llama-cpp-python's `chatml-function-calling` format does (its Jinja template
autoescapes): the model reads `Louis XVI&#39;s` where the user wrote `Louis XVI's`. The scripted
model writes back what it read (the context it was shown, then the session's words), so the
same session ingested ten times over would store `&amp;#39;` and worse unless the harness
takes back the escapes the server added. Through our entry tools into the embedded store and
into our MCP server over stdio, in both agent modes.
"""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from markupsafe import escape

from lme_bench.agent.copied_escapes import unescape_copied
from lme_bench.backends.embedded import EmbeddedEntryStore
from lme_bench.backends.mycelian_mcp import McpEntryStore
from lme_bench.config.mcp_section import McpSettings
from lme_bench.config.settings import IngestSettings, ModelsSettings, ProviderSettings
from lme_bench.dataset.models import Instance
from lme_bench.dataset.views import make_view
from lme_bench.entries.capability import VaultEntries
from lme_bench.entries.entry_memory import EntryMemory
from lme_bench.ingest.agent import AgentWriter
from lme_bench.ingest.checkpoint import Checkpoints
from lme_bench.ingest.loop import feed_sessions
from lme_bench.providers.factory import ModelSpec, build_chat_model
from lme_bench.providers.retry import RetryPolicy
from tests.conformance.servers import serve_args
from tests.factories import make_question
from tests.providers.fake_openai_server import serve

SAID = 'Louis XVI\'s "Affaire des poisons" & <b>Versailles</b> & Marie-Antoinette\'s "<i>"'
REPLY = 'Noted: it\'s <fine> & "done".'
SESSIONS = 10
FAST = RetryPolicy(base_s=0.001, throttle_base_s=0.001, jitter=0.0)
_SHOWN_CONTEXT = re.compile(r"Current context document:\n(.*?)\n\n", re.S)
_OBSERVED = re.compile(r"\[observe\][^\n]*, (\w+):\n(.*?)(?:\nA context update is due|\Z)", re.S)


def _prompt(body: dict[str, Any]) -> str:
    """The last message as the server's template shows it to the model: HTML-escaped."""
    return str(escape(body["messages"][-1]["content"]))


def copying_model(body: dict[str, Any]) -> dict[str, Any]:
    """A model that copies what it read: the context it was shown, then what the user said
    (the observed message in agentic mode, the session's first user line in context-only)."""
    prompt = _prompt(body)
    shown = _SHOWN_CONTEXT.search(prompt)
    context = shown.group(1) if shown and not shown.group(1).startswith("(empty") else ""
    observed = _OBSERVED.search(prompt)
    if observed is not None and observed.group(1) != "user":
        return {"content": "ok"}
    if observed is not None:
        said = observed.group(2)
        added = "\n".join(filter(None, [context, said]))
        return {
            "tool_calls": [("add_entry", {"summary": said}), ("put_context", {"content": added})]
        }
    users = re.findall(r"^user: (.*)$", prompt, re.M)[:1]
    return {
        "tool_calls": [("put_context", {"content": "\n".join(filter(None, [context, *users]))})]
    }


def _question() -> Instance:
    session = [{"role": "user", "content": SAID}, {"role": "assistant", "content": REPLY}]
    dates = [f"2023/05/{day:02d} (Mon) 09:15" for day in range(1, SESSIONS + 1)]
    question = make_question(
        haystack_session_ids=[f"s_{i}" for i in range(SESSIONS)],
        haystack_dates=dates,
        haystack_sessions=[[dict(turn) for turn in session] for _ in range(SESSIONS)],
        answer_session_ids=["s_0"],
    )
    return Instance.model_validate(question)


def _model(url: str) -> Any:
    provider = ProviderSettings(kind="openai-compatible", base_url=url)
    spec = ModelSpec("agent", "local", "copier", "openai-compatible", provider)
    return build_chat_model(spec, ModelsSettings(), 512)


async def _ingest(store: EntryMemory, url: str, mode: str, folder: Path) -> tuple[Any, Any]:
    entries_in_vault = VaultEntries(store, "v")
    memory = await entries_in_vault.open_memory("q__stored-as-written")
    checkpoints = Checkpoints(folder / "checkpoints.sqlite")
    settings = IngestSettings(mode=mode, bootstrap_entries=2)
    writer = AgentWriter(entries_in_vault, _model(url), settings, checkpoints, FAST)
    view, _ = make_view(_question())
    records = await feed_sessions("aa11bb22", view, memory, checkpoints, writer)
    assert [r.status for r in records] == ["ok"] * SESSIONS
    context = await entries_in_vault.get_context(memory)
    entries = await entries_in_vault.recent_entries(memory, 50)
    await store.close()
    return context, entries


def _check(context: Any, entries: Any, mode: str) -> None:
    assert context == "\n".join([SAID] * SESSIONS)  # each session's copy, byte for byte
    if mode == "agentic":
        assert [e.summary for e in entries] == [SAID] * SESSIONS
        assert {e.raw_entry for e in entries} == {SAID}
    else:
        assert entries == []


@pytest.mark.parametrize("mode", ["context-only", "agentic"])
def test_the_embedded_store_keeps_the_bytes_through_ten_copies(tmp_path: Path, mode: str) -> None:
    with serve([copying_model]) as (url, _):
        backend = EmbeddedEntryStore(tmp_path / "memory.sqlite")
        context, entries = asyncio.run(_ingest(backend, url, mode, tmp_path))
    _check(context, entries, mode)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["context-only", "agentic"])
def test_our_mcp_server_keeps_the_bytes_through_ten_copies(tmp_path: Path, mode: str) -> None:
    mcp = McpSettings(
        transport="stdio",
        command=sys.executable,
        args=serve_args("stdio", tmp_path / "memory.sqlite"),
    )
    with serve([copying_model]) as (url, _):
        context, entries = asyncio.run(_ingest(McpEntryStore(mcp), url, mode, tmp_path))
    _check(context, entries, mode)


def test_escapes_that_were_in_the_text_sent_are_kept() -> None:
    sent = "The page says AT&amp;T in its source; the user's own words: AT&T <3"
    # &amp; was sent as it is, so it stays wherever it is written; &#39; and &lt; were not
    assert unescape_copied("AT&amp;T, user&#39;s &lt;3", sent) == "AT&amp;T, user's <3"
    assert unescape_copied("5 &gt; 4", "no such character sent") == "5 &gt; 4"
