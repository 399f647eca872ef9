"""The QA part of a run's summary as typed records (what summary.json holds under "qa")."""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict


class AccuracyRecord(TypedDict):
    accuracy: float | None
    correct: int
    n: int
    ci95: tuple[float, float] | None


class Figures(TypedDict):
    per_type: dict[str, AccuracyRecord]
    task_averaged: AccuracyRecord
    overall: AccuracyRecord
    abstention: AccuracyRecord


class Retries(TypedDict):
    retries: int
    retries_throttled: int
    retries_timeout: int
    retries_connection: int
    retries_server: int
    capped_replies: int
    timeouts: int


class PromptSource(TypedDict):
    source: str
    description: str
    script_sha256: str | None


class JudgeRecord(Figures, Retries):
    kind: str  # "llm" or "fallback"
    prompt_version: str
    prompt_sha256: list[str]
    types_judged: int
    not_judged: int
    not_judged_ids: list[str]
    repeat_agreement: float | None
    attribution: dict[str, int]
    prompts: NotRequired[PromptSource]  # LLM judges only, as the three below
    unreadable: NotRequired[int]
    readable_only: NotRequired[Figures]


class Agreement(TypedDict):
    judges: list[str]
    agreement: float | None
    n: int
    disputed: list[str]


class Answers(Retries):
    questions: int
    answered: int
    failed: int
    llm_calls: int
    input_tokens: int
    output_tokens: int


class QaReport(TypedDict):
    judges: dict[str, JudgeRecord]
    agreement: list[Agreement]
    answers: Answers
    # a successor judge's profile figures ([judge] profile; lme_bench.judge.calibration)
    judge_profile: NotRequired[dict[str, Any]]
