"""The judge stage for a BEAM question: each configured LLM judge ([models] judge, [judge]
second_model), each repeat, scores the answer with BeamJudge (rubric items judged one call each,
event ordering aligned first), the official prompts read from `[judge] beam_repo`.

A row's `score` is the question's reported figure (llm_judge_score; event ordering's tau_norm),
its `label` None: a rubric score is no yes/no verdict, so LongMemEval's accuracy leaves BEAM
rows out and the report shows BEAM's own figures (beam.report). `raw_verdict` holds
the figures BEAM's evaluator writes for the question (JSON). There is no fallback row: without
an LLM judge a BEAM question has no official score. The judge gets temperature 0, as BEAM's
evaluator sets it, and an output cap of its own (the LongMemEval judge's 10 tokens would cut
the JSON reply short); the run's manifest records that request, read from the calls themselves
(`beam_request_shapes`).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lme_bench.builtin_benchmarks.beam.judge import BeamJudge, BeamQuestionResult
from lme_bench.builtin_benchmarks.beam.prompts import (
    METRICS_FILE,
    PROMPTS_FILE,
    RUBRIC_PROMPT,
    BeamPrompts,
    BeamPromptsError,
    load_beam_prompts,
)
from lme_bench.builtin_benchmarks.beam.scoring import EVENT_ORDERING
from lme_bench.builtin_benchmarks.beam.stored import stored_beam_gold
from lme_bench.common.limits import provider_limiter
from lme_bench.config.settings import ConfigError, ModelsSettings, Settings
from lme_bench.dataset.shards import QuestionRef
from lme_bench.providers.calls import ChatCall, set_call_columns
from lme_bench.providers.chat_requests import chat_request_record
from lme_bench.providers.factory import (
    ModelSpec,
    build_chat_model,
    parse_model,
    retry_policy,
)
from lme_bench.providers.registry import provider_for
from lme_bench.results.qa_tables import HypothesisRow, ScoreRow

PROMPT_VERSION = "beam-official"
BEAM_JUDGE_MAX_TOKENS = 2048
"""Output tokens per BEAM judge reply (BEAM's evaluator sets no cap; a reply is a short JSON)."""
REPLY_CHARS = 500  # of an unreadable reply kept in the row
REQUEST_FAMILY = "beam-judge"  # the family its requests are recorded under in the manifest
REQUEST_DIFFERS = (
    "BEAM's own judge: temperature 0 as BEAM's evaluator sets it, and an output cap of"
    f" {BEAM_JUDGE_MAX_TOKENS} tokens where the evaluator sets none; the messages (a rubric"
    " item's prompt, or an equivalence question with its system text) are left out"
)


class BeamJudgingError(ConfigError):
    """A run that cannot judge its BEAM questions as configured; names the setting."""


BEAM_REPO_VARIABLE = "LME_JUDGE__BEAM_REPO"  # the environment's name for [judge] beam_repo
CLONE = "git clone https://github.com/mohammadtavakoli78/BEAM"
MISSING_BEAM_REPO = (
    "[judge] beam_repo is not set: this run judges BEAM questions with an LLM judge, which"
    f" reads BEAM's official rubric prompt from a BEAM checkout ({CLONE}); set [judge] beam_repo"
    f" (or {BEAM_REPO_VARIABLE}) to its folder, or set"
    ' [models] judge = "none" (no official BEAM score), or leave "judge" out of [run] stages'
)
NO_BATCH = (
    "[judge] batch = true: BEAM questions are judged call by call (a rubric item per call, event"
    " ordering's alignment decided reply by reply), not in a batch job; set [judge] batch ="
    " false for a BEAM run"
)


@functools.lru_cache(maxsize=4)
def _prompts(checkout: Path, stamps: tuple[float, ...]) -> BeamPrompts:
    return load_beam_prompts(checkout)  # read again when a file's time or size changes


def _stamps(checkout: Path) -> tuple[float, ...]:
    found: list[float] = []
    for relative in (PROMPTS_FILE, METRICS_FILE):
        try:
            status = (checkout / relative).stat()
        except OSError:
            found += [-1, -1]
        else:
            found += [status.st_mtime_ns, status.st_size]
    return tuple(found)


def beam_prompts(settings: Settings) -> BeamPrompts:
    """The official prompts of `[judge] beam_repo` (a BeamPromptsError naming what is wrong)."""
    if settings.judge.beam_repo is None:
        raise BeamJudgingError(MISSING_BEAM_REPO)
    checkout = Path(settings.judge.beam_repo).expanduser().resolve()
    try:
        return _prompts(checkout, _stamps(checkout))
    except BeamPromptsError as exc:  # the file and what is wrong, then the setting to fix
        raise BeamPromptsError(
            f"[judge] beam_repo = {str(settings.judge.beam_repo)!r}: {exc}; set [judge]"
            f" beam_repo (or the environment variable {BEAM_REPO_VARIABLE}) to the folder of a"
            f" BEAM checkout ({CLONE})"
        ) from None


def optional_beam_prompts(settings: Settings) -> BeamPrompts | None:
    """`beam_prompts`, or None when `[judge] beam_repo` is unset or unusable (the estimate)."""
    try:
        return beam_prompts(settings)
    except ConfigError:
        return None


@dataclass(frozen=True, slots=True)
class NamedBeamJudge:
    name: str
    judge: BeamJudge


def _beam_model(spec: ModelSpec, settings: Settings, models: ModelsSettings) -> ChatCall:
    """The judge's chat call with BEAM's cap and temperature 0 (Anthropic's Messages API for
    an `anthropic` provider, system text apart, as that API takes it)."""
    own: ChatCall | None = provider_for(spec.kind).chat_call(spec, models, BEAM_JUDGE_MAX_TOKENS)
    return own if own is not None else build_chat_model(spec, models, BEAM_JUDGE_MAX_TOKENS)


def _judge_texts(settings: Settings) -> list[str]:
    return [t for t in (settings.models.judge, settings.judge.second_model) if t]


def _beam_calls(settings: Settings) -> list[tuple[ModelSpec, ChatCall]]:
    """Each LLM judge's chat call as BEAM's judge makes it (temperature 0, BEAM's cap)."""
    models = settings.models.model_copy(update={"temperature": 0.0})
    found = []
    for text in _judge_texts(settings):
        spec = parse_model("judge", text, settings)
        found.append((spec, _beam_model(spec, settings, models)))
    return found


def beam_judges(settings: Settings) -> list[NamedBeamJudge]:
    """The run's LLM judges set up for BEAM; none when the run has no LLM judge."""
    if not _judge_texts(settings):
        return []
    prompts = beam_prompts(settings)
    found = []
    for spec, model in _beam_calls(settings):
        policy = retry_policy(spec, settings.models)
        limiter = provider_limiter(settings, spec.provider)
        found.append(NamedBeamJudge(spec.label, BeamJudge(model, prompts, policy, limiter)))
    return found


def beam_request_shapes(settings: Settings) -> dict[str, dict[str, Any]]:
    """For the run manifest: each LLM judge's request as BEAM's judge sends it ("provider:model"
    -> its record: REQUEST_FAMILY, the endpoint, the body without the messages), read from the
    very chat calls `beam_judges` builds."""
    return {
        spec.label: chat_request_record(spec, call, REQUEST_FAMILY, REQUEST_DIFFERS)
        for spec, call in _beam_calls(settings)
    }


def check_beam_judging(settings: Settings) -> None:
    """At plan time, for a run judging BEAM questions: the checkout, the judges' models and
    no batch judging; one ConfigError naming the setting otherwise."""
    if "judge" not in settings.stages:
        return
    if settings.judge.batch and (settings.models.judge or settings.judge.second_model):
        raise BeamJudgingError(NO_BATCH)
    beam_judges(settings)
    beam_request_shapes(settings)  # what the manifest will record, read before any work


def estimated_calls(
    ability: str, rubric: Sequence[str], response: str, prompts: BeamPrompts | None
) -> list[tuple[tuple[str, ...], str]]:
    """The judge calls a BEAM question takes, for the cost estimate: (prompt parts, "rubric")
    per rubric item, and for event ordering one equivalence question per item (an answer that
    lists the reference order; a differing order asks more). Without the checkout's prompts, the
    item and the response stand in for the prompt."""
    calls: list[tuple[tuple[str, ...], str]] = [
        ((prompts.rubric_prompt(item, response) if prompts else f"{item}\n{response}",), "rubric")
        for item in rubric
    ]
    if ability == EVENT_ORDERING:
        for item in rubric:
            messages = prompts.equivalence(item, item) if prompts else [("user", item + item)]
            calls.append((tuple(text for _, text in messages), "judge"))
    return calls


def evaluation_record(result: BeamQuestionResult) -> dict[str, Any]:
    """The question's figures as BEAM's evaluator writes them (its `llm_judge_score`, the
    judge's parsed replies, and for event ordering precision, recall, f1, tau_norm and
    final_score), plus the items lme-bench could not read a score from."""
    replies: list[Any] = []
    for item in result.items:
        try:
            replies.append(json.loads(item.reply))
        except json.JSONDecodeError:
            replies.append({"score": item.score, "reply": item.reply[:REPLY_CHARS]})
    record: dict[str, Any] = {
        "llm_judge_score": result.llm_judge_score,
        "llm_judge_responses": replies,
        "item_scores": [item.score for item in result.items],
        "unreadable_items": result.unreadable_items,
    }
    if result.ordering is not None:
        ordering = result.ordering
        record |= {
            "precision": ordering.precision,
            "recall": ordering.recall,
            "f1": ordering.f1,
            "tau_norm": ordering.tau_norm,  # NaN where the official figure is
            "final_score": ordering.final_score,
        }
    return record


def beam_row(
    ref: QuestionRef, name: str, repeat: int, prompts: BeamPrompts, result: BeamQuestionResult
) -> ScoreRow:
    ok = result.status == "ok"
    row = ScoreRow(
        question_id=ref.question_id,
        question_type=ref.question_type,
        is_abstention=ref.is_abstention,
        judge=name,
        judge_kind="llm",
        repeat=repeat,
        prompt_version=PROMPT_VERSION,
        prompt_name=RUBRIC_PROMPT,
        prompt_sha256=prompts.rubric_sha256,
        label=None,
        readable=result.unreadable_items == 0 if ok else None,
        raw_verdict=json.dumps(evaluation_record(result), ensure_ascii=False) if ok else "",
        status=result.status,
        attribution="",
        llm_calls=result.account.calls,
        input_tokens=result.account.input_tokens,
        output_tokens=result.account.output_tokens,
        seconds=result.seconds,
        error=result.error,
        score=result.reported,
    )
    set_call_columns(row, result.account)
    return row


async def judge_beam_question(
    ref: QuestionRef,
    hypothesis: HypothesisRow,
    settings: Settings,
    judges: Sequence[NamedBeamJudge] | None = None,
) -> list[ScoreRow]:
    """A row per LLM judge and repeat; none without an LLM judge (no official score).
    `judges`: the run's, built once (else built here)."""
    judges = beam_judges(settings) if judges is None else judges
    if not judges or hypothesis.hypothesis is None:
        return []
    gold = stored_beam_gold(ref.shard)
    rows = []
    for named in judges:
        for repeat in range(settings.judge.repeats):
            result = await named.judge.score(gold, hypothesis.hypothesis)
            rows.append(beam_row(ref, named.name, repeat, named.judge.prompts, result))
    return rows


class RubricJudge:
    """BEAM's own judge (the benchmark's `own_judge` hook, lme_bench.benchmarks.scoring_hooks):
    rubric scores, no yes/no verdict. `for_run` gives it the run's judges, built once."""

    prompts_setting = "[judge] beam_repo"  # where its prompts are read from

    def __init__(self, judges: Sequence[NamedBeamJudge] | None = None) -> None:
        self.judges = judges

    def for_run(self, settings: Settings) -> RubricJudge:
        """The judge with the run's BEAM judges built (the judge stage asks once per run)."""
        return RubricJudge(tuple(beam_judges(settings)))

    async def score(
        self, ref: QuestionRef, hypothesis: HypothesisRow, settings: Settings
    ) -> list[ScoreRow]:
        return await judge_beam_question(ref, hypothesis, settings, self.judges)

    def check(self, settings: Settings) -> None:
        check_beam_judging(settings)

    def request_shapes(self, settings: Settings) -> dict[str, dict[str, Any]]:
        """Each LLM judge's request as this judge sends it, for the manifest."""
        return beam_request_shapes(settings)

    def cache_part(self, settings: Settings) -> dict[str, str] | None:
        """The digests of the checkout's files the judge reads its prompts from, not its path
        (None: no usable checkout, so no LLM judge of BEAM questions)."""
        prompts = optional_beam_prompts(settings)
        if prompts is None:
            return None
        return {"prompts": prompts.prompts_sha256, "metrics": prompts.metrics_sha256}

    def estimated_calls(
        self, question: Any, hypothesis: str, settings: Settings
    ) -> list[tuple[tuple[str, ...], str]]:
        prompts = optional_beam_prompts(settings)
        return estimated_calls(question.question_type, question.rubric, hypothesis, prompts)


RUBRIC_JUDGE = RubricJudge()
