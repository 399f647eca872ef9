"""summary.json through RunSummary / StoppedSummary: the text written is the text the run's
dict gave before (key order, ints, absent parts), and a bad file names itself and the field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lme_bench.results.run_summary import (
    RunSummary,
    StoppedSummary,
    SummaryError,
    read_run_summary,
    read_summary,
    summary_text,
)
from tests.factories import run_summary_json


def _old_text(summary: dict[str, Any]) -> str:
    return json.dumps(summary, indent=2) + "\n"


def _full(**parts: Any) -> dict[str, Any]:
    """A summary in the order a run adds its keys, with the optional parts given."""
    base = run_summary_json("locomo")
    head = {k: base[k] for k in list(base)[:9]}  # note … search_latency
    tail = {"run": base["run"] | {"wall_seconds": 2.5}, "incomplete": base["incomplete"]}
    qa = {"judges": {"fake:match-judge": {"overall": {"n": 3, "correct": 2, "accuracy": 2 / 3}}}}
    return {
        **head,
        "qa": qa,
        "memory_system": {"model": None, "model_calls": 0},
        "cost": {"total": 0.0, "unpriced_models": []},
        "estimate": {"calls": 4},
        **tail,
        **parts,
    }


def _by_path() -> dict[str, Any]:
    """A run of a benchmark given by path: its source just after its name, as a run adds it."""
    base = run_summary_json("choices")
    keys = list(base)
    at = keys.index("benchmark") + 1
    ordered = {k: base[k] for k in keys[:at]} | {"benchmark_source": "docs/x.py:Choices"}
    ordered |= {k: base[k] for k in keys[at:-1]}
    return ordered | {"choices": {"n": 2}, "headline": base["headline"]}


def test_each_kind_of_summary_is_written_as_its_dict_was(tmp_path: Path) -> None:
    baseline = {
        "compare_to": "previous",
        "series": "weekly",
        "run_id": "w1",
        "status": "no_regression",
        "message": "no figure dropped",
        "min_drop": 0.02,
        "figures": [],
    }
    kinds = [
        run_summary_json(),  # retrieval only: no qa, cost null
        _full(locomo={"questions": 3, "overall_f1": 0.5}, headline="F1 0.500"),
        _full(beam={"judge": "j"}, plug={"n": 1}, headline="h", baseline=baseline),
        _by_path(),
    ]
    for summary in kinds:
        typed = RunSummary.model_validate(summary)
        assert summary_text(typed) == _old_text(summary)
        path = tmp_path / "summary.json"
        path.write_text(_old_text(summary))
        again = read_run_summary(path)
        assert summary_text(again) == _old_text(summary)
    typed = RunSummary.model_validate(kinds[2])
    assert typed.section("plug") == {"n": 1} and typed.section("memory") is None
    assert typed.baseline is not None and typed.baseline.run_id == "w1"
    assert isinstance(typed.incomplete.failed, int) and typed.run.wall_seconds == 2.5
    assert RunSummary.model_validate(kinds[3]).benchmark_source == "docs/x.py:Choices"


def test_a_stopped_summary_is_written_as_its_dict_was(tmp_path: Path) -> None:
    stopped = {
        "stopped": {"signal": "SIGTERM", "run_id": "r", "memories": 2, "resume": "again"},
        "ingestion": {"stored_sessions": 3, "unfinished_sessions": 0},
        "memory_system": {"model": None, "model_calls": 0},
        "answers_and_verdicts": {"llm_calls": 0},
        "cost": {"ingestion": None, "total": None, "unpriced_models": ["m"]},
    }
    path = tmp_path / "summary.json"
    path.write_text(_old_text(stopped))
    found = read_summary(path)
    assert isinstance(found, StoppedSummary) and summary_text(found) == _old_text(stopped)
    with pytest.raises(SummaryError, match="was stopped"):
        read_run_summary(path)


def test_an_old_or_malformed_summary_names_the_file_and_the_field(tmp_path: Path) -> None:
    path = tmp_path / "summary.json"
    old = run_summary_json()
    del old["headline"]
    path.write_text(json.dumps(old))
    with pytest.raises(SummaryError, match=rf"{path}: field headline is missing"):
        read_run_summary(path)
    path.write_text(json.dumps(run_summary_json(incomplete={"failed": "x", "question_ids": []})))
    with pytest.raises(SummaryError, match=rf"{path}: field incomplete.failed is not valid"):
        read_run_summary(path)
    path.write_text(json.dumps(run_summary_json(locomo=[1, 2])))
    with pytest.raises(SummaryError, match="locomo: a benchmark's section is a JSON object"):
        read_run_summary(path)
    path.write_text("{not json")
    with pytest.raises(SummaryError, match=rf"{path}: is not JSON"):
        read_run_summary(path)
