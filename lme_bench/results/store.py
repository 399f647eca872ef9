"""A place that holds run folders: a local folder or an fsspec URL (s3://, gs://, az://,
memory://).

Every object is written whole or not at all: locally through a temporary file renamed over the
target (`atomic.py`), on an object store by one put of the complete object (a PUT, or a multipart
upload that becomes visible only when completed). A folder of objects is not atomic, so
`publish_folder` writes the files that mark a run finished (its manifest) last.

Credentials come from the environment only (the SDKs' own variables and files: AWS_*,
GOOGLE_APPLICATION_CREDENTIALS, AZURE_STORAGE_*); a URL carrying them is refused, and no message
this module raises names a key, a secret or the environment's values.

A store that does not answer (the server down, a timeout, throttling) is tried again with
doubling waits (`store_retry.py`, `[run] store_retries`); what then gives up is one
StoreUnavailable naming the object's URL.
"""

from __future__ import annotations

import importlib.util
import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from lme_bench.config.storage_urls import credential_problem, is_url, redacted
from lme_bench.plugins import extra_command
from lme_bench.results.atomic import ResultsWriteError, write_atomically
from lme_bench.results.store_retry import StoreRetry

# URL scheme -> (the fsspec implementation's module, the lme-bench extra that installs it)
EXTRAS: dict[str, tuple[str, str]] = {
    "s3": ("s3fs", "s3"),
    "s3a": ("s3fs", "s3"),
    "gs": ("gcsfs", "gcs"),
    "gcs": ("gcsfs", "gcs"),
    "az": ("adlfs", "az"),
    "abfs": ("adlfs", "az"),
    "abfss": ("adlfs", "az"),
}
T = TypeVar("T")
MANIFEST_NAME = "manifest.json"
_SECRET_NAME = re.compile(r"(KEY|SECRET|TOKEN|PASSWORD|CREDENTIAL|SAS)", re.IGNORECASE)


class StorageError(ResultsWriteError):
    """A storage URL cannot be used (credentials in it, its extra not installed) or an object
    could not be read or written; the message names the URL, never a credential."""


class StoreUnavailable(StorageError):
    """The store did not answer however often it was asked (`StoreRetry`): the run's retries
    are spent, so a task does not retry it again; a later run redoes what is missing."""


class StorageExtraMissing(StorageError):
    """The URL's scheme needs an optional extra that is not installed."""


def require_extra(url: str) -> None:
    """Raise StorageExtraMissing naming the extra and its install command when `url`'s scheme
    needs a package that is not installed."""
    scheme = url.split("://", 1)[0].lower()
    if scheme not in EXTRAS:
        return
    module, extra = EXTRAS[scheme]
    if importlib.util.find_spec(module) is None:
        raise StorageExtraMissing(
            f"{redacted(url)}: {scheme}:// storage needs the `{extra}` extra ({module}): "
            f"{extra_command(extra)} (or make install-all)"
        )


def scrubbed(text: str) -> str:
    """`text` with the value of every credential-like environment variable blanked out."""
    for name, value in os.environ.items():
        if len(value) >= 4 and _SECRET_NAME.search(name) and value in text:
            text = text.replace(value, "***")
    return text


def _options(url: str, retry: StoreRetry) -> dict[str, Any]:
    """The fsspec options of `url`: for S3, each call's timeouts, and botocore's own retries
    cut to one more try (the store's retries are StoreRetry's)."""
    if url.split("://", 1)[0].lower() not in ("s3", "s3a"):
        return {}
    limits = {"connect_timeout": retry.timeout_s, "read_timeout": retry.timeout_s}
    return {"config_kwargs": limits | {"retries": {"max_attempts": 2}}}


