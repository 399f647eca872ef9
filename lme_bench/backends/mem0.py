"""mem0 (open source, `mem0ai`) as a memory system, fully local.

Each memory is a mem0 `user_id` derived from its title, held in a folder of its own under the
backend's data folder: an embedded Qdrant store (a folder is locked by one client at a time, so
questions handled in parallel must not share one; the backend objects of a process share each
folder's client, see lme_bench.backends.mem0_qdrant) and mem0's SQLite history.
Embeddings come from the run's embedder (`[memory] embedding_model`, the packaged
all-MiniLM-L6-v2 by default: one model per process, shared with every other stage) through mem0's
`langchain` embedder provider, and mem0's own model calls go to `[models] memory` through mem0's
`langchain` LLM provider.

With `infer = true` mem0 extracts facts from each session (one model call per `add`); every
fact carries the session's key and date in its metadata. An extraction reply cut by the output
cap (which mem0 cannot parse, so it stores nothing) is asked again for each half of its turns.
With `infer = false` every non-empty turn is stored as it is, one `add` per turn, with its turn
index as well.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import os
import re
import shutil
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatResult

from lme_bench.backends.extra_params import Mem0Params
from lme_bench.backends.mem0_cap_watch import CapWatchingModel
from lme_bench.backends.mem0_embeddings import SharedEmbeddings
from lme_bench.backends.mem0_qdrant import SharedFolder, acquire, release
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
from lme_bench.plugins import extra_command

_SAFE_ID = re.compile(r"[\w.:-]{1,100}")
_SAFE_FOLDER = re.compile(r"[\w.-]{1,100}")


def memory_user_id(scope: str, title: str) -> str:
    """mem0's user_id for a memory: the title (and scope), or a hash when mem0 would refuse
    it (mem0 rejects ids with whitespace)."""
    raw = f"{scope}:{title}" if scope else title
    if _SAFE_ID.fullmatch(raw):
        return raw
    return "lme-" + hashlib.sha256(raw.encode()).hexdigest()[:40]


def memory_folder(root: Path, user_id: str) -> Path:
    name = user_id if _SAFE_FOLDER.fullmatch(user_id) else None
    return root / (name or hashlib.sha256(user_id.encode()).hexdigest()[:40])


class _NoModel(BaseChatModel):
    """Stands in for the model mem0 insists on building when infer is off and none is set."""

    @property
    def _llm_type(self) -> str:
        return "lme-bench-no-model"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        raise ConfigError("the mem0 backend made a model call but [models] memory is not set")


def _mem0_memory_class() -> Any:
    """mem0's Memory, with its telemetry off: the benchmark sends nothing anywhere."""
    os.environ["MEM0_TELEMETRY"] = "False"  # read once, when mem0 is first imported
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import mem0.memory.main
    import mem0.memory.telemetry

    # mem0 may have been imported before with telemetry on: turn off the copies it reads.
    mem0.memory.telemetry.MEM0_TELEMETRY = False
    mem0.memory.main.MEM0_TELEMETRY = False
    return mem0.memory.main.Memory


class ExtractionCutError(RuntimeError):
    """mem0's extraction of one turn was cut by the output cap: its facts would be lost."""


@dataclass
class OpenMemory:
    memory: Any  # mem0's Memory
    shared: SharedFolder
    folder: Path
    model: CapWatchingModel | None  # the memory's own watcher of mem0's model calls


def _chunks(turns: list[Turn], size: int) -> Iterator[list[Turn]]:
    size = size or len(turns)
    for start in range(0, len(turns), size):
        yield turns[start : start + size]


def _message(turn: Turn) -> dict[str, str]:
    """mem0's message; a named speaker goes in `name` (mem0 keeps it as the stored turn's
    `actor_id` when it does not infer; its extraction reads the name from the text)."""
    message = {"role": "assistant" if turn.role == "assistant" else "user", "content": turn.content}
    if turn.speaker is not None:
        message["name"] = turn.speaker
    return message


def _hit(found: dict[str, Any]) -> Hit:
    metadata = found.get("metadata") or {}
    index = metadata.get("turn_index")
    date = metadata.get("session_date")
    key = metadata.get("session_key")
    return Hit(
        text=str(found.get("memory", "")),
        score=float(found.get("score") or 0.0),
        date=date if isinstance(date, str) else None,
        session_key=key if isinstance(key, str) else None,
        turn_index=index if isinstance(index, int) and not isinstance(index, bool) else None,
    )


