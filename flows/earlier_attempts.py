"""A retried flow run shows only its current attempt's artifacts.

Prefect keeps every artifact a flow run created, in all its attempts, and the run's Artifacts
tab lists them all (artifacts of one key are versions, but the tab shows each version), so a
retried run would show the earlier attempt's progress card ("9 failed") and tables beside the
new ones. So when an attempt starts, the artifacts earlier attempts of the same flow run
created are deleted: the new attempt publishes its own. Other flow runs' versions of the same
keys are left alone.
"""

from __future__ import annotations

from uuid import UUID

from prefect import get_run_logger
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import (
    ArtifactFilter,
    ArtifactFilterFlowRunId,
    ArtifactFilterType,
)
from prefect.runtime import flow_run

PAGE = 200


def drop_earlier_attempts_artifacts() -> int:
    """Delete this flow run's artifacts, called as an attempt starts (before it publishes
    any); how many were deleted. A failure is logged, never fails the run."""
    run_id = flow_run.get_id()
    if run_id is None or flow_run.get_run_count() <= 1:  # a first attempt: none to remove
        return 0
    only = ArtifactFilter(
        flow_run_id=ArtifactFilterFlowRunId(any_=[UUID(run_id)]),
        type=ArtifactFilterType(not_any_=["result"]),  # results are Prefect's own records
    )
    deleted: set[UUID] = set()
    try:
        with get_client(sync_client=True) as client:
            while found := client.read_artifacts(artifact_filter=only, limit=PAGE):
                if {a.id for a in found} <= deleted:
                    raise RuntimeError("the server lists artifacts it reported deleted")
                for artifact in found:
                    client.delete_artifact(artifact.id)
                    deleted.add(artifact.id)
    except Exception as exc:  # the artifacts are a courtesy: they never fail the run
        get_run_logger().warning("earlier attempts' artifacts not all removed: %s", exc)
    if deleted:
        get_run_logger().info(
            "Attempt %d: removed the %d artifacts of earlier attempts (this one publishes its own)",
            flow_run.get_run_count(),
            len(deleted),
        )
    return len(deleted)
