"""The `[memory.params]` of the built-ins that need an optional extra (mem0, langgraph,
graphiti), apart from their backends so settings, the reference pages and the checks of a
config read them on a plain install, where the backend itself cannot be imported."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from lme_bench.backends.protocol import BackendParams


class Mem0Params(BackendParams):
    infer: bool = Field(
        default=True,
        description="mem0 extracts facts with [models] memory (true), or stores each turn as it"
        " is (false: no model calls, hits carry their turn index)",
    )
    collection_name: str = Field(
        default="lme_bench",
        pattern=r"^[A-Za-z0-9_-]{1,64}$",
        description="the Qdrant collection in each memory's folder (another name: new memories)",
    )
    messages_per_add: int = Field(
        default=0,
        ge=0,
        description="with infer: turns sent to mem0 per add call, one extraction each"
        " (0: a whole session per call); a reply cut by the output cap is asked again for"
        " each half of its turns",
    )
    session_date_in_prompt: bool = Field(
        default=True,
        description="with infer: tell mem0's extractor the session's date in its custom"
        " instructions (mem0's open-source add takes no timestamp; it would assume today)",
    )
    custom_instructions: str | None = Field(
        default=None, description="with infer: mem0's custom extraction instructions"
    )
    lock_wait_s: float = Field(
        default=600.0,
        ge=0,
        description="seconds to wait for a memory another process holds open (embedded"
        " Qdrant lets one process at a time use a folder)",
    )


class LangGraphParams(BackendParams):
    store: Literal["memory", "sqlite"] = Field(
        default="sqlite",
        description="'sqlite': a persistent SqliteStore in the backend's data folder (use it for"
        " runs, reruns and Prefect flows); 'memory': an InMemoryStore shared by the backend"
        " objects of one process, lost when the process ends (it does not survive a process"
        " boundary)",
    )
    extract: Literal["none", "langmem"] = Field(
        default="none",
        description="'none': every turn is stored as it is; 'langmem': LangMem's memory manager"
        " extracts memories from each session with [models] memory",
    )


class GraphitiParams(BackendParams):
    candidates: int = Field(
        50,
        ge=1,
        description="facts ranked per search before the top k are kept (at least k): a fixed"
        " depth, so a shallower search returns the top of a deeper one",
    )
    max_coroutines: int = Field(
        4, ge=1, description="Graphiti's cap on concurrent model and embedding calls per step"
    )
    json_retries: int = Field(
        1,
        ge=0,
        le=3,
        description="times the memory model is asked again when its reply is not the JSON"
        " object Graphiti asked for",
    )
