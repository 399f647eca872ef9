"""A retrieval-only run with its results folder and task cache on a loopback S3 server against
the same run on local disk.

    python perf/object_store_speed.py --questions 500 [--rounds 2]

On generated S-scale data (perf/data/), the default config (raw ingestion, BM25) through the
Prefect flow, first with results and cache in a temporary folder, then at s3://bench/ on
SeaweedFS (started here, data in a temporary folder; made-up credentials), round after round
in alternating order. Prints each run's wall time, the objects and bytes the bucket holds, and
the ratio S3 / local (the goal: at most 1.3).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from support import ROOT, start_s3_server

os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_SERVER_LOGGING_LEVEL", "CRITICAL")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")

from lme_bench.dataset.generate import generate_dataset


def _run(data: Path, results: str, cache: str, run_id: str) -> float:
    from lme_bench_flows.benchmark import benchmark

    from lme_bench.run.request import RunRequest

    request = RunRequest(
        config=str(ROOT / "configs" / "default.toml"), dataset=str(data), results_dir=results,
        run_id=run_id, overrides={"cache.storage": cache},
    )  # fmt: skip
    started = time.perf_counter()
    result = benchmark(request)
    assert result["summary"]["session"]["questions"] > 0
    return time.perf_counter() - started


def _bucket(endpoint: str) -> tuple[int, int]:
    import boto3

    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
    objects = size = 0
    for page in client.get_paginator("list_objects_v2").paginate(Bucket="bench"):
        for item in page.get("Contents", []):
            objects, size = objects + 1, size + item["Size"]
    return objects, size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--data-dir", type=Path, default=ROOT / "perf" / "data")
    args = parser.parse_args()
    data = args.data_dir / f"lme_s_{args.questions}_seed0.json"
    if not data.exists():
        generate_dataset(data, n_questions=args.questions, scale="s", seed=0)
    with tempfile.TemporaryDirectory(prefix="lme-bench-s3-") as tmp:
        folder = Path(tmp)
        os.environ.update(
            AWS_ACCESS_KEY_ID="bench-access", AWS_SECRET_ACCESS_KEY="bench-secret",
            AWS_DEFAULT_REGION="us-east-1", XDG_CACHE_HOME=str(folder / "home-cache"),
        )  # fmt: skip
        endpoint, server = start_s3_server(folder / "seaweedfs")
        os.environ["AWS_ENDPOINT_URL"] = endpoint
        try:
            times: dict[str, list[float]] = {"local": [], "s3": []}
            for index in range(args.rounds):
                order = ("local", "s3") if index % 2 == 0 else ("s3", "local")
                for where in order:
                    if where == "local":
                        local = folder / f"local-{index}"
                        seconds = _run(data, str(local / "runs"), str(local / "cache"), "bench")
                    else:
                        url = f"s3://bench/round-{index}"
                        seconds = _run(data, f"{url}/runs", f"{url}/cache", "bench")
                    times[where].append(seconds)
                    print(f"round {index + 1}, {where}: {seconds:.1f} s", flush=True)
            objects, size = _bucket(endpoint)
        finally:
            server.kill()
            server.wait()
    best = {where: min(values) for where, values in times.items()}
    print(f"bucket: {objects} objects, {size / 1e6:.1f} MB over {args.rounds} round(s)")
    print(
        f"| S x {args.questions}, retrieval-only through the flow | local {best['local']:.1f} s"
        f" | S3 {best['s3']:.1f} s | **{best['s3'] / best['local']:.2f}x** |"
    )


if __name__ == "__main__":
    main()
