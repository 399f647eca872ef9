"""Where persisted task results (the task cache) live: a local folder or any fsspec URL."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

from lme_bench.config.settings import Settings
from lme_bench.results.store import require_extra

if TYPE_CHECKING:
    from prefect.filesystems import WritableFileSystem


def result_storage(settings: Settings) -> Path | WritableFileSystem:
    """A folder for a local target; for a URL (s3://, gcs://, memory://…) a RemoteFileSystem
    block, saved (Prefect refuses unsaved storage blocks on tasks). The block itself, not its
    slug: a slug is loaded from the Prefect server again at each use, a request to the server
    for every cache look-up and every task's result store."""
    target = settings.cache.storage
    if not target:
        return (settings.run.results_dir / ".cache" / "tasks").resolve()
    if "://" not in target or target.startswith("file://"):
        return Path(target.removeprefix("file://")).resolve()
    require_extra(target)  # one error naming the extra, not fsspec's at the first write
    from prefect.filesystems import RemoteFileSystem

    name = "lme-bench-cache-" + hashlib.sha256(target.encode()).hexdigest()[:12]
    block = RemoteFileSystem(basepath=target)
    block.save(name, overwrite=True)
    return block
