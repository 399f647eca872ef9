"""Reading two runs for a comparison: their scores.parquet, one judge's labels, retrieval rows.

A question's label for a judge is that judge's first judgment (repeat 0) by the official rule, as
in the run's own summary; a question without one (its answer or judge call failed, or the
fallback cannot grade it) is not judged (label None) and counted apart (`not_judged`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from lme_bench.metrics.qa import Judged
from lme_bench.metrics.ranking_metrics import METRIC_NAMES

SCORES_FILE = "scores.parquet"
RETRIEVAL_FILE = "retrieval.parquet"
RETRIEVAL_METRICS: tuple[str, ...] = METRIC_NAMES  # recall_any, recall_all, ndcg_any at every k
GRANULARITIES = ("session", "turn")

_SCORE_COLUMNS = (
    "question_id",
    "question_type",
    "judge",
    "judge_kind",
    "repeat",
    "prompt_name",
    "prompt_sha256",
    "label",
    "status",
    "is_abstention",
)
_RETRIEVAL_COLUMNS = (
    "question_id",
    "question_type",
    "is_abstention",
    "granularity",
    "status",
    "n_evidence",
)


class CompareError(ValueError):
    """Bad input to a comparison: a missing run or file, or runs that cannot be compared."""


@dataclass(frozen=True, slots=True)
class ScoreRecord:
    question_id: str
    question_type: str
    judge: str
    judge_kind: str
    repeat: int
    prompt_name: str
    prompt_sha256: str
    label: bool | None
    status: str
    is_abstention: bool  # the gold's flag: `_abs` ids, LoCoMo's adversarial questions
    score: float | None = None  # BEAM's rubric score (older tables have no such column)


@dataclass(frozen=True, slots=True)
class RunScores:
    run_id: str
    path: Path  # the scores.parquet read
    records: list[ScoreRecord]

    def judges(self) -> dict[str, str]:
        """Judge name -> kind (llm | fallback), for every judge with rows in this run."""
        return {r.judge: r.judge_kind for r in self.records}


@dataclass(frozen=True, slots=True)
class JudgeLabels:
    judge: str
    kind: str
    prompts: dict[str, list[str]]  # prompt name -> the sha256 values seen with it
    judged: list[Judged]  # one per question the judge scored; label None when not judged

    @property
    def not_judged(self) -> int:
        return sum(j.label is None for j in self.judged)


@dataclass(frozen=True, slots=True)
class QuestionRetrieval:
    question_type: str
    metrics: dict[str, float]
    user_evidence: bool = True  # evidence in user turns (run_retrieval.py averages only these)


def _read(path: Path, columns: Sequence[str], what: str) -> list[dict[str, Any]]:
    try:
        table = pq.read_table(path)
    except Exception as exc:  # pyarrow raises several types for unreadable files
        raise CompareError(f"cannot read {what} {path}: {exc}") from exc
    missing = [c for c in columns if c not in table.column_names]
    if missing:
        raise CompareError(f"{path} is not a {what} (missing columns: {', '.join(missing)})")
    rows: list[dict[str, Any]] = table.to_pylist()
    return rows


def run_dir(results_dir: Path, run_id: str) -> Path:
    path = Path(results_dir) / run_id
    if not path.is_dir():
        raise CompareError(f"run {run_id!r} not found: {path} is not a directory")
    return path


def load_scores(results_dir: Path, run_id: str) -> RunScores | None:
    """The run's judged scores; None when it was not judged (a retrieval-only run)."""
    path = run_dir(results_dir, run_id) / SCORES_FILE
    if not path.is_file():
        return None
    rows = _read(path, _SCORE_COLUMNS, "scores table")
    if not rows:
        raise CompareError(f"run {run_id!r} has no scores: {path} holds no rows")
    records = [
        ScoreRecord(**{c: row[c] for c in _SCORE_COLUMNS}, score=row.get("score")) for row in rows
    ]
    return RunScores(run_id, path, records)


