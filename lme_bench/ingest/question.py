"""Ingest one question: its memory (vault per host, an opaque title: ingest/titles.py), then
every session in date order, raw or through the memory agent (with our entry tools, or with the
memory system's own tools when it has no entry surface: ingest/agent_tools.py)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from lme_bench.backends.builtin_params import configured_vault
from lme_bench.backends.capabilities import entry_memory_of
from lme_bench.backends.entry_system import vault_title
from lme_bench.backends.protocol import Capability, MemorySystem, Usage
from lme_bench.backends.registry import backend_class, open_system
from lme_bench.common.limits import ThreadSafeSlots, provider_limiter
from lme_bench.config.settings import ConfigError, Settings
from lme_bench.dataset.shards import QuestionRef
from lme_bench.dataset.views import QuestionView, make_view
from lme_bench.entries.entry_memory import EntryMemory
from lme_bench.ingest.as_they_are import TurnEntries, WholeSessions
from lme_bench.ingest.build_locks import BUILD_LOCKS
from lme_bench.ingest.checkpoint import Checkpoints, claimed_fingerprints
from lme_bench.ingest.excerpt import MemoryExcerpt, read_excerpt
from lme_bench.ingest.fingerprint import ingest_fingerprint
from lme_bench.ingest.health import (
    UNCHECKED,
    context_health,
    entry_memory_health,
    searched_health,
)
from lme_bench.ingest.loop import SessionWriter, feed_sessions
from lme_bench.ingest.records import SessionRecord
from lme_bench.ingest.titles import memory_title
from lme_bench.providers.factory import check_models, model_for, parse_model, problems


class MissingMemoryError(ValueError):
    """A later stage found no ingested memory for the question (a permanent error)."""


class IngestSettingsChanged(ConfigError):
    """The question's memory was filled with other ingestion settings or another version of the
    memory system's code (a permanent error)."""


@dataclass(frozen=True, slots=True)
class MemoryLocation:
    """Where a build's memory is, found before ingestion (part of its cache key)."""

    question_id: str  # the build id (a LongMemEval question's build is its question id)
    vault_id: str
    memory_id: str
    entries: int  # entries held, plus one for a stored context: 0 = an empty memory


@dataclass(frozen=True, slots=True)
class IngestOutcome:
    question_id: str
    vault_id: str
    memory_id: str
    entries: int
    seconds: float
    sessions: list[SessionRecord] = field(default_factory=list)
    ingestion_id: str = ""  # which ingestion filled the memory (see Checkpoints.begin_ingestion)
    system_usage: Usage = field(default_factory=Usage)  # the memory system's own calls
    ingest_health: str = UNCHECKED  # ok | empty | context-unchanged (ingest/health.py)
    memory_excerpt: MemoryExcerpt | None = None  # what the memory holds after, read back

    @property
    def turns(self) -> int:
        return sum(s.turns for s in self.sessions)


def _checkpoints_path(settings: Settings) -> Path:
    return settings.run.results_dir / "checkpoints.sqlite"


def _checkpoints(settings: Settings) -> Checkpoints:
    return Checkpoints(_checkpoints_path(settings))


def check_run_models(settings: Settings) -> None:
    """Every model the run's stages need must be usable; one error before any work if not."""
    roles = [r for r, stage in (("qa", "answer"), ("judge", "judge")) if stage in settings.stages]
    if "answer" in settings.stages and not settings.models.qa:
        from lme_bench.providers.errors import ProviderConfigError

        raise ProviderConfigError("the answer stage needs [models] qa (e.g. 'openai:gpt-4o-mini')")
    check_models(settings, roles=tuple(roles))
    if "judge" in settings.stages and settings.judge.second_model:
        found = problems(parse_model("judge", settings.judge.second_model, settings))
        if found:
            from lme_bench.providers.errors import ProviderConfigError

            raise ProviderConfigError("[judge] second_model: " + "; ".join(found))
    if "ingest" in settings.stages and settings.ingest.mode != "raw":
        capabilities = backend_class(settings.memory.backend).capabilities
        if Capability.ENTRIES not in capabilities and not (
            settings.ingest.mode == "agentic" and Capability.AGENT_TOOLS in capabilities
        ):
            needs = "a memory with entries and a context document"
            if settings.ingest.mode == "agentic":
                needs += ", or a memory system that gives an agent tools of its own"
            raise ConfigError(
                f"[ingest] mode = '{settings.ingest.mode}' needs {needs}; [memory] backend ="
                f" '{settings.memory.backend}'"
                " takes sessions as they are: use mode = 'raw' (the system extracts on its own)"
            )
        if not settings.models.agent:
            from lme_bench.providers.errors import ProviderConfigError

            raise ProviderConfigError(
                f"[ingest] mode = '{settings.ingest.mode}' needs [models] agent "
                "(e.g. 'openai:gpt-4o-mini', or 'fake:note-taker' for a key-free run)"
            )
        check_models(settings, roles=("agent",))


