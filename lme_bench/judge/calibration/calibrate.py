"""`lme-bench judge calibrate`: each candidate judge re-judges the reference's answers (same
question, gold answer and hypothesis, the configured prompts, the run's judge code with its
retries and limits), and a profile per candidate records how far its labels are from the
reference's."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from lme_bench.common.limits import provider_limiter
from lme_bench.config.settings import Settings
from lme_bench.dataset.loader import iter_questions
from lme_bench.dataset.models import is_abstention_id
from lme_bench.judge.calibration.figures import Pair, calibration_figures, type_tables
from lme_bench.judge.calibration.profile import (
    PROFILE_KIND,
    PROFILE_VERSION,
    now_text,
    profile_file_name,
    write_profile,
)
from lme_bench.judge.calibration.reference import (
    CalibrationInputError,
    Reference,
    read_reference,
)
from lme_bench.judge.family_requests import judge_request
from lme_bench.judge.official_request import MAX_TOKENS, OfficialJudgeRequest, official_body
from lme_bench.judge.prompts import PromptSet, judge_prompts
from lme_bench.judge.runner import LlmJudge
from lme_bench.providers.calls import ChatCall
from lme_bench.providers.errors import ProviderConfigError
from lme_bench.providers.factory import ModelSpec, parse_model, problems
from lme_bench.providers.factory import retry_policy as policy_for
from lme_bench.results.manifest import git_state
from lme_bench.results.qa_tables import ScoreRow


@dataclass(frozen=True, slots=True)
class Question:
    question_id: str
    question_type: str
    question: str
    answer: str


@dataclass(frozen=True, slots=True)
class Calibrated:
    judge: str
    path: Path
    profile: dict[str, Any]


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def dataset_questions(path: Path, reference: Reference) -> dict[str, Question]:
    """The dataset's question, type and gold answer of every question the reference judged;
    a reference question the dataset lacks is an error naming where the reference holds it."""
    wanted = {v.question_id for v in reference.verdicts}
    found: dict[str, Question] = {}
    for loaded in iter_questions(path):
        item = loaded.instance
        if item.question_id in wanted:
            found[item.question_id] = Question(
                item.question_id, item.question_type, item.question, item.answer
            )
    for verdict in reference.verdicts:
        if verdict.question_id not in found:
            raise CalibrationInputError(
                f"{verdict.place}: field question_id: {verdict.question_id!r} is not in the "
                f"dataset {path}"
            )
    return found


def request_shape(model: ChatCall, spec: ModelSpec) -> dict[str, Any]:
    """The request the candidate is sent, without its prompt: what the request object records
    of its body (`request_shape.record(model)`), else the official body's fields, else model,
    max_tokens, temperature and n as the judge sends them through LangChain."""
    exposed = getattr(model, "request_shape", None)
    record = getattr(exposed, "record", None)  # a request shape that records its body
    if callable(record):
        recorded = record(spec.model)
        if isinstance(recorded, dict):
            return recorded
    if isinstance(model, OfficialJudgeRequest):
        body = official_body(model.model, "")
        body["messages"] = "one user message: the judge prompt"
        return {"api": "openai chat.completions (openai SDK)", **body}
    return {
        "api": f"LangChain ({type(model).__name__})",
        "model": spec.model,
        "max_tokens": MAX_TOKENS,
        "temperature": 0,
        "n": 1,
        "messages": "one user message: the judge prompt",
    }


def candidate_judge(text: str, settings: Settings) -> tuple[LlmJudge, ModelSpec]:
    """The candidate's judge, built as a run builds its judge; a model that cannot be used
    (no key, no base URL, an unknown provider) is a ConfigError before any call."""
    spec = parse_model("judge", text, settings)
    found = problems(spec)
    if found:
        raise ProviderConfigError(f"--judge {text}: " + "; ".join(found))
    judge = LlmJudge(
        spec.label,
        judge_request(spec, settings),
        judge_prompts(settings.judge),
        policy_for(spec, settings.models),
        provider_limiter(settings, spec.provider),
    )
    return judge, spec


async def _judge_all(
    judge: LlmJudge, reference: Reference, questions: dict[str, Question], concurrency: int
) -> list[ScoreRow]:
    gate = asyncio.Semaphore(concurrency)

    async def one(question_id: str, hypothesis: str) -> ScoreRow:
        question = questions[question_id]
        async with gate:
            return await judge.judge(
                question_id=question_id,
                question_type=question.question_type,
                is_abstention=is_abstention_id(question_id),
                question=question.question,
                answer=question.answer,
                hypothesis=hypothesis,
                repeat=0,
            )

    return list(
        await asyncio.gather(*(one(v.question_id, v.hypothesis) for v in reference.verdicts))
    )


def _prompts_record(prompts: PromptSet) -> dict[str, Any]:
    return {
        "source": prompts.source,
        "description": prompts.description,
        "official": prompts.source == "official",
        "version": prompts.version,
        "script_sha256": prompts.script_sha256,
        "sha256": prompts.hashes,
    }


def _code_version() -> dict[str, Any]:
    try:
        version: str | None = metadata.version("lme-bench")
    except metadata.PackageNotFoundError:
        version = None
    return {"lme_bench": version, "git": git_state()}


def build_profile(
    judge: LlmJudge,
    spec: ModelSpec,
    rows: Sequence[ScoreRow],
    reference: Reference,
    dataset: Path,
    dataset_sha256: str,
    resamples: int,
    seed: int,
) -> dict[str, Any]:
    reference_labels = {v.question_id: v.label for v in reference.verdicts}
    pairs = [
        Pair(r.question_id, r.question_type, reference_labels[r.question_id], bool(r.label))
        for r in rows
        if r.status == "ok" and r.label is not None
    ]
    failed = sorted(r.question_id for r in rows if r.status != "ok" or r.label is None)
    return {
        "kind": PROFILE_KIND,
        "profile_version": PROFILE_VERSION,
        "created_at": now_text(),
        "candidate": {"judge": judge.name, "request": request_shape(judge.model, spec)},
        "prompts": _prompts_record(judge.prompts),
        "reference": {
            "path": str(reference.path),
            "kind": reference.kind,
            "sha256": reference.sha256,
            "judge_model": reference.judge_model,
            "prompt_version": reference.prompt_version,
            "questions": len(reference.verdicts),
        },
        "dataset": {"path": str(dataset), "sha256": dataset_sha256},
        "n": len(pairs),
        "failed": {
            "n": len(failed),
            "question_ids": failed,
            "note": "the candidate's call failed after its retries: left out of every figure",
        },
        "bootstrap": {
            "resamples": resamples,
            "seed": seed,
            "method": "percentile, questions resampled within each question type",
        },
        "figures": calibration_figures(pairs, resamples=resamples, seed=seed),
        "tables": {t: table.as_dict() for t, table in type_tables(pairs).items()},
        "pairs": [
            {
                "question_id": p.question_id,
                "question_type": p.question_type,
                "reference": p.reference,
                "candidate": p.candidate,
            }
            for p in pairs
        ],
        "code": _code_version(),
    }


def calibrate(
    reference_path: Path,
    dataset: Path,
    candidates: Sequence[str],
    settings: Settings,
    out_dir: Path,
    *,
    resamples: int = 2000,
    seed: int = 0,
) -> list[Calibrated]:
    """Re-judge the reference's answers with every candidate; one profile file each, written
    atomically under `out_dir`. Input errors come before any model call."""
    reference = read_reference(reference_path)
    questions = dataset_questions(dataset, reference)
    dataset_sha256 = file_sha256(dataset)
    built = [candidate_judge(text, settings) for text in candidates]
    done = []
    for judge, spec in built:
        rows = asyncio.run(_judge_all(judge, reference, questions, settings.limits.judge))
        profile = build_profile(
            judge, spec, rows, reference, dataset, dataset_sha256, resamples, seed
        )
        path = out_dir / profile_file_name(judge.name)
        write_profile(path, profile)
        done.append(Calibrated(judge.name, path, profile))
    return done
