"""Settings of how a run executes: its folder, stages, task cache and concurrency limits."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from lme_bench.config.storage_urls import credential_problem, default_work_dir, is_url

Stage = Literal["ingest", "retrieval", "answer", "judge", "report"]
STAGES: tuple[Stage, ...] = ("ingest", "retrieval", "answer", "judge", "report")


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RunSettings(_Section):
    id: str | None = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
    series: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$",
        description="the series the run belongs to, whose runs `lme-bench history` lists and "
        "compares; default: the deployment's name for a deployment run, else the config's stem",
    )
    results_dir: Path = Field(
        default=Path("results"),
        description="the folder that holds run folders, or an fsspec URL (s3://, gs://, az://):"
        " a run at a URL works in a local working folder (work_dir) and is copied to the URL "
        "when it finishes, its manifest last",
    )
    results_url: str | None = Field(
        default=None,
        description="set from a URL results_dir: where the run folders are; results_dir is "
        "then the local working folder",
    )
    work_dir: Path | None = Field(
        default=None,
        description="the local working folder of a run whose results_dir is a URL (its "
        "checkpoints, memory stores, the run folder before it is copied); default: "
        "~/.cache/lme-bench/work/<scheme>-<digest of the URL>",
    )
    store_retries: int = Field(
        default=4,
        ge=0,
        le=20,
        description="with results, builds or the cache at a URL: times a call the object store"
        " did not answer (down, timed out, throttling) is tried again before the stage fails",
    )
    store_retry_wait_s: float = Field(
        default=1.0,
        ge=0,
        le=300,
        description="the wait before the first retry of an object store call, doubled for each"
        " next one (at most 20 s)",
    )
    store_timeout_s: float = Field(
        default=30.0,
        gt=0,
        le=600,
        description="how long one object store call may take to connect, and each read (S3)",
    )
    stages: list[Stage] | None = Field(
        default=None,
        description="default: ingest, retrieval, report, plus answer and judge when [models] qa "
        "is set (judging uses [models] judge, else the no-LLM fallback)",
    )
    link_base: str | None = Field(
        default=None,
        pattern=r"^https?://[^\s]+/$",
        description="URL at which results_dir is served (e.g. http://127.0.0.1:4201/, what "
        "`make serve` starts); the UI's links to result files use it, file:// links otherwise",
    )
    task_tags: bool = Field(
        default=False,
        description="tag task runs by stage and question type; each tagged task run then "
        "asks the Prefect server for tag concurrency slots, one request at a time per process",
    )
    questions_per_task: int | None = Field(
        default=None,
        ge=1,
        le=1000,
        description="questions one task run works through, in the stages that call no model "
        "(retrieval; raw ingestion into a system that calls none); default: a task per "
        "question for small runs, about four task runs per ingest slot for big ones",
    )
    processes: int | None = Field(
        default=None,
        ge=1,
        le=64,
        description="worker processes that run those batches; default: one per core, up to "
        "4; 1 runs them in the flow's own process",
    )

    @model_validator(mode="before")
    @classmethod
    def _results_at_url(cls, data: object) -> object:
        # Path("s3://b/x") would be the local folder s3:/b/x: a URL becomes results_url, and
        # results_dir the local working folder named for it
        if not isinstance(data, dict):
            return data
        value = data.get("results_dir")
        if isinstance(value, str) and value.startswith("file://"):
            return {**data, "results_dir": value.removeprefix("file://"), "results_url": None}
        if is_url(value):
            url = str(value).rstrip("/")
            problem = credential_problem(url, "[run] results_dir / --results-dir")
            if problem:
                raise ValueError(problem)
            work = data.get("work_dir") or default_work_dir(url)
            return {**data, "results_dir": work, "results_url": url}
        kept = data.get("results_url")
        if kept and value is not None:  # kept only beside its own working folder (a replay)
            work = data.get("work_dir") or default_work_dir(str(kept))
            if Path(str(value)) != Path(str(work)):
                return {**data, "results_url": None}
        return data


class CacheSettings(_Section):
    """Task results are persisted and reused: a rerun redoes only what failed or changed."""

    scope: Literal["run", "shared", "off"] = Field(
        default="run",
        description="run: reruns of a run id reuse its successes; shared: one ingestion per "
        "question and memory system, reused across runs (QA/judge sweeps); off: no cache",
    )
    storage: str | None = Field(
        default=None,
        description="folder or fsspec URL for task results; default <results_dir>/.cache/tasks",
    )

    @field_validator("storage")
    @classmethod
    def _no_credentials(cls, value: str | None) -> str | None:
        problem = credential_problem(value, "[cache] storage") if value else None
        if problem:
            raise ValueError(problem)
        return value


class ProviderLimit(_Section):
    """Limits on one provider's calls (a name of [providers] or openai / bedrock / fake)."""

    concurrency: int | None = Field(default=None, ge=1, le=1024, description="calls in flight")
    rpm: float | None = Field(default=None, gt=0, description="requests per minute")


class LimitSettings(_Section):
    """How much runs at once. Stage limits bound the tasks in flight in one flow process;
    provider limits bound model calls in one process, or across every process when `shared`
    (through Prefect global concurrency limits, which cost a server round trip per call)."""

    ingest: int = Field(default=8, ge=1, le=256, description="questions ingesting at once")
    retrieval: int = Field(default=16, ge=1, le=256)
    answer: int = Field(default=16, ge=1, le=256)
    judge: int = Field(default=16, ge=1, le=256)
    shared: bool = Field(
        default=False, description="provider limits hold across processes (scale-out)"
    )
    providers: dict[str, ProviderLimit] = Field(default_factory=dict)

    def for_stage(self, stage: str) -> int:
        if stage not in ("ingest", "retrieval", "answer", "judge"):
            raise ValueError(f"no limit for stage {stage!r}")
        return int(getattr(self, stage))
