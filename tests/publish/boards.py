"""Three bundles for a leaderboard: two judged by fake:match-judge (one priced and signed), one
by fake:lexical-judge."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lme_bench.publish.pack import bundle_run
from lme_bench.publish.signing import write_key
from tests.publish.runs import make_run

PRICES = {
    "prices.fake:extractive-reader": {"input_per_mtok": 2.0, "output_per_mtok": 8.0},
    "prices.fake:match-judge": {"input_per_mtok": 1.0, "output_per_mtok": 1.0},
}
RUNS: dict[str, tuple[int, dict[str, Any]]] = {  # run id: (limit, settings)
    "reader": (6, {"models.qa": "fake:extractive-reader", **PRICES}),
    "quoter": (4, {"models.qa": "fake:quote-memory"}),
    "lexical": (5, {"models.qa": "fake:extractive-reader", "models.judge": "fake:lexical-judge"}),
}
SIGNED = "reader"


@dataclass(frozen=True)
class Bundles:
    folder: Path  # the bundles, RUN_ID.bundle.tar.gz
    runs: dict[str, Path]  # run id -> its run folder
    fingerprint: str  # of the key that signed SIGNED


def three_bundles(root: Path) -> Bundles:
    folder, runs = root / "bundles", {}
    key = root / "key.pem"
    fingerprint = write_key(key)
    for run_id, (limit, settings) in RUNS.items():
        runs[run_id] = make_run(root / "results", run_id, limit, **settings)
        signing = key if run_id == SIGNED else None
        bundle_run(runs[run_id], folder / f"{run_id}.bundle.tar.gz", signing)
    return Bundles(folder, runs, fingerprint)
