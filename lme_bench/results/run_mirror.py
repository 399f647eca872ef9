"""Runs whose results folder is a URL: the finished run copied to the URL (manifest last), and
a finished run at the URL copied into the local working folder where a command reads it.

The URL holds the truth: a run there without its manifest.json is not finished and is never
taken for one; a local copy whose manifest differs from the URL's is replaced whole.
"""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path

from lme_bench.config.storage_urls import redacted
from lme_bench.ingest.titles import KEY_FILE, title_key
from lme_bench.results.atomic import write_atomically
from lme_bench.results.recorded_settings import CONFIG_FILE as CONFIG_NAME
from lme_bench.results.run_folder import RerunError
from lme_bench.results.store import MANIFEST_NAME, RunStore
from lme_bench.results.store_retry import StoreRetry


def publish_run(results_url: str | None, run_dir: Path, retry: StoreRetry | None = None) -> None:
    """Copy the finished local `run_dir` to `<results_url>/<run id>`, its manifest last; no-op
    for a local results folder."""
    if results_url:
        RunStore(results_url, retry).child(run_dir.name).publish_folder(run_dir)


def pull_run(
    results_url: str,
    work_dir: Path,
    run_id: str,
    required: bool = True,
    retry: StoreRetry | None = None,
) -> Path | None:
    """The finished run `run_id` at `results_url`, copied into `work_dir/run_id`. Without a
    manifest at the URL: RerunError when `required`, else None (nothing copied)."""
    store = RunStore(results_url, retry).child(run_id)
    try:
        manifest = store.read_bytes(MANIFEST_NAME)  # read, not listed: no stale listing
    except FileNotFoundError:
        if required:
            raise RerunError(
                f"{redacted(store.root)}: no finished run here (no {MANIFEST_NAME}); check the"
                " run id and the results URL"
            ) from None
        return None
    local = Path(work_dir) / run_id
    mine = local / MANIFEST_NAME
    if local.is_dir() and not (mine.is_file() and mine.read_bytes() == manifest):
        shutil.rmtree(local)  # another run's copy, or one from before: replaced whole
    for name in store.names():
        if name != MANIFEST_NAME and not (local / name).is_file():
            target = local / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(store.read_bytes(name))
    local.mkdir(parents=True, exist_ok=True)
    mine.write_bytes(manifest)  # last, as on the store
    return local


def shared_title_key(results_url: str, work_dir: Path, retry: StoreRetry | None = None) -> None:
    """The key that names the memories of runs at `results_url` kept beside them there, so a
    working folder on any machine names them alike (and a rerun's cache keys match): the
    URL's key copied here, or this folder's (made now if need be) copied there."""
    store, local = RunStore(results_url, retry), Path(work_dir) / KEY_FILE
    if store.exists(KEY_FILE):
        data = store.read_bytes(KEY_FILE)
        if not local.is_file() or local.read_bytes() != data:
            local.parent.mkdir(parents=True, exist_ok=True)
            local.write_bytes(data)
            local.chmod(0o600)
        return
    title_key(work_dir)
    store.put_file(KEY_FILE, local)


def pull_finished_runs(results_url: str, work_dir: Path, retry: StoreRetry | None = None) -> Path:
    """Every finished run at `results_url` copied into `work_dir` (what history and the
    previous-run lookup read); returns `work_dir`."""
    store = RunStore(results_url, retry)
    runs = {name.split("/", 1)[0] for name in store.names() if name.endswith(MANIFEST_NAME)}
    for run_id in sorted(runs):
        if not run_id.startswith(".") and store.exists(f"{run_id}/{MANIFEST_NAME}"):
            pull_run(results_url, work_dir, run_id, required=False, retry=retry)
    return Path(work_dir)


def publish_files(results_url: str | None, work_dir: Path, paths: list[Path]) -> list[str]:
    """Copy files written under `work_dir` (compare's, a history page) to the same names at
    `results_url`; returns where they are (the local paths for a local folder)."""
    if not results_url:
        return [str(p) for p in paths]
    store = RunStore(results_url)
    names = [Path(p).resolve().relative_to(Path(work_dir).resolve()).as_posix() for p in paths]
    for name, path in zip(names, paths, strict=True):
        store.put_file(name, Path(path))
    return [store.url(name) for name in names]


def publish_recorded(results_url: str | None, run_dir: Path) -> None:
    """The run's recorded settings (config.json) copied to `<results_url>/<run id>` before
    its shards start, so a worker sharing no disk replays them; no-op for a local folder. A run
    there is still not finished: that takes its manifest."""
    if results_url:
        RunStore(results_url).child(run_dir.name).put_file(CONFIG_NAME, run_dir / CONFIG_NAME)


def pull_recorded(results_url: str, run_dir: Path) -> None:
    """The run's recorded settings copied from `<results_url>/<run id>` into `run_dir` where
    this machine has none (nothing when the URL has none either)."""
    local = run_dir / CONFIG_NAME
    if local.is_file():
        return
    try:
        data = RunStore(results_url).child(run_dir.name).read_bytes(CONFIG_NAME)
    except FileNotFoundError:
        return
    run_dir.mkdir(parents=True, exist_ok=True)
    write_atomically(local, lambda path: path.write_bytes(data))


def drop_working_copy(results_url: str | None, run_dir: Path) -> None:
    """Remove a shard's run folder from the local working folder of a run at a URL: the
    shard's work is in the task cache and the build store, and the run is its parent's to
    write (the folder would only be a partial copy). No-op for a local results folder."""
    if results_url and run_dir.is_dir():
        shutil.rmtree(run_dir)


def drop_local_copies(results_url: str | None, work_dir: Path, paths: list[Path]) -> None:
    """Remove the local copies under `work_dir` of what a run at a URL has there (its run
    folder, its series' history page), once copied, and the folders they leave empty: a
    worker then keeps no results folder. No-op for a local results folder."""
    if not results_url:
        return
    root = Path(work_dir).resolve()
    for path in (Path(p).resolve() for p in paths):
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)
        folder = path.parent
        while folder != root and folder.is_relative_to(root):
            if folder.is_dir() and any(folder.iterdir()):
                break
            with contextlib.suppress(FileNotFoundError):  # never made: nothing to remove
                folder.rmdir()
            folder = folder.parent
