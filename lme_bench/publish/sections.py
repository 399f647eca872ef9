"""A benchmark's own section of summary.json (LoCoMo's official F1 by category, BEAM's rubric
scores by ability, a plug-in's figures), computed again from a bundle's rows by the
benchmark's `run_figures` hook (lme_bench.benchmarks.scoring_hooks) over the gold labels of the
dataset: the section's figures need the dataset (`verify --dataset`), which the bundle does not
carry."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lme_bench.benchmarks.scoring_hooks import BenchmarkScoring, FiguresInput
from lme_bench.benchmarks.split import splitter_for
from lme_bench.config.settings import replay_settings
from lme_bench.dataset.shards import prepare_dataset
from lme_bench.publish.errors import PublishError
from lme_bench.publish.figures import Tables
from lme_bench.results.run_summary import RunSummary


def has_section(summary: RunSummary, scoring: BenchmarkScoring) -> bool:
    """Whether the run's benchmark writes a section of its own that verify can recompute."""
    written = summary.model_dump(exclude_unset=True)
    return scoring.run_figures is not None and isinstance(written.get(summary.benchmark), dict)


def section_again(
    summary: RunSummary,
    files: Mapping[str, bytes],
    tables: Tables,
    scoring: BenchmarkScoring,
    dataset: Path,
) -> dict[str, Any] | None:
    """The benchmark's section as the bundle's rows and the dataset's gold give it (None: the
    hook writes none)."""
    if "config.json" not in files:
        raise PublishError("config.json: not in the bundle (its settings give the section)")
    recorded = json.loads(files["config.json"]).get("settings") or {}
    settings = replay_settings(recorded, "config.json", **{"dataset.path": str(dataset)})
    assert scoring.run_figures is not None  # has_section said so
    retrieval, hypotheses, scores = tables
    asked = {r.question_id for r in (*retrieval, *hypotheses, *scores)}
    with tempfile.TemporaryDirectory(prefix="lme-verify-") as scratch:
        split, kind = splitter_for(settings.dataset.benchmark, dataset)
        prepared = prepare_dataset(dataset, Path(scratch) / "cache", split, kind)
        refs = [r for r in prepared.questions if r.question_id in asked]
        run_dir = Path(scratch) / "run"
        run_dir.mkdir()
        given = FiguresInput(
            run_dir=run_dir,
            refs=refs,
            retrieval=retrieval,
            hypotheses=hypotheses,
            scores=scores,
            verdicts=[] if scoring.own_judge is not None else scores,
            qa=summary.qa,
            settings=settings,
        )
        figures = scoring.run_figures(given)
    return figures.section if figures is not None else None
