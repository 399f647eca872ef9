"""The `lme-bench` command: the core command line, given the Prefect flow that starts runs.

Prefect is imported only when a run starts, so `lme-bench memory serve`, `compare` and the
other commands start without it.
"""

from __future__ import annotations

import sys
from typing import Any

from lme_bench import cli


def load_flow() -> cli.Flow:
    from lme_bench_flows import early_server

    server = early_server.start()  # before Prefect is imported: it comes up meanwhile
    from lme_bench_flows.benchmark import RunFailures, RunRegressed, run_benchmark

    def run(request: Any) -> dict[str, Any]:
        with server.serving():
            result: dict[str, Any] = run_benchmark(request)
        return result

    return cli.Flow(run=run, failures=RunFailures, regressed=RunRegressed, warm_up=server.warm_up)


def main(argv: list[str] | None = None) -> int:
    return cli.main(argv, flows=load_flow)


if __name__ == "__main__":
    sys.exit(main())
