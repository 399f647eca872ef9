"""The flow's old name: `longmemeval` is the `benchmark` flow (flows/benchmark.py) under the
name it had before, so deployments made from the old entrypoint (flows/longmemeval.py:longmemeval,
named `longmemeval/<name>` on the server) still load and run the same code. New deployments use
flows/benchmark.py:benchmark (docs/prefect.md, "Renamed")."""

from __future__ import annotations

from lme_bench_flows.benchmark import benchmark

# Prefect names a deployment `<flow name>/<deployment name>` and its runs' flow after the loaded
# flow object: same function, same options, the old name.
longmemeval = benchmark.with_options(name="longmemeval")