class Mem0System:
    """mem0's `Memory` over embedded Qdrant. Built with `infer = false` it is a
    `Mem0RawTurnsSystem`, whose capabilities say what that mode keeps."""

    Params: ClassVar[type[BackendParams]] = Mem0Params
    name: ClassVar[str] = "mem0"
    capabilities: ClassVar[frozenset[Capability]] = frozenset(
        {Capability.PROVENANCE, Capability.EXTRACTS, Capability.DELETES}
    )

    def __new__(cls, params: BackendParams, env: BackendEnv) -> Mem0System:
        if cls is Mem0System and isinstance(params, Mem0Params) and not params.infer:
            cls = Mem0RawTurnsSystem
        return super().__new__(cls)

    def __init__(self, params: BackendParams, env: BackendEnv) -> None:
        assert isinstance(params, Mem0Params)
        if importlib.util.find_spec("mem0") is None:  # imported at a memory's first use
            raise ConfigError(
                "[memory] backend = 'mem0' needs the mem0 extra, which is not installed:"
                f" {extra_command('mem0')} (make install-all installs every extra)"
            )
        self.params = params
        self.env = env
        self.root = env.data_dir  # one folder per backend: every memory a folder in it
        if params.infer and env.chat_model is None:
            raise ConfigError(
                "[models] memory is not set: the mem0 backend with infer = true needs a model"
                " for mem0's fact extraction (or set [memory.params] infer = false)"
            )
        account = getattr(env.chat_model, "account", None)
        self._account = account
        self._calls_before = model_account_counts(account)
        self._embedding_usage = Usage()
        self._usage_lock = threading.Lock()
        if env.embedder is None:
            raise ConfigError("[memory] embedding_model: the mem0 backend needs an embedder")
        self._embeddings = SharedEmbeddings(env.embedder(), self._embedding_usage, self._usage_lock)
        self._memories: dict[str, OpenMemory] = {}
        self._open_lock = threading.Lock()

    # mem0 is synchronous: every call runs in a worker thread, holding the folder's lock.

    def _config(self, folder: Path, client: Any, model: BaseChatModel | None) -> dict[str, Any]:
        return {
            "vector_store": {
                "provider": "qdrant",
                "config": {
                    "collection_name": self.params.collection_name,
                    "client": client,
                    "path": str(folder / "qdrant"),  # unused beside a client, but required
                    "on_disk": True,
                    "embedding_model_dims": self._embeddings.dim,
                },
            },
            "llm": {
                "provider": "langchain",
                "config": {"model": model or _NoModel()},
            },
            "embedder": {"provider": "langchain", "config": {"model": self._embeddings}},
            "history_db_path": str(folder / "history.db"),
        }

    def _open(self, user_id: str) -> OpenMemory:
        """The memory of `user_id`, opened (and its folder made) on first use."""
        with self._open_lock:
            if user_id in self._memories:
                return self._memories[user_id]
            memory_class = _mem0_memory_class()
            folder = memory_folder(self.root, user_id)
            folder.mkdir(parents=True, exist_ok=True)
            chat_model = self.env.chat_model
            model = CapWatchingModel(inner=chat_model) if chat_model is not None else None
            shared = acquire(folder / "qdrant", self.params.lock_wait_s)
            try:
                with shared.lock:
                    memory = memory_class.from_config(self._config(folder, shared.client, model))
            except BaseException:
                release(shared)
                raise
            memory.embedding_model = self._embeddings  # batches in one call (mem0_embeddings)
            opened = OpenMemory(memory, shared, folder, model)
            self._memories[user_id] = opened
            return opened

    def _forget_session(self, memory: Any, user_id: str, key: str) -> None:
        session = {"user_id": user_id, "session_key": key}
        while found := memory.get_all(filters=session, top_k=500)["results"]:
            for item in found:
                memory.delete(item["id"])

    def _instructions(self, session: Session) -> str | None:
        parts = [self.params.custom_instructions or ""]
        if self.params.session_date_in_prompt:
            parts.append(
                f"These messages are from a conversation held on {session.date}; date what"
                " they tell by that date, not by the current date."
            )
        return "\n".join(p for p in parts if p) or None

    def _ingest(self, user_id: str, session: Session) -> None:
        opened = self._open(user_id)
        memory = opened.memory
        turns = [turn for turn in session.turns if turn.content.strip()]
        base = {"session_key": session.key, "session_date": session.date}
        with opened.shared.lock:
            self._forget_session(memory, user_id, session.key)
            if not self.params.infer:
                for turn in turns:
                    metadata = {**base, "turn_index": turn.index}
                    memory.add([_message(turn)], user_id=user_id, metadata=metadata, infer=False)
                return
            prompt = self._instructions(session)
            for chunk in _chunks(turns, self.params.messages_per_add):
                self._extract(opened, user_id, session, chunk, prompt)

    def _extract(
        self, opened: OpenMemory, user_id: str, session: Session, turns: list[Turn], prompt: Any
    ) -> None:
        """One mem0 add of `turns`; when the reply was cut by the output cap and nothing was
        stored, the same for each half of them (one turn cut: an ExtractionCutError)."""
        watch = opened.model
        if watch is not None:
            watch.reset()
        base = {"session_key": session.key, "session_date": session.date}
        messages = [_message(turn) for turn in turns]
        added = opened.memory.add(
            messages, user_id=user_id, metadata=base, infer=True, prompt=prompt
        )
        if watch is None or not watch.capped or (added or {}).get("results"):
            return
        if len(turns) == 1:
            raise ExtractionCutError(
                f"mem0: the extraction of turn {turns[0].index} of session {session.key} was cut"
                " by the output cap, so mem0 stored nothing of it: raise [models]"
                " max_tokens.memory"
            )
        middle = len(turns) // 2
        self._extract(opened, user_id, session, turns[:middle], prompt)
        self._extract(opened, user_id, session, turns[middle:], prompt)

    def _search(self, user_id: str, query: str, k: int) -> list[Hit]:
        if k <= 0 or not query.strip():
            return []
        opened = self._open(user_id)
        with opened.shared.lock:
            # Memory.search refuses a threshold below 0 and gates the cosine score by it, so
            # hits of negative similarity would be dropped at 0; -1 asks for the full depth.
            found = opened.memory._search_vector_store(query.strip(), {"user_id": user_id}, k, -1.0)
        return [_hit(item) for item in found[:k]]

    def _close_memory(self, user_id: str) -> bool:
        """Close what this object opened; True when no backend of this process still uses
        the memory's folder."""
        opened = self._memories.pop(user_id, None)
        if opened is None:
            return True
        with opened.shared.lock:
            opened.memory.close()  # mem0's history database; the shared Qdrant client stays
        return release(opened.shared)

    def _delete(self, user_id: str) -> None:
        opened = self._open(user_id)
        with opened.shared.lock:
            opened.memory.delete_all(user_id=user_id)
        with self._open_lock:
            last = self._close_memory(user_id)
        if last:
            shutil.rmtree(opened.folder, ignore_errors=True)

    def _close(self) -> None:
        with self._open_lock:
            for user_id in list(self._memories):
                self._close_memory(user_id)

    async def open_memory(self, title: str) -> str:
        user_id = memory_user_id(self.env.scope, title)
        await asyncio.to_thread(self._open, user_id)
        return user_id

    async def ingest_session(self, memory_id: str, session: Session) -> None:
        await asyncio.to_thread(self._ingest, memory_id, session)

    async def wait_until_ready(self, memory_id: str) -> None:
        return None  # mem0's add returns once its memories are stored and indexed

    async def search(self, memory_id: str, query: str, *, question_date: str, k: int) -> list[Hit]:
        return await asyncio.to_thread(self._search, memory_id, query, k)

    async def delete_memory(self, memory_id: str) -> None:
        await asyncio.to_thread(self._delete, memory_id)

    def usage(self) -> Usage:
        with self._usage_lock:
            embeddings = self._embedding_usage
            return model_usage_since(
                self._account,
                self._calls_before,
                embedding_calls=embeddings.embedding_calls,
                embedded_texts=embeddings.embedded_texts,
            )

    async def close(self) -> None:
        await asyncio.to_thread(self._close)


class Mem0RawTurnsSystem(Mem0System):
    """mem0 with `infer = false`: turns stored as they are, each with its turn index."""

    capabilities = frozenset(
        {Capability.PROVENANCE, Capability.TURN_PROVENANCE, Capability.DELETES}
    )
