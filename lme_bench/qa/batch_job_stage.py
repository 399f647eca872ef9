"""The answer stage through a provider's batch API (`[qa] batch = true`, single strategy): each
question's search runs as usual up to the reader's call, whose request is taken instead of sent;
the requests go as one job (the bodies the QA model's own client would send); once it has ended,
each question is answered again by the same code with the job's reply standing in for the
model, so the hypotheses table is the one a call-by-call run writes. Questions the job did not
answer are answered call by call.

Steps as for the judge (lme_bench.judge.batch_job_stage): `start_job`, `refresh_job`, then
`collect_answers`; `answer_in_batch_jobs` does all three, waiting in between.
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

from langchain_core.messages import AIMessage, BaseMessage, messages_to_dict

from lme_bench.config.settings import ConfigError, Settings
from lme_bench.dataset.shards import QuestionRef
from lme_bench.providers.batch_jobs.protocol import BatchJobApi, BatchRequest
from lme_bench.providers.factory import ModelSpec, model_for
from lme_bench.providers.registry import provider_for, titles_where
from lme_bench.qa.panel import QaPanel
from lme_bench.qa.stage import answer_question
from lme_bench.results.batch_jobs import BatchJob, record_outcome, refresh_job, submit_or_find
from lme_bench.results.qa_tables import HypothesisRow

STAGE = "answer"
_BATCH_TITLES = titles_where(lambda provider: provider.answer_batch)
ApiFactory = Callable[[ModelSpec, Settings], BatchJobApi]


@dataclass(frozen=True, slots=True)
class AnswerItem:
    """A question to answer and the memory to answer it from."""

    ref: QuestionRef
    memory_id: str


class ReaderRequest(Exception):
    """The reader's messages, taken where the model would have been called."""

    def __init__(self, messages: list[BaseMessage]) -> None:
        super().__init__("reader request taken")
        self.messages = messages


class _TakeRequest:
    async def ainvoke(self, messages: Sequence[BaseMessage]) -> AIMessage:
        raise ReaderRequest(list(messages))


class _JobReply:
    """The job's reply to exactly these messages, as the QA model would have returned it."""

    def __init__(self, messages: list[BaseMessage], reply: AIMessage) -> None:
        self.messages = messages
        self.reply = reply

    async def ainvoke(self, messages: Sequence[BaseMessage]) -> AIMessage:
        if messages_to_dict(list(messages)) != messages_to_dict(self.messages):
            raise RuntimeError("the batch reply belongs to another reader request")
        return self.reply


def reader_spec(settings: Settings) -> ModelSpec:
    """The QA model, checked for a batch job: a provider with one, and one call per question."""
    _, _, spec = model_for("qa", settings)
    return batch_spec(spec, settings)


def batch_spec(spec: ModelSpec, settings: Settings) -> ModelSpec:
    """`spec`, the QA model's, when a batch job can answer with it; else a ConfigError."""
    if not provider_for(spec.kind).answer_batch:
        raise ConfigError(
            f"[qa] batch = true: the QA model '{spec.label}' is served by a {spec.kind!r} "
            f"provider, which has no batch API here ({_BATCH_TITLES} only)"
        )
    if settings.qa.strategy != "single" or settings.qa.rerank:
        raise ConfigError(
            "[qa] batch = true: needs strategy = 'single' and rerank = false (one reader call"
            " per question, after the search)"
        )
    return spec


def openai_batch_api(spec: ModelSpec, settings: Settings) -> BatchJobApi:
    return provider_for(spec.kind).batch_job_api(spec, settings.models.timeout_s)


def request_body(messages: list[BaseMessage], qa: QaPanel) -> dict[str, Any]:
    """The body the QA model's client sends for `messages` (its extra body merged in)."""
    model: Any = qa.model
    payload: dict[str, Any] = model._get_request_payload(messages)
    extra = payload.pop("extra_body", None) or {}
    return payload | extra


def _custom_id(question_id: str, body: Mapping[str, Any]) -> str:
    text = json.dumps([question_id, body], sort_keys=True, ensure_ascii=False)
    return "r" + hashlib.sha256(text.encode()).hexdigest()[:31]


@dataclass(frozen=True, slots=True)
class Taken:
    """A question's reader request, or what ended it before one (an error, or a row)."""

    item: AnswerItem
    messages: list[BaseMessage] | None = None
    row: HypothesisRow | None = None
    error: BaseException | None = None


