"""Graphiti (graphiti-core) on embedded Kuzu as a `MemorySystem`: a temporal knowledge graph.

Each memory is a Graphiti group (`group_id` from the scope and title) kept in its own Kuzu
database under `env.data_dir/graphiti/`, so questions run side by side never share a database
file. A session becomes one episode named by the session key, its turns as "role: text" lines
(a named speaker's, LoCoMo's, as "name: text"), dated by the session date. Graphiti extracts
entities and facts (edges) with the memory model (`[models] memory`); a search returns facts,
and each fact's episodes give back the session key and date. Graphiti calls the model through
`env.chat_model` and embeds with `env.embedder()`.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import shutil
import threading
import warnings
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

import graphiti_core.driver.kuzu_driver as kuzu_driver_module
import kuzu
from graphiti_core import Graphiti
from graphiti_core.driver.driver import GraphProvider
from graphiti_core.driver.kuzu_driver import KuzuDriver
from graphiti_core.graph_queries import get_fulltext_indices
from graphiti_core.nodes import EpisodeType
from graphiti_core.search.search_config import (
    EdgeReranker,
    EdgeSearchConfig,
    EdgeSearchMethod,
    SearchConfig,
)
from graphiti_core.search.search_filters import SearchFilters
from graphiti_core.utils.maintenance.graph_data_operations import clear_data

from lme_bench.backends.extra_params import GraphitiParams
from lme_bench.backends.graphiti_clients import (
    ChatModelLLMClient,
    CountingEmbedder,
    KeepOrderReranker,
)
from lme_bench.backends.model_usage import model_account_counts, model_usage_since
from lme_bench.backends.protocol import (
    BackendEnv,
    BackendParams,
    Capability,
    Hit,
    Session,
    Turn,
    Usage,
)
from lme_bench.config.settings import ConfigError

# A benchmark makes no network calls of its own: Graphiti reports usage to PostHog by default
# (read at each report, so setting it here is in time).
os.environ.setdefault("GRAPHITI_TELEMETRY_ENABLED", "false")

SESSION_DATE = "%Y/%m/%d (%a) %H:%M"  # LongMemEval's format: "2023/05/20 (Sat) 02:21"
_DAY_NAME = re.compile(r"\s*\([A-Za-z]+\)\s*")
_EPISODES_NAMED = (
    "MATCH (e:Episodic) WHERE e.group_id = $group_id AND e.name = $name RETURN e.uuid AS uuid"
)
_EPISODES_BY_UUID = (
    "MATCH (e:Episodic) WHERE e.uuid IN $uuids"
    " RETURN e.uuid AS uuid, e.name AS name, e.valid_at AS valid_at"
)


def group_id_for(title: str, scope: str) -> str:
    """A Graphiti group id (ASCII letters, digits, '-' and '_') unique to the scope and title."""
    digest = hashlib.sha256(f"{scope}\0{title}".encode()).hexdigest()[:16]
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", title).strip("-")[:32]
    return f"{slug}-{digest}" if slug else f"memory-{digest}"


def session_time(date: str) -> datetime:
    """A session date ("2023/05/20 (Sat) 02:21", or ISO 8601) as a UTC datetime."""
    try:
        parsed = datetime.strptime(_DAY_NAME.sub(" ", date).strip(), "%Y/%m/%d %H:%M")
    except ValueError:
        parsed = datetime.fromisoformat(date)  # raises ValueError naming the date
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _line(turn: Turn) -> str:
    """A turn as "actor: text": the speaker's name where the benchmark names speakers (LoCoMo's
    text starts with it already), else the role."""
    if turn.speaker is None:
        return f"{turn.role}: {turn.content}"
    said = turn.content.startswith(f"{turn.speaker}:")
    return turn.content if said else f"{turn.speaker}: {turn.content}"


def session_text(session: Session) -> str:
    """The session's non-empty turns, one "actor: text" line each (Graphiti's message format):
    Graphiti takes the actor for the speaker, so two named people are not both "user"."""
    return "\n".join(_line(t) for t in session.turns if t.content.strip())


MAX_DB_SIZE = 1 << 36
"""The address space a Kuzu database reserves (64 GiB, far above any memory's graph). Kuzu's
default, 8 TiB a database, lets a process hold about 15 at once: a shared build's questions
searched together (LoCoMo's 199 of a conversation) open their memory's database once per
stage instance, and past 15 each open failed with "Mmap for size 8796093022208 failed"."""

_CONSTRUCTING = threading.Lock()


class _KuzuOfSmallerReservations:
    """kuzu as graphiti's driver module sees it while a driver is built: its databases reserve
    MAX_DB_SIZE (KuzuDriver opens `kuzu.Database(path)` with no way to pass one)."""

    def __getattr__(self, name: str) -> Any:
        return getattr(kuzu, name)

    @staticmethod
    def Database(path: str) -> kuzu.Database:  # kuzu's name
        return kuzu.Database(path, max_db_size=MAX_DB_SIZE)


class KuzuGraphDriver(KuzuDriver):
    """Graphiti's Kuzu driver with three fixes of graphiti-core 0.31.1 (each reason below)."""

    def __init__(self, path: Path, group_id: str) -> None:
        with warnings.catch_warnings(), _CONSTRUCTING:  # Kuzu is deprecated; the pinned pair works
            warnings.simplefilter("ignore", DeprecationWarning)
            setattr(kuzu_driver_module, "kuzu", _KuzuOfSmallerReservations())  # noqa: B010
            try:
                super().__init__(db=str(path))
            finally:
                setattr(kuzu_driver_module, "kuzu", kuzu)  # noqa: B010
        # add_episode reads driver._database, which KuzuDriver never sets.
        self._database = group_id

    async def execute_query(
        self, cypher_query_: str, **kwargs: Any
    ) -> tuple[list[dict[str, Any]] | list[list[dict[str, Any]]], None, None]:
        # KuzuDriver leaves query results to the garbage collector, and one collected after
        # its database is closed crashes the process: each is read and closed here.
        params = {k: v for k, v in kwargs.items() if v is not None}
        params.pop("database_", None)
        params.pop("routing_", None)
        results = await self.client.execute(cypher_query_, parameters=params)
        batches = results if isinstance(results, list) else [results]
        try:
            rows: list[Any] = [list(result.rows_as_dict()) for result in batches]
        finally:
            for result in batches:
                result.close()
        if isinstance(results, list):
            return rows, None, None
        return rows[0], None, None


async def ensure_fulltext_indices(driver: KuzuGraphDriver) -> None:
    """graphiti-core 0.31.1's Kuzu driver builds no full-text indices, so its searches fail."""
    await driver.execute_query("LOAD EXTENSION fts")  # shipped inside kuzu: no download
    rows, _, _ = await driver.execute_query("CALL SHOW_INDEXES() RETURN index_name AS name")
    held = {row["name"] for row in rows if isinstance(row, dict)}
    for statement in get_fulltext_indices(GraphProvider.KUZU):
        name = statement.split("'")[3]  # CALL CREATE_FTS_INDEX('Table', 'name', [...])
        if name not in held:
            await driver.execute_query(statement)


class GraphitiSystem:
    """Graphiti on embedded Kuzu; one Kuzu database and one Graphiti group per memory."""

    Params: ClassVar[type[BackendParams]] = GraphitiParams
    name: ClassVar[str] = "graphiti"
    capabilities: ClassVar[frozenset[Capability]] = frozenset(
        {Capability.PROVENANCE, Capability.EXTRACTS, Capability.DELETES}
    )

    def __init__(self, params: BackendParams, env: BackendEnv) -> None:
        if env.chat_model is None:
            raise ConfigError(
                "[models] memory: the graphiti backend extracts entities and facts with a model;"
                " set one (e.g. memory = 'fake:graphiti-extractor' for a key-free run)"
            )
        if env.embedder is None:
            raise ConfigError("[memory] embedding_model: the graphiti backend needs an embedder")
        assert isinstance(params, GraphitiParams)
        self.params = params
        self.env = env
        self.root = env.data_dir / "graphiti"
        self.chat_model = env.chat_model
        account = getattr(env.chat_model, "account", None)
        self._account = account
        self._account_start = model_account_counts(account)
        self.llm_client = ChatModelLLMClient(env.chat_model, json_retries=params.json_retries)
        self.embedder = CountingEmbedder(env.embedder)
        self.reranker = KeepOrderReranker()
        self._graphs: dict[str, Graphiti] = {}
        self._lock = asyncio.Lock()

    def _path(self, group_id: str) -> Path:
        return self.root / f"{group_id}.kuzu"

    async def _graph(self, group_id: str) -> Graphiti:
        async with self._lock:
            graph = self._graphs.get(group_id)
            if graph is None:
                self.root.mkdir(parents=True, exist_ok=True)
                driver = await asyncio.to_thread(KuzuGraphDriver, self._path(group_id), group_id)
                await ensure_fulltext_indices(driver)
                graph = Graphiti(
                    graph_driver=driver,
                    llm_client=self.llm_client,
                    embedder=self.embedder,
                    cross_encoder=self.reranker,
                    max_coroutines=self.params.max_coroutines,
                )
                self._graphs[group_id] = graph
            return graph

    async def open_memory(self, title: str) -> str:
        group_id = group_id_for(title, self.env.scope)
        await self._graph(group_id)
        return group_id

    async def ingest_session(self, memory_id: str, session: Session) -> None:
        graph = await self._graph(memory_id)
        held, _, _ = await graph.driver.execute_query(
            _EPISODES_NAMED, group_id=memory_id, name=session.key
        )
        for row in held:
            if isinstance(row, dict):
                await graph.remove_episode(row["uuid"])
        text = session_text(session)
        if not text:
            return
        await graph.add_episode(
            name=session.key,
            episode_body=text,
            source_description="chat session",
            reference_time=session_time(session.date),
            source=EpisodeType.message,
            group_id=memory_id,
        )

    async def wait_until_ready(self, memory_id: str) -> None:
        await self._graph(memory_id)  # add_episode returns once the graph and indices hold it

    async def search(self, memory_id: str, query: str, *, question_date: str, k: int) -> list[Hit]:
        if k <= 0 or not query.strip():
            return []
        graph = await self._graph(memory_id)
        config = SearchConfig(
            edge_config=EdgeSearchConfig(
                search_methods=[EdgeSearchMethod.bm25, EdgeSearchMethod.cosine_similarity],
                reranker=EdgeReranker.rrf,
                sim_min_score=-1.0,  # no similarity threshold: every system gives the same depth
            ),
            limit=max(k, self.params.candidates),
        )
        found = await graph.search_(
            query, config=config, group_ids=[memory_id], search_filter=SearchFilters()
        )
        edges = found.edges[:k]
        episodes = await self._episodes(graph, {u for edge in edges for u in edge.episodes})
        scores = found.edge_reranker_scores
        hits = []
        for rank, edge in enumerate(edges):
            source = next((episodes[u] for u in edge.episodes if u in episodes), None)
            hits.append(
                Hit(
                    text=edge.fact,
                    score=float(scores[rank]) if rank < len(scores) else 1.0 / (rank + 1),
                    date=source[1] if source else None,
                    session_key=source[0] if source else None,
                )
            )
        return hits

    async def _episodes(self, graph: Graphiti, uuids: set[str]) -> dict[str, tuple[str, str]]:
        """Episode uuid -> (session key, session date) for the episodes still held."""
        if not uuids:
            return {}
        rows, _, _ = await graph.driver.execute_query(_EPISODES_BY_UUID, uuids=sorted(uuids))
        held = {}
        for row in rows:
            if isinstance(row, dict):
                valid_at = row["valid_at"]
                date = valid_at.strftime(SESSION_DATE) if isinstance(valid_at, datetime) else None
                held[row["uuid"]] = (row["name"], date or "")
        return held

    async def delete_memory(self, memory_id: str) -> None:
        graph = await self._graph(memory_id)
        await clear_data(graph.driver, group_ids=[memory_id])
        async with self._lock:
            self._graphs.pop(memory_id, None)
        await self._close_graph(graph)
        path = self._path(memory_id)
        for leftover in (path, path.with_name(path.name + ".wal")):
            if leftover.is_dir():
                shutil.rmtree(leftover)
            else:
                leftover.unlink(missing_ok=True)

    def usage(self) -> Usage:
        return model_usage_since(
            self._account,
            self._account_start,
            embedding_calls=self.embedder.calls,
            embedded_texts=self.embedder.texts,
        )

    async def _close_graph(self, graph: Graphiti) -> None:
        driver: Any = graph.driver
        # KuzuDriver.close (all Graphiti.close does) leaves the database open; this releases it.
        driver.client.close()
        driver.db.close()

    async def close(self) -> None:
        async with self._lock:
            graphs, self._graphs = list(self._graphs.values()), {}
        for graph in graphs:
            await self._close_graph(graph)
