"""Memory builds that travel between workers sharing no disk (the embedded store's).

When a build's ingestion completes, its memory is written to a file of its own
(reference_memory/build_files.py) and put in the build store, `[memory] build_store` (a folder
or an fsspec URL; with `[run] results_dir` at a URL, `<that URL>/memory-builds` by default
for an ingestion that calls a model: a raw one is remade where needed, as fast as fetched),
as `<memory id>/<sha256>.sqlite`; the ingestion's outcome records the object's name and its
sha256. Raw ingestion batches put their builds from background threads while the next
question is ingested, and a question counts as ingested once its put is done. A later stage
on a worker whose memory.sqlite lacks that memory fetches the object, checks its sha256 and
merges it in before it searches. Objects are named by their content, so a
build saved again never replaces the bytes an earlier outcome recorded.

With no build store (the default) nothing here runs: every stage reads this machine's store.
Other backends' memories do not travel this way (docs/memory-systems.md says how each scales).
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

from lme_bench.backends.builtin_params import embedded_params, memory_path
from lme_bench.backends.protocol import Capability
from lme_bench.backends.registry import backend_class
from lme_bench.config.settings import Settings
from lme_bench.config.storage_urls import redacted
from lme_bench.dataset.download import file_sha256
from lme_bench.ingest.question import IngestOutcome
from lme_bench.reference_memory.build_files import (
    BuildFileError,
    export_memory,
    holds_memory,
    import_memory,
)
from lme_bench.results.store import RunStore, StorageError
from lme_bench.results.store_retry import store_retry

BUILDS_FOLDER = "memory-builds"  # under a results URL, when no build store is named
UPLOAD_THREADS = 4  # puts at once from one process (BuildUploads)


class MemoryBuildError(ValueError):
    """A memory build cannot be fetched or used: missing from the build store, or its bytes are
    not those its ingestion recorded (a permanent error: a retry fetches the same bytes)."""


def remade_cheaply(settings: Settings) -> bool:
    """Whether ingestion calls no model: raw, into a memory system that neither extracts nor
    calls a model of its own ([models] memory). Its build is then made again, where a worker
    lacks it, about as fast as it would be fetched and merged."""
    if settings.models.memory or settings.ingest.mode != "raw":
        return False
    return Capability.EXTRACTS not in backend_class(settings.memory.backend).capabilities


def build_store(settings: Settings) -> RunStore | None:
    """Where the run's memory builds travel through; None when they do not: no embedded store,
    or no `[memory] build_store` and either a local results folder or an ingestion remade
    cheaply (a worker lacking such a build ingests it again)."""
    if embedded_params(settings) is None:
        return None
    root = settings.memory.build_store
    results = settings.run.results_url
    if root is None and results and not remade_cheaply(settings):  # beside the results
        root = f"{results.rstrip('/')}/{BUILDS_FOLDER}"
    return RunStore(root, store_retry(settings)) if root else None


def _exported(outcome: IngestOutcome, settings: Settings, folder: Path) -> tuple[str, str, Path]:
    """The outcome's memory written to a file in `folder`: its object name, sha256 and file."""
    file = Path(folder) / "build.sqlite"
    export_memory(memory_path(settings), outcome.memory_id, file)
    sha256 = file_sha256(file)
    return f"{outcome.memory_id}/{sha256}.sqlite", sha256, file


def save_build(outcome: IngestOutcome, settings: Settings) -> IngestOutcome:
    """The outcome with its build saved to the build store (its object's name and sha256), or
    as it is when there is no build store. An object is named by its content, so putting one
    that is there already writes the same bytes."""
    store = build_store(settings)
    if store is None:
        return outcome
    with tempfile.TemporaryDirectory(prefix="lme-build-") as folder:
        name, sha256, file = _exported(outcome, settings, Path(folder))
        store.put_file(name, file)
    return replace(outcome, build_object=name, build_sha256=sha256)


