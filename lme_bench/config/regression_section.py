"""`[regression]`: when a run counts as regressed against its baseline (`compare_to`).

A watched figure regressed when the paired 95% interval of its change (this run minus the
baseline, over the questions both scored) lies wholly below zero and the drop is at least
`min_drop` points (percentage points of an accuracy or of a 0-1 retrieval metric). Figures
have stable names: `qa.overall`, `qa.task_averaged`, `qa.abstention` and
`retrieval.<session|turn>.<metric>@<k>` (recall_any, recall_all or ndcg_any at k = 1, 3, 5,
10, 30 or 50). These settings change no result: a run id may be rerun with others.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

QA_FIGURES = {
    "qa.overall": "QA overall",
    "qa.task_averaged": "QA task-averaged",
    "qa.abstention": "QA abstention",
}
RETRIEVAL_GRANULARITIES = ("session", "turn")
RETRIEVAL_METRICS = ("recall_any", "recall_all", "ndcg_any")
RETRIEVAL_KS = (1, 3, 5, 10, 30, 50)  # lme_bench.metrics.ranking_metrics.K_VALUES
DEFAULT_WATCH = ("qa.overall", "qa.task_averaged", "retrieval.session.recall_all@5")


def figure_names() -> list[str]:
    """Every figure `[regression] watch` accepts, in a stable order."""
    retrieval = [
        f"retrieval.{g}.{m}@{k}"
        for g in RETRIEVAL_GRANULARITIES
        for m in RETRIEVAL_METRICS
        for k in RETRIEVAL_KS
    ]
    return [*QA_FIGURES, *retrieval]


def figure_label(name: str) -> str:
    """How reports name a figure: "QA overall", "session recall_all@5"."""
    if name in QA_FIGURES:
        return QA_FIGURES[name]
    _, granularity, metric = name.split(".", 2)
    return f"{granularity} {metric}"


class RegressionSettings(BaseModel):
    """When a run counts as regressed against its baseline (`compare_to`): it then still
    writes every table, and ends failed (`lme-bench run` exits 3)."""

    model_config = ConfigDict(extra="forbid")

    watch: list[str] = Field(
        default_factory=lambda: list(DEFAULT_WATCH),
        description="the figures watched: qa.overall, qa.task_averaged, qa.abstention, "
        "retrieval.<session|turn>.<recall_any|recall_all|ndcg_any>@<1|3|5|10|30|50>",
    )
    min_drop: float = Field(
        default=2.0,
        ge=0.0,
        le=100.0,
        description="the smallest drop that counts, in points (percentage points of an "
        "accuracy or of a 0-1 retrieval metric); the drop's paired 95% interval must also lie "
        "wholly below zero",
    )

    @field_validator("watch")
    @classmethod
    def _known_figures(cls, names: list[str]) -> list[str]:
        known = figure_names()
        for name in names:
            if name not in known:
                raise ValueError(
                    f"unknown figure {name!r}; known: qa.overall, qa.task_averaged, "
                    "qa.abstention, retrieval.<session|turn>.<recall_any|recall_all|ndcg_any>"
                    "@<1|3|5|10|30|50>"
                )
        return list(dict.fromkeys(names))
