"""The judge stage through a provider's batch API (`[judge] batch = true`): every LLM judge
request of the run as one job per provider, the same bodies the call-by-call path sends (the
official judge body), then rows made from its replies by the same judge code, so the scores
table is the one a call-by-call run writes. Items the job failed or left expired are judged
call by call, with the usual retries.

In three steps, so an orchestrator can let go of its worker while the job runs:
`start_jobs` (submits, or finds the job a restarted run already submitted, kept in the run
folder), `refresh_jobs` (one look at each job), `collect_scores` (the rows). `judge_in_batch_jobs`
does all three, waiting in between.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from lme_bench.config.settings import ConfigError, Settings
from lme_bench.dataset.shards import QuestionRef
from lme_bench.judge.judge_input import rendered, with_judge_input
from lme_bench.judge.official_request import official_body
from lme_bench.judge.panel import JudgePanel, judge_model_specs
from lme_bench.judge.runner import LlmJudge
from lme_bench.judge.stage import judge_question
from lme_bench.providers.batch_jobs.protocol import BatchJobApi, BatchRequest, ItemResult
from lme_bench.providers.factory import ModelSpec
from lme_bench.providers.registry import provider_for, titles_where
from lme_bench.results.batch_jobs import BatchJob, record_outcome, refresh_job, submit_or_find
from lme_bench.results.qa_tables import HypothesisRow, ScoreRow

STAGE = "judge"
_BATCH_TITLES = titles_where(lambda provider: provider.judge_batch)
ApiFactory = Callable[[ModelSpec, Settings], BatchJobApi]


@dataclass(frozen=True, slots=True)
class JudgeItem:
    """A question to judge and the answer to judge."""

    ref: QuestionRef
    hypothesis: HypothesisRow


@dataclass(frozen=True, slots=True)
class PlannedCall:
    custom_id: str
    question_id: str
    judge: str  # "provider:model", as the score rows name it
    repeat: int
    provider: str
    body: dict[str, Any]


def judge_specs(settings: Settings) -> list[ModelSpec]:
    """The LLM judges' specs, in the order the run's judges have them (lme_bench.judge.panel);
    ConfigError for a judge whose provider has no batch API here."""
    specs = []
    for spec in judge_model_specs(settings):
        provider = provider_for(spec.kind)
        if not provider.judge_batch:
            raise ConfigError(
                f"[judge] batch = true: the judge '{spec.label}' is served by a {spec.kind!r} "
                f"provider, which has no batch API here ({_BATCH_TITLES} only)"
            )
        provider.check_batch(spec, _where(spec))
        specs.append(spec)
    return specs


def _where(spec: ModelSpec) -> str:
    return f"[judge] batch = true: the judge '{spec.label}'"


def batch_job_api(spec: ModelSpec, settings: Settings) -> BatchJobApi:
    """The batch API of the judge's provider."""
    provider = provider_for(spec.kind)
    provider.check_batch(spec, _where(spec))
    return provider.batch_job_api(spec, settings.models.timeout_s)


def opaque_id(*parts: object) -> str:
    """A custom id that names nothing: a digest of what the request is (question id, judge,
    repeat, body), never the question id or a label itself."""
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False)
    return "r" + hashlib.sha256(text.encode()).hexdigest()[:31]


def plan_calls(items: Sequence[JudgeItem], judges: JudgePanel) -> list[PlannedCall]:
    """Every LLM judge request the items need, in the order the stage would send them."""
    planned = []
    for item in items:
        if item.hypothesis.status != "ok" or item.hypothesis.hypothesis is None:
            continue
        scoring = judges.scoring(item.ref.benchmark)
        if scoring.own_judge is not None or scoring.score_answer is not None:
            continue  # its own scorer, no LLM verdict (lme_bench.judge.stage.judge_question)
        instance = item.ref.load()
        for spec, judge in zip(judges.specs, judges.llm, strict=True):
            given = with_judge_input(judge.prompts, scoring, instance)
            if given is None:  # as the stage judges it: no LLM verdict
                break
            prompt = rendered(judge.prompts, given, instance)
            text = prompt.render(instance.question, given.answer, item.hypothesis.hypothesis)
            body = request_body(judge, spec.model, text, spec.kind)
            for repeat in range(judges.repeats):
                custom_id = opaque_id(item.ref.question_id, spec.label, repeat, body)
                planned.append(
                    PlannedCall(
                        custom_id, item.ref.question_id, spec.label, repeat, spec.provider, body
                    )
                )
    return planned


def request_body(judge: LlmJudge, model: str, prompt: str, kind: str = "openai") -> dict[str, Any]:
    """The body the judge's own call would send: its request shape's where it has one (a
    model family's nearest body), else the official judge body. Bedrock's batch records hold
    the model's own body (Claude's), with the Converse request's cap and temperature."""
    shape = getattr(judge.model, "request_shape", None)
    if shape is None:
        return official_body(model, prompt)
    return provider_for(kind).batch_body(shape, model, prompt)


def _specs_by_provider(judges: JudgePanel) -> dict[str, ModelSpec]:
    return {spec.provider: spec for spec in judges.specs}