class BuildUploads:
    """Builds saved as `save_build` does, but put by background threads while the next
    question is ingested (the raw ingestion batches: the put is mostly waiting on the store).
    `finish` waits for every put; an outcome counts as saved only once it returns without an
    error for it."""

    def __init__(self, settings: Settings, threads: int = UPLOAD_THREADS) -> None:
        self.settings = settings
        self.store = build_store(settings)
        self.threads = threads
        self._pool: ThreadPoolExecutor | None = None
        self._puts: dict[str, Future[None]] = {}

    def save(self, outcome: IngestOutcome) -> IngestOutcome:
        """The outcome with its build exported now and its put queued (as it is without a
        build store)."""
        if self.store is None:
            return outcome
        folder = Path(tempfile.mkdtemp(prefix="lme-build-"))
        try:
            name, sha256, file = _exported(outcome, self.settings, folder)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="build-put")
        self._puts[name] = self._pool.submit(self._put, self.store, name, file)
        return replace(outcome, build_object=name, build_sha256=sha256)

    @staticmethod
    def _put(store: RunStore, name: str, file: Path) -> None:
        try:
            store.put_file(name, file)
        finally:
            shutil.rmtree(file.parent, ignore_errors=True)

    def finish(self) -> dict[str, Exception]:
        """Wait for every queued put; the error of each that failed, by object name."""
        errors = {}
        for name, put in self._puts.items():
            error = put.exception()
            if isinstance(error, Exception):
                errors[name] = error
            elif error is not None:  # an interrupt in a put's thread ends the batch
                raise error
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        self._puts = {}
        return errors


def build_available(outcome: IngestOutcome, settings: Settings) -> bool:
    """Whether the outcome's build is in the build store, for a later stage here to fetch: an
    ingestion whose memory this machine lacks is then taken from the cache, not redone."""
    store = build_store(settings)
    return store is not None and bool(outcome.build_sha256) and store.exists(outcome.build_object)


def fetch_build(outcome: IngestOutcome, settings: Settings) -> None:
    """Make the outcome's memory present in this machine's store: nothing to do when it is
    there (or the memory system is not the embedded store); else fetched from the build store,
    its sha256 checked, and merged in. Raises MemoryBuildError naming the build (and its URL)
    when it cannot be: not saved, missing or changed."""
    if embedded_params(settings) is None:
        return
    local = memory_path(settings)
    if holds_memory(local, outcome.memory_id):
        return
    store = build_store(settings)
    build = f"question {outcome.question_id}: memory build {outcome.memory_id}"
    if store is None or not outcome.build_sha256:  # searching it would find nothing
        raise MemoryBuildError(
            f"{build}: not in this machine's store ({local}) and not saved to a build store;"
            " run again: its ingestion is redone here"
        )
    url = redacted(store.url(outcome.build_object))
    try:
        data = store.read_bytes(outcome.build_object)
    except FileNotFoundError:
        raise MemoryBuildError(
            f"{build}: {url} is not in the build store; run the ingest stage again"
        ) from None
    found = hashlib.sha256(data).hexdigest()
    if found != outcome.build_sha256:
        raise MemoryBuildError(
            f"{build}: {url} has sha256 {found}, not the {outcome.build_sha256} its ingestion"
            " recorded (the object was changed or damaged); refused: run the ingest stage again"
        )
    with tempfile.TemporaryDirectory(prefix="lme-build-") as folder:
        file = Path(folder) / "build.sqlite"
        file.write_bytes(data)
        try:
            import_memory(local, file)
        except BuildFileError as exc:
            raise MemoryBuildError(f"{build}: {url}: {exc}") from None


def fetch_error(
    outcome: IngestOutcome, settings: Settings
) -> MemoryBuildError | StorageError | None:
    """fetch_build, with its refusal (or a build store that did not answer) returned rather
    than raised, for stages that go on with the other questions."""
    try:
        fetch_build(outcome, settings)
    except (MemoryBuildError, StorageError) as error:
        return error
    return None
