"""Ingest one question: its memory (opened by an opaque title: ingest/titles.py), then every
session in date order, raw or through the memory agent. Ingestion talks to the memory system
(lme_bench.backends.protocol.MemorySystem) and reaches its memories through one surface,
picked by the system's capabilities (surfaces.py): its entries, or the protocol alone."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from lme_bench.backends.configured import ConfiguredBackend, configured_backend
from lme_bench.backends.protocol import Capability, Usage
from lme_bench.backends.registry import backend_class
from lme_bench.common.limits import ThreadSafeSlots, provider_limiter
from lme_bench.config.settings import ConfigError, Settings
from lme_bench.dataset.shards import QuestionRef
from lme_bench.dataset.views import QuestionView, make_view
from lme_bench.ingest.build_locks import BUILD_LOCKS
from lme_bench.ingest.checkpoint import Checkpoints, claimed_fingerprints
from lme_bench.ingest.excerpt import MemoryExcerpt
from lme_bench.ingest.fingerprint import ingest_fingerprint
from lme_bench.ingest.health import UNCHECKED
from lme_bench.ingest.loop import SessionWriter, feed_sessions
from lme_bench.ingest.records import SessionRecord
from lme_bench.ingest.surfaces import MemorySurface, surface_of
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
    memory_id: str
    entries: int  # what the memory holds (MemorySurface.held): 0 = an empty memory


@dataclass(frozen=True, slots=True)
class IngestOutcome:
    question_id: str
    memory_id: str
    entries: int
    seconds: float
    sessions: list[SessionRecord] = field(default_factory=list)
    ingestion_id: str = ""  # which ingestion filled the memory (see Checkpoints.begin_ingestion)
    system_usage: Usage = field(default_factory=Usage)  # the memory system's own calls
    ingest_health: str = UNCHECKED  # ok | empty | context-unchanged (ingest/health.py)
    memory_excerpt: MemoryExcerpt | None = None  # what the memory holds after, read back
    # Where the build was saved for other workers ([memory] build_store; "": not saved): its
    # object's name in the build store and the sha256 of its bytes (lme_bench/run/builds.py).
    build_object: str = ""
    build_sha256: str = ""

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
    build_ids: list[str],
    settings: Settings,
    run_id: str,
    memory: ConfiguredBackend | None = None,
) -> dict[str, MemoryLocation]:
    """Each build's memory by build id (`QuestionRef.build`; a LongMemEval question's is its
    question id), created empty where there is none, and its entry count: a
    memory that is gone or empty is ingested again even when the cache holds its ingestion.
    A system without an entry surface is not asked what it holds: its count is the sessions
    checkpointed as ingested. `memory`: the run's memory system as configured (derived from
    `settings` when not given)."""
    system = (memory or configured_backend(settings)).open()
    # Opened only for a system counted from them (a rerun of a finished run over entries
    # opens no file for writing here).
    opened: list[Checkpoints] = []

    def checkpoints() -> Checkpoints:
        if not opened:
            opened.append(_checkpoints(settings))
        return opened[0]

    surface = surface_of(system, settings.ingest.mode, checkpoints)
    located: dict[str, MemoryLocation] = {}
    try:
        for build_id in dict.fromkeys(build_ids):
            title = memory_title(build_id, run_id, settings.run.results_dir)
            memory_id = await system.open_memory(title)
            located[build_id] = MemoryLocation(build_id, memory_id, await surface.held(memory_id))
    finally:
        for opened_checkpoints in opened:
            opened_checkpoints.close()
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
    ref: QuestionRef,
    settings: Settings,
    run_id: str,
    location: MemoryLocation | None = None,
    memory: ConfiguredBackend | None = None,
) -> IngestOutcome:
    """Feed the memory of the question's build every session in date order (creating the
    memory unless `location` names it); one ingestion at a time per memory, across processes
    too (build_locks.py). `memory`: the run's memory system as configured (derived from
    `settings` when not given)."""
    title = memory_title(ref.build, run_id, settings.run.results_dir)
    folder = settings.run.results_dir
    memory = memory or configured_backend(settings)
    async with BUILD_LOCKS.held(title, folder), _PreparingTurn() as turn:
        return await _ingest_question(ref, settings, run_id, location, memory, turn)


async def _ingest_question(
    ref: QuestionRef,
    settings: Settings,
    run_id: str,
    location: MemoryLocation | None,
    memory: ConfiguredBackend,
    turn: _PreparingTurn,
) -> IngestOutcome:
    started = time.perf_counter()
    view, _ = make_view(ref.load())
    system = memory.open()
    title = memory_title(ref.build, run_id, settings.run.results_dir)
    checkpoints = _checkpoints(settings)
    try:
        surface = surface_of(system, settings.ingest.mode, lambda: checkpoints)
        memory_id = await system.open_memory(title) if location is None else location.memory_id
        sessions: list[SessionRecord] = []
        writer: SessionWriter | None = None
        if "ingest" in settings.stages:
            empty = await surface.held(memory_id) == 0
            _claim(checkpoints, memory_id, title, empty, settings)
            if empty:  # checkpoints of an emptied memory no longer describe it
                checkpoints.forget(memory_id)
            writer = _session_writer(settings, surface, checkpoints, fresh=empty)
            finished = _finished_build(checkpoints, memory_id, writer.mode, view)
            if finished is not None:  # another ingestion (or process) built it: reused as it is
                (ingestion_id, sessions), writer = finished, None
            else:
                ingestion_id = checkpoints.begin_ingestion(memory_id)
        else:  # the memory as an earlier run's ingestion left it
            ingestion_id = checkpoints.ingestion_id(memory_id)
        turn.done()
        if writer is not None:
            sessions = await feed_sessions(ref.question_id, view, memory_id, checkpoints, writer)
        entries = await surface.entries(memory_id)
        if not sessions and await surface.held(memory_id) == 0:
            raise MissingMemoryError(
                f"question {ref.question_id}: memory {title!r} "
                "holds nothing; run the ingest stage for this run first"
            )
        health = await surface.health(memory_id, view, entries, sessions)
        excerpt = await surface.excerpt(memory_id)
        for record in sessions:
            record.ingest_health = health
        usage = system.usage()
    finally:
        checkpoints.close()
        await system.close()
    return IngestOutcome(
        question_id=ref.question_id,
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
    settings: Settings, surface: MemorySurface, checkpoints: Checkpoints, fresh: bool
) -> SessionWriter:
    """What writes the sessions to the memory, in the configured ingestion mode."""
    if settings.ingest.mode == "raw":
        return surface.raw_writer(checkpoints, fresh=fresh)
    model, policy, spec = model_for("agent", settings)  # LangChain: only when used
    limiter = provider_limiter(settings, spec.provider)
    return surface.agent_writer(model, settings.ingest, checkpoints, policy, limiter)