class RunStore:
    """Objects under one root, named by relative paths with `/` (`run-1/scores.parquet`)."""

    def __init__(self, root: str | Path, retry: StoreRetry | None = None) -> None:
        text = str(root)
        self.retry = retry or StoreRetry()
        self.is_local = not is_url(text) or text.startswith("file://")
        if self.is_local:
            self._local = Path(text.removeprefix("file://"))
            self.root = str(self._local)
            return
        problem = credential_problem(text, "storage URL")
        if problem:
            raise StorageError(problem)
        require_extra(text)
        import fsspec

        try:
            self._fs, path = fsspec.core.url_to_fs(text, **_options(text, self.retry))
        except (ImportError, ValueError) as exc:
            raise StorageError(f"{redacted(text)}: {scrubbed(str(exc))}") from None
        self._base = path.rstrip("/")
        self.root = text.rstrip("/")

    def __repr__(self) -> str:
        return f"RunStore({self.root!r})"

    def child(self, *parts: str) -> RunStore:
        """The store rooted at a folder below this one."""
        return RunStore(self.url(*parts), self.retry)

    def url(self, *parts: str) -> str:
        """Where `parts` are: a local path, or the URL of the object or prefix."""
        name = "/".join(p.strip("/") for p in parts if p)
        if self.is_local:
            return str(self._local / name) if name else self.root
        return f"{self.root}/{name}" if name else self.root

    def _key(self, name: str) -> str:
        return f"{self._base}/{name.strip('/')}"

    def _fail(self, verb: str, name: str, exc: BaseException) -> StorageError:
        reason = scrubbed(str(exc)) or type(exc).__name__
        return StorageError(f"cannot {verb} {redacted(self.url(name))}: {reason}")

    def _remote(self, verb: str, name: str, work: Callable[[], T]) -> T:
        """`work()` on the store, retried while the store does not answer; any failure is
        one StorageError naming the object's URL (a missing object stays FileNotFoundError)."""

        def gave_up(exc: BaseException, attempts: int) -> StoreUnavailable:
            reason = scrubbed(f"{type(exc).__name__}: {exc}")
            return StoreUnavailable(
                f"cannot {verb} {redacted(self.url(name))}: the store did not answer "
                f"({attempts} attempts; last: {reason}); once it answers, run again: work "
                "already done is kept"
            )

        try:
            return self.retry.call(work, gave_up)
        except (FileNotFoundError, StorageError):
            raise
        except Exception as exc:
            raise self._fail(verb, name, exc) from None

    # writes: each object whole or not at all

    def put_bytes(self, name: str, data: bytes) -> None:
        if self.is_local:
            write_atomically(self._local / name, lambda tmp: tmp.write_bytes(data))
            return
        self._remote("write", name, lambda: self._fs.pipe_file(self._key(name), data))

    def put_text(self, name: str, text: str) -> None:
        self.put_bytes(name, text.encode("utf-8"))

    def put_file(self, name: str, source: Path) -> None:
        """Copy a finished local file to `name` (a large one as a multipart upload, which an
        object store shows only once complete)."""
        if self.is_local:
            data = Path(source).read_bytes()
            write_atomically(self._local / name, lambda tmp: tmp.write_bytes(data))
            return
        self._remote("write", name, lambda: self._fs.put_file(str(source), self._key(name)))

    def publish_folder(self, folder: Path, last: Iterable[str] = (MANIFEST_NAME,)) -> list[str]:
        """Copy every file under the local `folder` to this store, the `last` names after all
        the others, so a reader who finds the manifest finds the whole run. Returns the names."""
        folder = Path(folder)
        names = sorted(
            p.relative_to(folder).as_posix()
            for p in folder.rglob("*")
            if p.is_file() and not p.name.endswith(".tmp")
        )
        final = [n for n in last if n in names]
        for name in [n for n in names if n not in final] + final:
            self.put_file(name, folder / name)
        return names

    # reads

    def read_bytes(self, name: str) -> bytes:
        if self.is_local:
            return (self._local / name).read_bytes()
        try:
            data: bytes = self._remote("read", name, lambda: self._fs.cat_file(self._key(name)))
        except FileNotFoundError:
            raise FileNotFoundError(redacted(self.url(name))) from None
        return data

    def read_text(self, name: str) -> str:
        return self.read_bytes(name).decode("utf-8")

    def exists(self, name: str) -> bool:
        if self.is_local:
            return (self._local / name).is_file()
        # info(), not isfile(): isfile() answers False when the store does not answer at all;
        # and not from a listing cached earlier
        key = self._key(name)
        self._fs.invalidate_cache(key)
        try:
            found = self._remote("read", name, lambda: self._fs.info(key))
        except FileNotFoundError:
            return False
        return bool(found.get("type") == "file")

    def names(self, prefix: str = "") -> list[str]:
        """Every object under `prefix`, as names relative to the root, sorted."""
        if self.is_local:
            base = self._local / prefix if prefix else self._local
            if not base.is_dir():
                return []
            found = (p for p in base.rglob("*") if p.is_file() and not p.name.endswith(".tmp"))
            return sorted(p.relative_to(self._local).as_posix() for p in found)
        start = self._key(prefix) if prefix else self._base
        try:
            listed: Any = self._remote("list", prefix, lambda: self._fs.find(start))
        except FileNotFoundError:
            return []
        cut = len(self._base) + 1
        return sorted(str(key)[cut:] for key in listed)