def start_jobs(
    items: Sequence[JudgeItem],
    judges: JudgePanel,
    run_dir: Path,
    make_api: ApiFactory = batch_job_api,
    description: str = "lme-bench judge",
) -> list[BatchJob]:
    """One job per provider of the items' judge requests: the one recorded in `run_dir` for
    exactly these requests, or a new one, recorded as soon as the provider accepts it."""
    calls = plan_calls(items, judges)
    specs = _specs_by_provider(judges)
    jobs = []
    for provider in sorted({c.provider for c in calls}):
        group = [c for c in calls if c.provider == provider]
        api = make_api(specs[provider], judges.settings)
        if len(group) < getattr(api, "minimum_requests", 1):
            continue  # too few for the provider's batch jobs: judged call by call
        jobs.append(
            submit_or_find(
                run_dir,
                STAGE,
                provider,
                api,
                [BatchRequest(c.custom_id, c.body) for c in group],
                {c.custom_id: [c.question_id, c.judge, c.repeat] for c in group},
                description,
            )
        )
    return jobs


def refresh_jobs(
    jobs: Sequence[BatchJob],
    judges: JudgePanel,
    run_dir: Path,
    make_api: ApiFactory = batch_job_api,
) -> bool:
    """Look once at every job still running and record what it says; whether all have ended."""
    return refresh_by_specs(jobs, judges.specs, judges.settings, run_dir, make_api)


def refresh_by_specs(
    jobs: Sequence[BatchJob],
    specs: Sequence[ModelSpec],
    settings: Settings,
    run_dir: Path,
    make_api: ApiFactory = batch_job_api,
) -> bool:
    """`refresh_jobs` given the judges' specs alone (a look from outside the run, which
    builds no judge)."""
    by_provider = {spec.provider: spec for spec in specs}
    ended = [
        refresh_job(run_dir, job, make_api(by_provider[job.provider], settings))
        for job in jobs
        if job.state == "running"
    ]
    return all(ended)


def wait_for_jobs(
    jobs: Sequence[BatchJob],
    judges: JudgePanel,
    run_dir: Path,
    make_api: ApiFactory = batch_job_api,
    sleep: Callable[[float], object] = time.sleep,
) -> None:
    """Look at the jobs every `[judge] batch_poll_s` seconds until every one has ended."""
    while not refresh_jobs(jobs, judges, run_dir, make_api):
        sleep(judges.settings.judge.batch_poll_s)


class BatchReply:
    """A model whose one reply came from the batch job: the judge code reads it as it reads a
    live reply, so the row is the same."""

    def __init__(self, message: AIMessage, body: Mapping[str, Any]) -> None:
        self.message = message
        self.prompt = body["messages"][0]["content"]

    async def ainvoke(self, messages: Sequence[BaseMessage]) -> AIMessage:
        (message,) = messages
        if not isinstance(message, HumanMessage) or message.content != self.prompt:
            raise RuntimeError("the batch reply belongs to another judge prompt")
        return self.message


def _replies(
    results: Mapping[str, tuple[ItemResult, BatchJobApi]], calls: Sequence[PlannedCall]
) -> dict[tuple[str, str, int], BatchReply]:
    replies = {}
    for call in calls:
        result, api = results.get(call.custom_id, (None, None))
        if result is None or api is None or result.reply is None:
            continue
        try:
            message = api.message(result.reply)
        except (KeyError, IndexError, TypeError, ValueError):
            continue  # a reply without a choice: judged call by call
        replies[(call.question_id, call.judge, call.repeat)] = BatchReply(message, call.body)
    return replies


async def _judge_item(
    item: JudgeItem, judges: JudgePanel, replies: Mapping[tuple[str, str, int], BatchReply]
) -> list[ScoreRow]:
    """The rows `lme_bench.judge.stage.judge_question` makes, each LLM verdict read from the
    job's reply where it has one, else asked call by call."""
    ref = item.ref

    def reply_of(judge: LlmJudge, repeat: int) -> LlmJudge:
        reply = replies.get((ref.question_id, judge.name, repeat))
        if reply is None:
            return judge
        return LlmJudge(judge.name, reply, judge.prompts, judge.policy)  # nothing is sent

    return await judge_question(ref, item.hypothesis, judges, stand_in=reply_of)


def collect_scores(
    items: Sequence[JudgeItem],
    jobs: Sequence[BatchJob],
    judges: JudgePanel,
    run_dir: Path,
    make_api: ApiFactory = batch_job_api,
) -> dict[str, list[ScoreRow]]:
    """Every item's score rows, by question id, once the jobs have ended; what a job did not
    answer is judged call by call, and each job's record says which items were which."""
    calls = plan_calls(items, judges)
    specs = _specs_by_provider(judges)
    results: dict[str, tuple[ItemResult, BatchJobApi]] = {}
    for job in jobs:
        api = make_api(specs[job.provider], judges.settings)
        results |= {c: (r, api) for c, r in api.results(job.job_id).items()}
    replies = _replies(results, calls)

    async def every_item() -> list[list[ScoreRow]]:
        return await asyncio.gather(*(_judge_item(i, judges, replies) for i in items))

    rows = asyncio.run(every_item())
    for job in jobs:
        record_outcome(run_dir, job, (c for c in job.items if _has(replies, job, c)))
    return {item.ref.question_id: found for item, found in zip(items, rows, strict=True)}


def _has(replies: Mapping[tuple[str, str, int], BatchReply], job: BatchJob, custom_id: str) -> bool:
    question_id, judge, repeat = job.items[custom_id]
    return (question_id, judge, int(repeat)) in replies


def judge_in_batch_jobs(
    items: Sequence[JudgeItem],
    judges: JudgePanel,
    run_dir: Path,
    make_api: ApiFactory = batch_job_api,
    sleep: Callable[[float], object] = time.sleep,
) -> dict[str, list[ScoreRow]]:
    """Submit (or find), wait for and read the run's judge jobs, in this process."""
    jobs = start_jobs(items, judges, run_dir, make_api)
    wait_for_jobs(jobs, judges, run_dir, make_api, sleep)
    return collect_scores(items, jobs, judges, run_dir, make_api)
