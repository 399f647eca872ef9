"""The batch-check flow under its module's earlier name, so a deployment made from the
entrypoint `flows/batched_stages.py:batch_check` runs as before (flows/batch_job_stages.py)."""

from lme_bench_flows.batch_job_stages import batch_check

__all__ = ["batch_check"]
