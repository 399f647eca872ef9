"""How the summary title and the manifest name a run's search: the embedded store's mode, or
the memory system's own search for every other backend, in process or behind a server."""

from __future__ import annotations

from pathlib import Path

from lme_bench.config.settings import Settings
from lme_bench.run.steps import search_label

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "example_backend.py"


def test_a_plugin_and_a_server_are_said_to_search_their_own_way() -> None:
    plugin = Settings(memory={"backend": f"{EXAMPLE}:SessionNotes"})
    server = Settings(memory={"backend": "mcp", "params": {"url": "http://127.0.0.1:1/mcp"}})
    assert search_label(plugin) == "the memory system's own"
    assert search_label(server) == "the memory system's own"


def test_the_embedded_store_is_named_by_its_mode() -> None:
    assert search_label(Settings()) == "bm25"