async def locate_memories(
    build_ids: list[str], settings: Settings, run_id: str
) -> dict[str, MemoryLocation]:
    """Each build's memory by build id (`QuestionRef.build`; a LongMemEval question's is its
    question id), created empty where there is none, and its entry count: a
    memory that is gone or empty is ingested again even when the cache holds its ingestion.
    A system without an entry surface is not asked what it holds: its count is the sessions
    checkpointed as ingested."""
    system = open_system(settings)
    entry_memory = entry_memory_of(system)
    # Only a system without an entry surface is counted from the checkpoints (a rerun of a
    # finished run over entries opens no file for writing here).
    checkpoints = _checkpoints(settings) if entry_memory is None else None
    located: dict[str, MemoryLocation] = {}
    try:
        vault_id = ""
        if entry_memory is not None:
            vault_id = await entry_memory.get_or_create_vault(
                vault_title(configured_vault(settings))
            )
        for build_id in dict.fromkeys(build_ids):
            title = memory_title(build_id, run_id, settings.run.results_dir)
            if checkpoints is not None:
                memory_id = await system.open_memory(title)
                held = checkpoints.sessions_done(memory_id)
            elif entry_memory is not None:
                memory_id = await entry_memory.get_or_create_memory(vault_id, title)
                held = await _items_held(entry_memory, vault_id, memory_id)
            located[build_id] = MemoryLocation(build_id, vault_id, memory_id, held)
    finally:
        if checkpoints is not None:
            checkpoints.close()
        await system.close()
    if "ingest" in settings.stages:
        _check_claims(located, settings, run_id)
    return located


def _check_claims(located: dict[str, MemoryLocation], settings: Settings, run_id: str) -> None:
    """One error before any work when memories the run would ingest into were filled with other
    ingestion settings or code, instead of every question failing on its own."""
    filled = {loc.memory_id: qid for qid, loc in located.items() if loc.entries > 0}
    claims = claimed_fingerprints(_checkpoints_path(settings), list(filled))
    fingerprint = ingest_fingerprint(settings)
    changed = sorted(filled[m] for m, claimed in claims.items() if claimed != fingerprint)
    if changed:
        raise IngestSettingsChanged(
            f"run {run_id!r}: the memories of {len(changed)} of {len(located)} questions (e.g."
            f" {changed[0]}) were filled with other [ingest]/[memory]/agent settings or another"
            " version of the memory system's code (a plug-in backend's file counts); ingest"
            " under a new run id (or [cache] scope = 'shared'), or run the other stages alone"
            " on these memories"
        )


async def _items_held(backend: EntryMemory, vault_id: str, memory_id: str) -> int:
    """Entries, plus one when a context is stored (context-only ingestion writes no entries)."""
    entries = await backend.count_entries(memory_id)
    return entries + int(bool(await backend.get_context(vault_id, memory_id)))


def _claim(
    checkpoints: Checkpoints, memory_id: str, title: str, empty: bool, settings: Settings
) -> None:

    if checkpoints.claim(memory_id, ingest_fingerprint(settings), empty=empty) is not None:
        raise IngestSettingsChanged(
            f"memory {title!r} was filled with other [ingest]/[memory]/agent settings; "
            "use a new run id for new ingestion settings (or [cache] scope = 'shared')"
        )


PREPARING_AT_ONCE = 2
"""Ingestions preparing at once in a process (loading the question, opening its memory, building
the agent). Many starting together shared the interpreter lock evenly, so none reached its first
model call until nearly all were prepared; two at a time, the first calls go out as soon as the
first two are ready, and the rest prepare while those calls are out."""

_preparing = ThreadSafeSlots(PREPARING_AT_ONCE)


class _PreparingTurn:
    """A turn to prepare an ingestion; given back when its sessions start (or it fails)."""

    def __init__(self) -> None:
        self._held = False

    async def __aenter__(self) -> _PreparingTurn:
        await _preparing.acquire()
        self._held = True
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.done()

    def done(self) -> None:
        if self._held:
            self._held = False
            _preparing.release()


async def ingest_question(
    ref: QuestionRef, settings: Settings, run_id: str, location: MemoryLocation | None = None
) -> IngestOutcome:
    """Feed the memory of the question's build every session in date order (creating the
    memory unless `location` names it); one ingestion at a time per memory, across processes
    too (build_locks.py)."""
    title = memory_title(ref.build, run_id, settings.run.results_dir)
    folder = settings.run.results_dir
    async with BUILD_LOCKS.held(title, folder), _PreparingTurn() as turn:
        return await _ingest_question(ref, settings, run_id, location, turn)


