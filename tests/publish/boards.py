"""Three bundles for a leaderboard: two judged by fake:match-judge (one priced and signed), one
by fake:lexical-judge; and a BEAM run's bundle, scored by the rubric judge stand-in."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lme_bench.publish.pack import bundle_run
from lme_bench.publish.signing import write_key
from tests.benchmarks.beam.samples import (
    STANDIN_PROMPTS,
    write_chat,
    write_checkout,
    write_questions,
)
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


BEAM_JUDGE = "fake:rubric-judge"


def beam_bundle(
    folder: Path, out: Path, run_id: str = "beam", prompts: str = STANDIN_PROMPTS
) -> tuple[Path, Path]:
    """A BEAM run's bundle at `out`, judged by the rubric judge stand-in reading `prompts` as
    its checkout's src/prompts.py, and its chat folder."""
    folder.mkdir(parents=True, exist_ok=True)
    chat = write_chat(folder).parent
    write_questions(folder)
    config = folder / "beam.toml"
    checkout = write_checkout(folder / "checkout", prompts)
    config.write_text(f'[judge]\nbeam_repo = "{checkout}"\n')
    run = make_run(
        folder / "results",
        run_id,
        config=config,
        **{"dataset.path": str(chat), "models.judge": BEAM_JUDGE},
    )
    bundle_run(run, out)
    return out, chat
