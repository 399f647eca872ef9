"""What every provider batch API client offers: submit requests as one job, ask how it goes,
read each request's reply or error by its custom id."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from langchain_core.messages import AIMessage

# Where a job stands, in one vocabulary for every provider.
JobState = Literal["running", "completed", "failed", "expired", "cancelled"]
FINAL_STATES: frozenset[str] = frozenset({"completed", "failed", "expired", "cancelled"})


@dataclass(frozen=True, slots=True)
class BatchRequest:
    """One request of a job: its opaque id and the body the call-by-call path would send."""

    custom_id: str
    body: dict[str, Any]


@dataclass(frozen=True, slots=True)
class JobStatus:
    state: JobState
    provider_status: str  # the provider's own word (validating, in_progress, ended, ...)
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def final(self) -> bool:
        return self.state in FINAL_STATES


@dataclass(frozen=True, slots=True)
class ItemResult:
    """One request's outcome: the reply body (a chat completion), or why there is none
    (`error`, and `expired` when the job's window closed before it was run)."""

    custom_id: str
    reply: dict[str, Any] | None
    error: str | None = None
    expired: bool = False


class BatchJobApi(Protocol):
    """A provider's batch API for one endpoint (chat completions, messages)."""

    provider: str  # "openai", "anthropic", ...

    def submit(self, requests: Sequence[BatchRequest], description: str) -> str:
        """Create a job of `requests`; its id."""
        ...

    def status(self, job_id: str) -> JobStatus: ...

    def results(self, job_id: str) -> dict[str, ItemResult]:
        """Every finished item's outcome by custom id; items missing are to be redone."""
        ...

    def message(self, reply: dict[str, Any]) -> AIMessage:
        """An item's reply as the provider's call-by-call client returns it."""
        ...
