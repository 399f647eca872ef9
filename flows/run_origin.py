"""How this flow run was started: by a deployment (by hand or by its schedule) or in process;
read from Prefect's run context for the run's series and manifest (lme_bench.results.series)."""

from __future__ import annotations

from prefect.context import FlowRunContext
from prefect.runtime import deployment

from lme_bench.results.series import RunSchedule


def run_schedule() -> RunSchedule | None:
    """The deployment, flow run and scheduled start of this flow run; None outside one."""
    context = FlowRunContext.get()
    run = context.flow_run if context is not None else None
    if run is None:
        return None
    start = run.expected_start_time or run.start_time
    return RunSchedule(
        deployment=deployment.get_name() if run.deployment_id else None,
        flow_run_id=str(run.id),
        scheduled_start=start.isoformat() if start is not None else None,
        auto_scheduled=bool(run.auto_scheduled),
    )
