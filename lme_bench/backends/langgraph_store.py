"""A LangGraph store with a vector index as a memory system, optionally fed by LangMem.

Items live under namespaces (root, "memories", memory title, session key), so every item
carries the session it came from, and a memory is searched by its namespace prefix. Each
session also gets a record (root, "sessions", title, session key) holding its date.
- extract = "none": each non-empty turn is one item {session_key, turn_index, role, date, text}.
- extract = "langmem": LangMem's memory store manager reads the session and writes the memories
  it extracts into the session's namespace, with `[models] memory` as its model.
Ingesting a session again first deletes what its namespace holds. Namespace labels are
percent-encoded (LangGraph refuses labels with a period).
"""

from __future__ import annotations

from typing import Any, ClassVar
from urllib.parse import quote, unquote

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langgraph.store.base import PutOp, SearchItem

from lme_bench.backends.extra_params import LangGraphParams
from lme_bench.backends.langgraph_stores import (
    EmbeddingCount,
    acquire_store,
    counting,
    release_store,
)
from lme_bench.backends.model_usage import model_account_counts, model_usage_since
from lme_bench.backends.protocol import (
    BackendEnv,
    BackendParams,
    Capability,
    Hit,
    Session,
    Usage,
)
from lme_bench.config.settings import ConfigError
from lme_bench.embeddings import MINILM, load_embedder

PAGE = 500  # items listed per call when deleting


def label(text: str) -> str:
    """A namespace label for any text (no periods, reversible)."""
    return quote(text, safe="").replace(".", "%2E")


def session_messages(session: Session) -> list[BaseMessage]:
    messages: list[BaseMessage] = [SystemMessage(f"Conversation date: {session.date}")]
    for turn in session.turns:
        if turn.content.strip():
            kind = HumanMessage if turn.role == "user" else AIMessage
            messages.append(kind(turn.content))
    return messages


def item_text(value: dict[str, Any]) -> str:
    if isinstance(value.get("text"), str):
        return str(value["text"])
    content = value.get("content")
    if isinstance(content, dict) and isinstance(content.get("content"), str):
        return str(content["content"])
    return str(content)


class LangGraphSystem:
    """The `langgraph` backend. Capabilities are read from the class, so with extract =
    "langmem" building it gives a `LangMemSystem`, which declares what extraction changes."""

    Params: ClassVar[type[BackendParams]] = LangGraphParams
    name: ClassVar[str] = "langgraph"
    capabilities: ClassVar[frozenset[Capability]] = frozenset(
        {Capability.PROVENANCE, Capability.TURN_PROVENANCE, Capability.DELETES}
    )

    def __new__(cls, params: LangGraphParams, env: BackendEnv) -> LangGraphSystem:
        chosen = LangMemSystem if params.extract == "langmem" else cls
        return super().__new__(chosen)

    def __init__(self, params: LangGraphParams, env: BackendEnv) -> None:
        if params.extract == "langmem" and env.chat_model is None:
            raise ConfigError(
                "backend 'langgraph' with extract = 'langmem' needs [models] memory"
                " (the model LangMem extracts memories with)"
            )
        self.params = params
        self.env = env
        self.root = "lme-bench" + (f"-{label(env.scope)}" if env.scope else "")
        embedder = env.embedder() if env.embedder else load_embedder(MINILM)
        self.store = acquire_store(params.store, env.data_dir, embedder)
        self.embeddings = EmbeddingCount()
        self.account = getattr(env.chat_model, "account", None)
        self.calls_before = model_account_counts(self.account)
        self.closed = False

    def namespace(self, kind: str, memory_id: str, *rest: str) -> tuple[str, ...]:
        return (self.root, kind, memory_id, *(label(part) for part in rest))

    async def open_memory(self, title: str) -> str:
        if not title:
            raise ValueError("a memory title must not be empty")
        return label(title)  # namespaces need no creating

    async def ingest_session(self, memory_id: str, session: Session) -> None:
        memories = self.namespace("memories", memory_id, session.key)
        record = self.namespace("sessions", memory_id, session.key)
        with counting(self.embeddings):
            await self._delete_under(memories)
            await self._delete_under(record)
            await self._store_session(memories, session)
            value = {"session_key": session.key, "date": session.date}
            await self.store.aput(record, "session", value, index=False)

    async def _store_session(self, namespace: tuple[str, ...], session: Session) -> None:
        puts = [
            PutOp(
                namespace,
                f"turn-{turn.index:05d}",
                {
                    "session_key": session.key,
                    "turn_index": turn.index,
                    "role": turn.role,
                    "date": session.date,
                    "text": turn.content,
                },
            )
            for turn in session.turns
            if turn.content.strip()
        ]
        if puts:
            await self.store.abatch(puts)

    async def _delete_under(self, prefix: tuple[str, ...]) -> None:
        while items := await self.store.asearch(prefix, limit=PAGE):
            await self.store.abatch([PutOp(item.namespace, item.key, None) for item in items])

    async def wait_until_ready(self, memory_id: str) -> None:
        return None  # a put is searchable once it returns; extraction runs within ingestion

    async def search(self, memory_id: str, query: str, *, question_date: str, k: int) -> list[Hit]:
        if k <= 0:
            return []
        with counting(self.embeddings):
            items = await self.store.asearch(
                self.namespace("memories", memory_id), query=query, limit=k
            )
        dates: dict[tuple[str, ...], str | None] = {}
        return [await self._hit(item, dates) for item in items[:k]]

    async def _hit(self, item: SearchItem, dates: dict[tuple[str, ...], str | None]) -> Hit:
        session_key = unquote(item.namespace[3])
        date = item.value.get("date")
        if not isinstance(date, str):  # extracted memories: the date is the session's record
            record = (self.root, "sessions", *item.namespace[2:4])
            if record not in dates:
                found = await self.store.aget(record, "session")
                dates[record] = found.value.get("date") if found else None
            date = dates[record]
        index = item.value.get("turn_index")
        return Hit(
            text=item_text(item.value),
            score=float(item.score or 0.0),
            date=date,
            session_key=session_key,
            turn_index=index if isinstance(index, int) else None,
        )

    async def delete_memory(self, memory_id: str) -> None:
        with counting(self.embeddings):
            await self._delete_under(self.namespace("memories", memory_id))
            await self._delete_under(self.namespace("sessions", memory_id))

    def usage(self) -> Usage:
        return model_usage_since(
            self.account,
            self.calls_before,
            embedding_calls=self.embeddings.calls,
            embedded_texts=self.embeddings.texts,
        )

    async def close(self) -> None:
        if not self.closed:
            self.closed = True
            release_store(self.params.store, self.env.data_dir)


class LangMemSystem(LangGraphSystem):
    """extract = "langmem": LangMem's memory manager writes what it extracts from a session."""

    capabilities = frozenset({Capability.PROVENANCE, Capability.EXTRACTS, Capability.DELETES})

    async def _store_session(self, namespace: tuple[str, ...], session: Session) -> None:
        from langmem import create_memory_store_manager

        manager = create_memory_store_manager(
            self.env.chat_model, namespace=namespace, store=self.store
        )
        await manager.ainvoke({"messages": session_messages(session), "max_steps": 1})
