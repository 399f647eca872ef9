"""`lme-bench compare` names each run's memory system (backend, parameters' digest, how its hits
were mapped) and flags intervals of few paired questions, never showing [x, x] as a range."""

from __future__ import annotations

import json
import re
from pathlib import Path

from lme_bench.compare import build_comparison
from lme_bench.report.compare_render import render_markdown
from lme_bench.report.labels import SMALL_SAMPLE
from lme_bench.results.memory_identity import params_digest
from tests.compare.test_compare import RESAMPLES, results  # noqa: F401 (a fixture)

PARAMS = {"collection": "lme", "top_k": 20}


def _record(run_dir: Path, backend: str, params: dict[str, object]) -> None:
    settings = {"memory": {"backend": backend, "params": params}}
    (run_dir / "config.json").write_text(json.dumps({"request": {}, "settings": settings}))


def test_compare_names_each_memory_system_and_flags_small_samples(
    results: Path,  # noqa: F811 (the fixture)
) -> None:
    _record(results / "run-a", "embedded", {})
    _record(results / "run-b", "mem0", PARAMS)
    markdown = render_markdown(
        build_comparison("run-a", "run-b", results_dir=results, resamples=RESAMPLES)
    )
    assert "A = `run-a`: memory system embedded (no parameters); hits mapped: session exact" in (
        markdown
    )
    assert f"B = `run-b`: memory system mem0 (parameters digest {params_digest(PARAMS)})" in (
        markdown
    )
    assert f"({SMALL_SAMPLE}, n = " in markdown
    for low, high in re.findall(r"\[([+-][\d.]+), ([+-][\d.]+)\]", markdown):
        assert low != high  # a degenerate interval reads "no spread", never as a range
