"""A run's estimate as data: per stage, the model calls, tokens, cost and wall time expected
(lme_bench.run.estimate computes it, lme_bench.report renders it), and what a run spent
beside it, from its tables."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from lme_bench.ingest.records import SessionRecord
from lme_bench.results.qa_tables import HypothesisRow, ScoreRow


@dataclass
class StageEstimate:
    stage: str
    model: str
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    longest_question_calls: int = 0
    cost: float | None = None
    wall_s: float = 0.0


@dataclass
class Estimate:
    questions: int
    latency_s: float
    stages: list[StageEstimate] = field(default_factory=list)
    assumptions: str = ""  # what the estimate assumed, in words
    builds: int | None = None  # memory builds ingested (None: one per question)

    @property
    def shares_builds(self) -> bool:
        """Some questions ask one memory build (LoCoMo, BEAM), so builds are counted apart."""
        return self.builds is not None and self.builds != self.questions

    @property
    def total_cost(self) -> float | None:
        costs = [s.cost for s in self.stages]
        return None if any(c is None for c in costs) else sum(c or 0.0 for c in costs)


def spent_by_stage(
    records: Sequence[SessionRecord],
    hypotheses: Sequence[HypothesisRow],
    scores: Sequence[ScoreRow],
) -> dict[tuple[str, str], tuple[int, int, int]]:
    """(stage, model) -> (calls, input tokens, output tokens) the run's tables recorded."""
    spent: dict[tuple[str, str], list[int]] = {}

    def add(key: tuple[str, str], calls: int, tokens_in: int, tokens_out: int) -> None:
        found = spent.setdefault(key, [0, 0, 0])
        found[0], found[1], found[2] = found[0] + calls, found[1] + tokens_in, found[2] + tokens_out

    for r in records:
        add(("ingest", ""), r.llm_calls, r.input_tokens, r.output_tokens)
    for h in hypotheses:
        add(("answer", h.qa_model), h.llm_calls, h.input_tokens, h.output_tokens)
    for s in scores:
        if s.judge_kind == "llm":
            add(("judge", s.judge), s.llm_calls, s.input_tokens, s.output_tokens)
    return {k: (v[0], v[1], v[2]) for k, v in spent.items()}


def _spent_for(stage: StageEstimate, spent: dict[tuple[str, str], tuple[int, int, int]]) -> Any:
    key = ("ingest", "") if stage.stage == "ingest" else (stage.stage, stage.model)
    return spent.get(key, (0, 0, 0))


def beside_spent(
    estimate: Estimate, spent: dict[tuple[str, str], tuple[int, int, int]]
) -> dict[str, Any]:
    """Each stage's estimate, what was spent, and the estimate's error against it."""
    rows = []
    for stage in estimate.stages:
        calls, tokens_in, tokens_out = _spent_for(stage, spent)
        rows.append(
            {
                "stage": stage.stage,
                "model": stage.model,
                "estimated": [stage.calls, stage.input_tokens, stage.output_tokens],
                "spent": [calls, tokens_in, tokens_out],
            }
        )
    found: dict[str, Any] = {"questions": estimate.questions}
    if estimate.shares_builds:
        found["builds"] = estimate.builds
    return found | {"stages": rows, "assumptions": estimate.assumptions}
