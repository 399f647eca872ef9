"""Batch jobs of a run, kept in its folder (`batches/<stage>-<digest>.json`) from the moment a
provider accepts one: a restarted run finds its job there and waits for it rather than paying
for the same requests twice. Each record maps the job's opaque custom ids back to what they
stand for (question, judge, repeat), which never leaves the run folder.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from lme_bench.providers.batch_jobs.protocol import BatchJobApi, BatchRequest
from lme_bench.results.atomic import write_text_atomically

FOLDER = "batches"
# What a provider's batch API charges against its call-by-call price.
PRICE_FACTORS = {"openai": 0.5, "anthropic": 0.5, "bedrock": 0.5}


@dataclass
class BatchJob:
    stage: str  # judge | answer
    provider: str  # the [models] provider name the requests went to
    api: str  # whose batch API: openai, anthropic, bedrock
    job_id: str
    requests_sha256: str  # of every request body with its custom id
    items: dict[str, list[Any]]  # custom id -> [question id, model, repeat]
    submitted_at: str
    state: str = "running"
    provider_status: str = ""
    counts: dict[str, int] = field(default_factory=dict)
    answered: list[str] = field(default_factory=list)  # custom ids answered by the job
    redone: list[str] = field(default_factory=list)  # custom ids redone call by call
    finished_at: str | None = None

    @property
    def price_factor(self) -> float:
        return PRICE_FACTORS.get(self.api, 1.0)

    def file_name(self) -> str:
        return f"{self.stage}-{self.provider}-{self.requests_sha256[:16]}.json"


def job_path(run_dir: Path, job: BatchJob) -> Path:
    return Path(run_dir) / FOLDER / job.file_name()


def write_job(run_dir: Path, job: BatchJob) -> None:
    write_text_atomically(job_path(run_dir, job), json.dumps(asdict(job), indent=1) + "\n")


def read_jobs(run_dir: Path, stage: str | None = None) -> list[BatchJob]:
    """The run's recorded jobs (of `stage`), oldest first; a record that cannot be read is an
    error naming its file, never skipped (skipping it would pay for its requests again)."""
    folder = Path(run_dir) / FOLDER
    jobs = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            job = BatchJob(**json.loads(path.read_text()))
        except (ValueError, TypeError) as exc:
            raise ValueError(f"{path}: not a batch job record ({exc})") from None
        if stage is None or job.stage == stage:
            jobs.append(job)
    return sorted(jobs, key=lambda j: j.submitted_at)


def find_job(run_dir: Path, stage: str, provider: str, requests_sha256: str) -> BatchJob | None:
    for job in read_jobs(run_dir, stage):
        if job.provider == provider and job.requests_sha256 == requests_sha256:
            return job
    return None


def answered_in_batch_jobs(jobs: Iterable[BatchJob]) -> dict[tuple[str, str, int], float]:
    """(question id, model, repeat) of every item a job answered -> its price factor."""
    found: dict[tuple[str, str, int], float] = {}
    for job in jobs:
        for custom_id in job.answered:
            question_id, model, repeat = job.items[custom_id]
            found[(question_id, model, int(repeat))] = job.price_factor
    return found


def manifest_entries(run_dir: Path) -> list[dict[str, Any]]:
    """What the manifest says of each job: ids, state, counts (no custom id mapping)."""
    return [
        {
            "stage": job.stage,
            "provider": job.provider,
            "api": job.api,
            "job_id": job.job_id,
            "state": job.state,
            "provider_status": job.provider_status,
            "requests": len(job.items),
            "answered": len(job.answered),
            "redone_call_by_call": len(job.redone),
            "price_factor": job.price_factor,
            "submitted_at": job.submitted_at,
            "finished_at": job.finished_at,
        }
        for job in read_jobs(run_dir)
    ]


def submit_or_find(
    run_dir: Path,
    stage: str,
    provider: str,
    api: BatchJobApi,
    requests: Sequence[BatchRequest],
    items: dict[str, list[Any]],
    description: str,
) -> BatchJob:
    """The job recorded in `run_dir` for exactly these requests, or a new one, recorded as soon
    as the provider accepts it. `items`: custom id -> what it stands for."""
    text = json.dumps(sorted([r.custom_id, r.body] for r in requests), sort_keys=True)
    digest = hashlib.sha256(text.encode()).hexdigest()  # whatever order they came in
    job = find_job(run_dir, stage, provider, digest)
    if job is None:
        job = BatchJob(
            stage=stage,
            provider=provider,
            api=api.provider,
            job_id=api.submit(requests, description),
            requests_sha256=digest,
            items=items,
            submitted_at=datetime.now(UTC).isoformat(),
        )
        write_job(run_dir, job)
    return job


def refresh_job(run_dir: Path, job: BatchJob, api: BatchJobApi) -> bool:
    """Look once at a job still running and record what it says; whether it has ended."""
    if job.state != "running":
        return True
    status = api.status(job.job_id)
    seen = (status.state, status.provider_status, status.counts)
    if seen != (job.state, job.provider_status, job.counts):
        job.state, job.provider_status, job.counts = seen
        write_job(run_dir, job)
    return job.state != "running"


def record_outcome(run_dir: Path, job: BatchJob, answered: Iterable[str]) -> None:
    """Which of the job's items its replies answered; the others were redone call by call."""
    job.answered = sorted(set(answered) & set(job.items))
    job.redone = sorted(set(job.items) - set(job.answered))
    job.finished_at = job.finished_at or datetime.now(UTC).isoformat()
    write_job(run_dir, job)