def load_retrieval(
    results_dir: Path, run_id: str, granularity: str
) -> dict[str, QuestionRetrieval] | None:
    """One granularity's metrics of the non-abstention questions with status ok; None: no file."""
    path = run_dir(results_dir, run_id) / RETRIEVAL_FILE
    if not path.is_file():
        return None
    rows = _read(path, (*_RETRIEVAL_COLUMNS, *RETRIEVAL_METRICS), "retrieval table")
    found: dict[str, QuestionRetrieval] = {}
    for row in rows:
        if row["granularity"] != granularity or row["is_abstention"] or row["status"] != "ok":
            continue
        values = {m: row[m] for m in RETRIEVAL_METRICS}
        if all(v is not None for v in values.values()):
            found[row["question_id"]] = QuestionRetrieval(
                row["question_type"], values, row["n_evidence"] > 0
            )
    return found


def _pick(run: RunScores, names: list[str], kind: str) -> str | None:
    if len(names) > 1:
        raise CompareError(
            f"run {run.run_id!r} has several {kind} judges ({', '.join(names)}); "
            "pick one with --judge"
        )
    return names[0] if names else None


def default_judge(run: RunScores) -> str:
    """The run's LLM judge when it has one, else its fallback judge."""
    judges = run.judges()
    llm = sorted(name for name, kind in judges.items() if kind == "llm")
    other = sorted(name for name, kind in judges.items() if kind != "llm")
    chosen = _pick(run, llm, "LLM") or _pick(run, other, "fallback")
    if chosen is None:  # pragma: no cover - load_scores refuses empty tables
        raise CompareError(f"run {run.run_id!r} has no judged rows in {run.path}")
    return chosen


def judge_labels(run: RunScores, judge: str) -> JudgeLabels:
    """One label per question for `judge`: its first judgment (repeat 0)."""
    mine = [r for r in run.records if r.judge == judge]
    if not mine:
        available = ", ".join(sorted(run.judges())) or "none"
        raise CompareError(
            f"run {run.run_id!r} has no scores by judge {judge!r} in {run.path} "
            f"(judges there: {available})"
        )
    types: dict[str, str] = {}
    abstains: dict[str, bool] = {}
    first: dict[str, bool] = {}
    prompts: dict[str, set[str]] = {}
    for r in mine:
        types.setdefault(r.question_id, r.question_type)
        abstains.setdefault(r.question_id, r.is_abstention)
        if r.repeat == 0 and r.status == "ok" and r.label is not None:
            first[r.question_id] = r.label
        prompts.setdefault(r.prompt_name, set()).add(r.prompt_sha256)
    return JudgeLabels(
        judge=judge,
        kind=mine[0].judge_kind,
        prompts={name: sorted(shas) for name, shas in sorted(prompts.items())},
        judged=[Judged(q, types[q], first.get(q), abstains[q]) for q in sorted(types)],
    )


def _describe(run: RunScores, labels: JudgeLabels) -> str:
    hashes = sorted({sha[:12] for shas in labels.prompts.values() for sha in shas})
    return f"run {run.run_id!r} by {labels.judge} (prompt sha256 {', '.join(hashes)})"


def same_judging(a: JudgeLabels, b: JudgeLabels) -> bool:
    """Same judge, and every prompt used by both runs has the same sha256 in both."""
    if a.judge != b.judge:
        return False
    return all(a.prompts[name] == b.prompts[name] for name in a.prompts.keys() & b.prompts.keys())


def select_labels(
    run_a: RunScores, run_b: RunScores, judge: str | None, *, allow_different_judges: bool
) -> tuple[JudgeLabels, JudgeLabels]:
    """Each run's labels for `judge` (default: each run's own default judge), checked to match."""
    a = judge_labels(run_a, judge or default_judge(run_a))
    b = judge_labels(run_b, judge or default_judge(run_b))
    if not allow_different_judges and not same_judging(a, b):
        raise CompareError(
            f"the runs were judged differently: {_describe(run_a, a)}, {_describe(run_b, b)}; "
            "labels from different judges or prompts are not comparable "
            "(pass --allow-different-judges to compare anyway)"
        )
    return a, b
