"""Where persisted task results (the task cache) live: a local folder or any fsspec URL."""

from __future__ import annotations

import hashlib
from pathlib import Path

from lme_bench.config.settings import Settings
from lme_bench.results.store import require_extra


def result_storage(settings: Settings) -> Path | str:
    """A folder for a local target; for a URL (s3://, gcs://, memory://…) the slug of a saved
    RemoteFileSystem block, as Prefect refuses unsaved storage blocks on tasks."""
    target = settings.cache.storage
    if not target:
        return (settings.run.results_dir / ".cache" / "tasks").resolve()
    if "://" not in target or target.startswith("file://"):
        return Path(target.removeprefix("file://")).resolve()
    require_extra(target)  # one error naming the extra, not fsspec's at the first write
    from prefect.filesystems import RemoteFileSystem

    name = "lme-bench-cache-" + hashlib.sha256(target.encode()).hexdigest()[:12]
    RemoteFileSystem(basepath=target).save(name, overwrite=True)
    return f"remote-file-system/{name}"
