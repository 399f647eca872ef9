"""A raw ingestion's memory build made again against the same build fetched from a loopback S3
server and merged in: what a worker lacking the build pays either way.

    python perf/build_travel_speed.py --questions 50

On generated S-scale data (perf/data/), the default config (raw ingestion into the embedded
store): each question ingested (the remake), its build exported and put at s3://bench/builds
(SeaweedFS, started here; made-up credentials), then on a second store (another worker's)
fetched, sha256-checked and merged. Prints the milliseconds per question of each, and the
build's size.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

from support import ROOT, start_s3_server

from lme_bench.config.settings import Settings, load_settings
from lme_bench.dataset.generate import generate_dataset
from lme_bench.ingest import question as ingestion
from lme_bench.run import steps
from lme_bench.run.builds import fetch_build, save_build


def _settings(work: Path, data: Path, store: str | None) -> Settings:
    overrides = {"run.results_dir": str(work / "results"), "run.id": "travel"}
    overrides |= {"dataset.path": str(data)}
    if store:
        overrides["memory.build_store"] = store
    return load_settings(ROOT / "configs" / "default.toml", **overrides)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=50)
    parser.add_argument("--data-dir", type=Path, default=ROOT / "perf" / "data")
    args = parser.parse_args()
    data = args.data_dir / "lme_s_500_seed0.json"
    if not data.exists():
        generate_dataset(data, n_questions=500, scale="s", seed=0)
    with tempfile.TemporaryDirectory(prefix="lme-bench-travel-") as tmp:
        folder = Path(tmp)
        os.environ.update(
            AWS_ACCESS_KEY_ID="bench-access", AWS_SECRET_ACCESS_KEY="bench-secret",
            AWS_DEFAULT_REGION="us-east-1",
        )  # fmt: skip
        endpoint, server = start_s3_server(folder / "seaweedfs")
        os.environ["AWS_ENDPOINT_URL"] = endpoint
        try:
            here = _settings(folder / "a", data, None)
            there = _settings(folder / "a", data, "s3://bench/builds")
            other = _settings(folder / "b", data, "s3://bench/builds")
            refs = steps.prepare_questions(steps.plan_run(here), limit=args.questions)[1]
            remake, put, fetch, sizes = [], [], [], []
            for ref in refs:
                started = time.perf_counter()
                outcome = asyncio.run(ingestion.ingest_question(ref, here, "travel"))
                remake.append(time.perf_counter() - started)
                started = time.perf_counter()
                saved = save_build(outcome, there)
                put.append(time.perf_counter() - started)
                started = time.perf_counter()
                fetch_build(saved, other)
                fetch.append(time.perf_counter() - started)
                sizes.append(_size(saved, endpoint))
        finally:
            server.kill()
            server.wait()
    for name, values in (("remake (raw ingestion)", remake), ("export + put", put),
                         ("fetch + check + merge", fetch)):  # fmt: skip
        print(f"{name}: median {1000 * statistics.median(values):.1f} ms per question")
    print(f"build: median {statistics.median(sizes) / 1e6:.2f} MB over {len(refs)} questions")


def _size(saved: steps.IngestOutcome, endpoint: str) -> int:
    import boto3

    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
    head = client.head_object(Bucket="bench", Key=f"builds/{saved.build_object}")
    return int(head["ContentLength"])


if __name__ == "__main__":
    main()
