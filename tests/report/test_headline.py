"""A run's headline states accuracy, search latency p50 / p95 and context tokens a question
together, in summary.md's header, report.html's top and the line the flow ends with."""

from __future__ import annotations

import json
import re
from pathlib import Path

from lme_bench.report.labels import seconds
from lme_bench.run.finish import headline
from tests.ingest.test_memory_health import QA, _run, _settings


def test_the_headline_names_accuracy_latency_and_context_tokens_everywhere(
    tmp_path: Path,
) -> None:
    settings = _settings(tmp_path, None, **QA)
    report, results = _run(settings, limit=3)
    latency = report.summary["search_latency"]
    answered = [h for h in results.hypotheses or [] if h.status == "ok"]
    tokens = round(sum(h.input_tokens for h in answered) / len(answered))
    line = headline(report.summary)
    accuracy = re.search(r"QA overall \d+\.\d% \(\d+/3\)", line)
    assert accuracy is not None, line
    search = f"search p50 {seconds(latency['p50_s'])}, p95 {seconds(latency['p95_s'])}"
    assert search in line, line
    assert f"context {tokens:,} tokens a question" in line, line
    # together, in that order, before retrieval's figures
    assert line.index("QA overall") < line.index(search) < line.index("context ")
    assert line.index("context ") < line.index("session recall_all@5")

    assert json.loads((report.run_dir / "summary.json").read_text())["headline"] == line
    header = (report.run_dir / "summary.md").read_text().split("\n## ")[0]
    assert f"**Headline**: {line}." in header
    page = (report.run_dir / "report.html").read_text()
    top = page[: page.index("<h2>")]
    assert '<p id="headline"><b>Headline</b>: ' in top and search in top


def test_a_run_without_answers_states_its_search_latency() -> None:
    summary = {
        "session": {"overall": {"n": 2, "recall_all@5": 0.5}},
        "search_latency": {"n": 2, "p50_s": 0.021, "p95_s": 0.034, "wait_s": 1.5, "waited": 2},
    }
    line = headline(summary)
    assert line.startswith("search p50 21 ms, p95 34 ms (waits on lme-bench left out)"), line
    assert "context" not in line  # no reader, no context tokens
