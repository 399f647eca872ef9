"""The estimate as a table, and beside it what a run spent (so every run measures its error)."""

from __future__ import annotations

from typing import Any

from lme_bench.report.labels import count, dollars
from lme_bench.results.estimates import Estimate


def _error(estimated: int, spent: int) -> str:
    return "-" if not spent else f"{100 * (estimated - spent) / spent:+.0f}%"


def estimate_markdown(estimate: Estimate) -> str:
    builds = f" ({estimate.builds} memory builds)" if estimate.shares_builds else ""
    lines = [
        f"Estimate for {estimate.questions} questions{builds} at {estimate.latency_s:g} s a call:",
        "",
        "| stage | model | calls | input tokens | output tokens | cost | wall |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for s in estimate.stages:
        lines.append(
            f"| {s.stage} | {s.model} | {count(s.calls)} | {count(s.input_tokens)} "
            f"| {count(s.output_tokens)} | {dollars(s.cost)} | {s.wall_s / 60:.1f} min |"
        )
    if not estimate.stages:
        lines.append("| (no stage calls a model) | | 0 | 0 | 0 | $0.0000 | 0.0 min |")
    total = sum(s.wall_s for s in estimate.stages)
    lines += [
        "",
        f"Total: {dollars(estimate.total_cost)} (from `[prices]`; '-' where a model has no price), "
        f"{total / 60:.1f} min.",
        "",
        estimate.assumptions,
    ]
    return "\n".join(lines) + "\n"


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
            f"{count(e)} / {count(s)} ({_error(e, s)})"
            for e, s in zip(row["estimated"], row["spent"], strict=True)
        ]
        lines.append(f"| {row['stage']} | {row['model']} | " + " | ".join(cells) + " |")
    lines += ["", found["assumptions"]]
    return "\n".join(lines) + "\n"