async def _ingest_question(
    ref: QuestionRef,
    settings: Settings,
    run_id: str,
    location: MemoryLocation | None,
    turn: _PreparingTurn,
) -> IngestOutcome:
    started = time.perf_counter()
    view, _ = make_view(ref.load())
    system = open_system(settings)
    title = memory_title(ref.build, run_id, settings.run.results_dir)
    checkpoints = _checkpoints(settings)
    try:
        backend = entry_memory_of(system)
        if location is not None:
            vault_id, memory_id = location.vault_id, location.memory_id
        elif backend is None:
            vault_id, memory_id = "", await system.open_memory(title)
        else:
            vault_id = await backend.get_or_create_vault(vault_title(configured_vault(settings)))
            memory_id = await backend.get_or_create_memory(vault_id, title)

        async def held() -> int:
            if backend is None:
                return checkpoints.sessions_done(memory_id)
            return await _items_held(backend, vault_id, memory_id)

        empty, finished = False, None
        writer = None
        if "ingest" in settings.stages:
            empty = await held() == 0
            _claim(checkpoints, memory_id, title, empty, settings)
            if empty:  # checkpoints of an emptied memory no longer describe it
                checkpoints.forget(memory_id)
            writer = _session_writer(settings, system, backend, vault_id, checkpoints, fresh=empty)
            finished = (
                None
                if writer is None
                else _finished_build(checkpoints, memory_id, writer.mode, view)
            )
            if finished is not None:  # another ingestion (or process) built it: reused as it is
                ingestion_id, sessions = finished
            else:
                ingestion_id = checkpoints.begin_ingestion(memory_id)
        else:  # the memory as an earlier run's ingestion left it
            ingestion_id = checkpoints.ingestion_id(memory_id)
        turn.done()
        if finished is None:
            sessions = []
            if writer is not None:
                sessions = await feed_sessions(
                    ref.question_id, view, memory_id, checkpoints, writer
                )
        entries = await backend.count_entries(memory_id) if backend is not None else 0
        if not sessions and await held() == 0:
            raise MissingMemoryError(
                f"question {ref.question_id}: memory {title!r} "
                "holds nothing; run the ingest stage for this run first"
            )
        if backend is not None:
            health = await entry_memory_health(backend, vault_id, memory_id, entries)
            if settings.ingest.mode != "raw":  # the memory agent keeps its context document
                health = context_health(health, sessions)
        else:
            health = await searched_health(system, memory_id, view)
        excerpt = await read_excerpt(backend, vault_id, memory_id)
        for record in sessions:
            record.ingest_health = health
        usage = system.usage()
    finally:
        checkpoints.close()
        await system.close()
    return IngestOutcome(
        question_id=ref.question_id,
        vault_id=vault_id,
        memory_id=memory_id,
        entries=entries,
        seconds=time.perf_counter() - started,
        sessions=sessions,
        ingestion_id=ingestion_id,
        system_usage=usage,
        ingest_health=health,
        memory_excerpt=excerpt,
    )


def _finished_build(
    checkpoints: Checkpoints, memory_id: str, mode: str, view: QuestionView
) -> tuple[str, list[SessionRecord]] | None:
    """(ingestion id, session records) when an earlier ingestion finished the build: every
    session checkpointed done in this mode. Its ingestion id is kept, so the answers and
    verdicts cached under it stay valid; the records are marked resumed."""
    ingestion_id = checkpoints.ingestion_id(memory_id)
    states = checkpoints.states(memory_id, mode)
    found = [states.get(session.key) for session in view.sessions]
    if not ingestion_id or not found or any(f is None or f[0] != "done" for f in found):
        return None
    records = [record for _, record in filter(None, found)]
    for record in records:
        record.resumed = True
    return ingestion_id, records


def _session_writer(
    settings: Settings,
    system: MemorySystem,
    backend: EntryMemory | None,
    vault_id: str,
    checkpoints: Checkpoints,
    fresh: bool,
) -> SessionWriter | None:
    """What writes the sessions to the memory; None when the run reuses an earlier ingestion."""
    if "ingest" not in settings.stages:
        return None
    if settings.ingest.mode == "raw":
        if backend is None:
            return WholeSessions(system, checkpoints)
        return TurnEntries(backend, vault_id, checkpoints, fresh=fresh)
    model, policy, spec = model_for("agent", settings)  # LangChain: only when used
    limiter = provider_limiter(settings, spec.provider)
    if backend is None:  # the system's own tools
        from lme_bench.ingest.agent_tools import ToolAgentWriter

        return ToolAgentWriter(system, model, settings.ingest, checkpoints, policy, limiter)
    from lme_bench.ingest.agent import AgentWriter

    return AgentWriter(backend, vault_id, model, settings.ingest, checkpoints, policy, limiter)