async def _take(item: AnswerItem, qa: QaPanel) -> Taken:
    try:
        row = await answer_question(item.ref, item.memory_id, qa, reader=_TakeRequest())
    except ReaderRequest as taken:
        return Taken(item, messages=taken.messages)
    except Exception as error:  # a memory fault: the question fails as its task would
        return Taken(item, error=error)
    return Taken(item, row=row)


def take_requests(items: Sequence[AnswerItem], qa: QaPanel) -> list[Taken]:
    """Every question's search, up to its reader request, one question at a time."""
    batch_spec(qa.spec, qa.settings)
    return [asyncio.run(_take(item, qa)) for item in items]


def _requests(taken: Sequence[Taken], qa: QaPanel) -> dict[str, BatchRequest]:
    """Reader requests by question id."""
    found = {}
    for one in taken:
        if one.messages is not None:
            body = request_body(one.messages, qa)
            question_id = one.item.ref.question_id
            found[question_id] = BatchRequest(_custom_id(question_id, body), body)
    return found


def start_job(
    taken: Sequence[Taken],
    qa: QaPanel,
    run_dir: Path,
    make_api: ApiFactory = openai_batch_api,
) -> BatchJob | None:
    """The job of the reader requests taken (found in `run_dir`, or submitted); None when no
    question needs the model."""
    requests = _requests(taken, qa)
    if not requests:
        return None
    spec = batch_spec(qa.spec, qa.settings)
    return submit_or_find(
        run_dir,
        STAGE,
        spec.provider,
        make_api(spec, qa.settings),
        list(requests.values()),
        {r.custom_id: [q, spec.label, 0] for q, r in requests.items()},
        "lme-bench answer",
    )


def _reply(body: Mapping[str, Any], qa: QaPanel) -> AIMessage:
    """A chat completion as the QA model's client makes it into a message."""
    model: Any = qa.model
    result = model._create_chat_result(dict(body))
    generation = result.generations[0]
    message: AIMessage = generation.message
    message.response_metadata = {**(generation.generation_info or {}), **message.response_metadata}
    return message


def collect_answers(
    taken: Sequence[Taken],
    job: BatchJob | None,
    qa: QaPanel,
    run_dir: Path,
    make_api: ApiFactory = openai_batch_api,
) -> list[HypothesisRow | BaseException]:
    """Each question's hypothesis row (or the error that ended it), in order; questions the
    job did not answer are answered call by call."""
    requests = _requests(taken, qa)
    results = {}
    if job is not None:
        results = make_api(batch_spec(qa.spec, qa.settings), qa.settings).results(job.job_id)
    answered: list[str] = []

    async def finish(one: Taken) -> HypothesisRow | BaseException:
        if one.error is not None or one.row is not None or one.messages is None:
            return one.error or one.row or RuntimeError("no request taken")
        ref, memory_id = one.item.ref, one.item.memory_id
        request = requests[ref.question_id]
        result = results.get(request.custom_id)
        reader = None
        if result is not None and result.reply is not None:
            try:
                reader = _JobReply(one.messages, _reply(result.reply, qa))
                answered.append(request.custom_id)
            except (KeyError, IndexError, TypeError, ValueError):
                reader = None  # a reply without a choice: answered call by call
        try:
            return await answer_question(ref, memory_id, qa, reader=reader)
        except Exception as error:
            return error

    rows = [asyncio.run(finish(one)) for one in taken]
    if job is not None:
        record_outcome(run_dir, job, answered)
    return rows


def answer_in_batch_jobs(
    items: Sequence[AnswerItem],
    qa: QaPanel,
    run_dir: Path,
    make_api: ApiFactory = openai_batch_api,
    sleep: Callable[[float], object] = time.sleep,
) -> list[HypothesisRow | BaseException]:
    """Search, send the reader requests as one job, wait for it and answer, in this process."""
    taken = take_requests(items, qa)
    job = start_job(taken, qa, run_dir, make_api)
    if job is not None:
        api = make_api(batch_spec(qa.spec, qa.settings), qa.settings)
        while not refresh_job(run_dir, job, api):
            sleep(qa.settings.qa.batch_poll_s)
    return collect_answers(taken, job, qa, run_dir, make_api)
