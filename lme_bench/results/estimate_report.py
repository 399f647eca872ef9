"""The estimate as a table, and beside it what a run spent (so every run measures its error)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lme_bench.ingest.records import SessionRecord
from lme_bench.results.qa_tables import HypothesisRow, ScoreRow
from lme_bench.run.estimate import CONTEXT_CHARS, HYPOTHESIS_CHARS, Estimate, StageEstimate

ASSUMPTIONS = (
    f"Assumed: a {CONTEXT_CHARS:,}-character context document, {HYPOTHESIS_CHARS}-character "
    "answers; tokens are whitespace words for fake models, else 4 characters a token; wall time "
    "is calls times latency over the calls the limits allow in flight, stages summed (an upper "
    "bound: they overlap)."
)


def _money(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def estimate_markdown(estimate: Estimate) -> str:
    lines = [
        f"Estimate for {estimate.questions} questions at {estimate.latency_s:g} s a call:",
        "",
        "| stage | model | calls | input tokens | output tokens | cost | wall |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for s in estimate.stages:
        lines.append(
            f"| {s.stage} | {s.model} | {s.calls:,} | {s.input_tokens:,} | {s.output_tokens:,} "
            f"| {_money(s.cost)} | {s.wall_s / 60:.1f} min |"
        )
    if not estimate.stages:
        lines.append("| (no stage calls a model) | | 0 | 0 | 0 | 0.00 | 0.0 min |")
    total = sum(s.wall_s for s in estimate.stages)
    lines += [
        "",
        f"Total: {_money(estimate.total_cost)} (from `[prices]`; '-' where a model has no price), "
        f"{total / 60:.1f} min.",
        "",
        ASSUMPTIONS,
    ]
    return "\n".join(lines) + "\n"


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


def _error(estimated: int, spent: int) -> str:
    return "-" if not spent else f"{100 * (estimated - spent) / spent:+.0f}%"


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
    return {"questions": estimate.questions, "stages": rows, "assumptions": ASSUMPTIONS}


def beside_spent_markdown(found: dict[str, Any]) -> str:
    lines = [
        "## Estimate beside what was spent",
        "",
        "| stage | model | calls est. / spent | input tokens est. / spent | output tokens est. "
        "/ spent |",
        "|---|---|---:|---:|---:|",
    ]
    for row in found["stages"]:
        cells = [
            f"{e:,} / {s:,} ({_error(e, s)})"
            for e, s in zip(row["estimated"], row["spent"], strict=True)
        ]
        lines.append(f"| {row['stage']} | {row['model']} | " + " | ".join(cells) + " |")
    lines += ["", found["assumptions"]]
    return "\n".join(lines) + "\n"
