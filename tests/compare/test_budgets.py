"""Comparing two memory systems flags any search or reading budget they did not share."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from lme_bench.compare.budgets import run_budget, unequal_budgets


def _run(folder: Path, backend: str, top_ke: int, depths: list[int]) -> Path:
    folder.mkdir(parents=True)
    settings = {
        "memory": {"backend": backend},
        "retrieval": {"top_k": 1000},
        "qa": {"strategy": "single", "top_ke": top_ke, "top_kc": 3, "max_context_chars": 40000},
    }
    (folder / "config.json").write_text(json.dumps({"request": {}, "settings": settings}))
    provenance = "exact" if backend == "embedded" else "attributed"
    table = {
        "granularity": ["session", "turn"],
        "provenance": ["exact", provenance],
        "depth": depths,
    }
    pq.write_table(pa.table(table), folder / "retrieval.parquet")
    return folder


def test_budgets_that_differ_are_named_and_shared_ones_are_not(tmp_path: Path) -> None:
    a = run_budget(_run(tmp_path / "a", "embedded", 10, [40, 60]))
    b = run_budget(_run(tmp_path / "b", "mem0", 25, [12, 8]))
    assert a["backend"] == "embedded" and b["mean depth returned"] == 10.0
    assert unequal_budgets(a, b) == [
        "entries per QA search: 10 (A) vs 25 (B)",
        "mean depth returned: 50.0 (A) vs 10.0 (B)",
        "turn provenance: exact (A) vs attributed (B)",
    ]
    same = run_budget(_run(tmp_path / "c", "embedded", 10, [50, 50]))
    assert unequal_budgets(a, same) == []


def test_a_run_whose_hits_name_sessions_never_stored_is_flagged_beside_an_exact_one(
    tmp_path: Path,
) -> None:
    exact = run_budget(_run(tmp_path / "a", "embedded", 10, [40, 60]))
    folder = _run(tmp_path / "b", "embedded", 10, [40, 60])
    table = pq.read_table(folder / "retrieval.parquet")
    table = table.append_column("named_hits", pa.array([100, 100], pa.int32()))
    table = table.append_column("unstored_hits", pa.array([3, 2], pa.int32()))  # 3% and 2%
    pq.write_table(table, folder / "retrieval.parquet")
    shifted = run_budget(folder)
    assert shifted["turn provenance"] == "exact"  # 2%: within the limit
    assert unequal_budgets(exact, shifted) == [
        "session provenance: exact (A) vs exact, unverified (3.0% of hits name sessions or"
        " turns never stored) (B)"
    ]
