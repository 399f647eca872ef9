"""The search and reading budgets two runs had, and where they differ.

Two memory systems are compared fairly only at equal budgets: the same ranking depth asked
for, the same hits per QA search and the same reader budget. Each run's recorded settings
(config.json) give what was asked for; its retrieval table gives the depth each system
actually returned and how its hits were mapped to the haystack (exact figures are not
comparable with attributed ones, nor with figures whose names did not check out).
Differences are flagged at the top of the comparison.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from lme_bench.results.memory_identity import memory_identity
from lme_bench.results.recorded_settings import recorded_run
from lme_bench.retrieval.stored_names import unstored_share, unverified

ASKED = (
    ("retrieval", "top_k", "ranking depth asked for"),
    ("qa", "strategy", "QA strategy"),
    ("qa", "top_ke", "entries per QA search"),
    ("qa", "top_kc", "context snapshots per QA search"),
    ("qa", "max_context_chars", "reader prompt budget"),
)


def run_budget(run_dir: Path) -> dict[str, Any]:
    """What the run asked for (as recorded) and the mean depth its system returned."""
    budget: dict[str, Any] = {}
    recorded = recorded_run(run_dir)
    settings = recorded["settings"] if recorded else {}
    identity = memory_identity(settings.get("memory") or {}) if recorded else {}
    budget["backend"] = identity.get("backend")
    budget["params"] = identity.get("params")
    budget["params_digest"] = identity.get("params_digest")
    for section, key, label in ASKED:
        value = (settings.get(section) or {}).get(key)
        if value is not None:
            budget[label] = value
    table = run_dir / "retrieval.parquet"
    names = pq.read_schema(table).names if table.is_file() else []
    if "depth" in names:
        depths = [d for d in pq.read_table(table, columns=["depth"])["depth"].to_pylist() if d]
        if depths:
            budget["mean depth returned"] = round(sum(depths) / len(depths), 1)
    if "provenance" in names:
        checked = [c for c in ("named_hits", "unstored_hits") if c in names]  # schema 6 on
        rows = pq.read_table(table, columns=["granularity", "provenance", *checked]).to_pylist()
        for granularity in ("session", "turn"):
            mine = [r for r in rows if r["granularity"] == granularity]
            found = sorted({r["provenance"] for r in mine})
            if found:
                budget[f"{granularity} provenance"] = " and ".join(found) + _unverified(mine)
    return budget


def _unverified(rows: list[dict[str, Any]]) -> str:
    """ ", unverified (N% of hits name what was never stored)" when too many did, else ""."""
    named = sum(r.get("named_hits") or 0 for r in rows)
    unstored = sum(r.get("unstored_hits") or 0 for r in rows)
    if not unverified(named, unstored):
        return ""
    share = 100 * unstored_share(named, unstored)
    return f", unverified ({share:.1f}% of hits name sessions or turns never stored)"


def unequal_budgets(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """One line per budget the runs do not share (what both recorded)."""
    lines = []
    shown = [label for _, _, label in ASKED]
    for label in [*shown, "mean depth returned", "session provenance", "turn provenance"]:
        if label in a and label in b and a[label] != b[label]:
            lines.append(f"{label}: {a[label]} (A) vs {b[label]} (B)")
    return lines
