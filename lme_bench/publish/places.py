"""Where bundles are: a local path, or a URL of an object store (`s3://bucket/bundles/x.tar.gz`,
any fsspec URL), read and written through the results' store layer (lme_bench/results/store.py):
credentials from the environment only, refused in a URL and never in a message; an archive
written to a URL is one complete put, so a reader never finds half of one."""

from __future__ import annotations

from pathlib import Path

from lme_bench.config.storage_urls import is_url, redacted
from lme_bench.publish.errors import PublishError
from lme_bench.results.store import RunStore, StorageError

SUFFIX = ".tar.gz"


def is_remote(where: str | Path) -> bool:
    """Whether `where` is a URL of an object store (file:// is a local path)."""
    return isinstance(where, str) and is_url(where) and not where.startswith("file://")


def local_or_url(where: str) -> str | Path:
    """A command's argument as the place it names: a URL as given, else a path."""
    return where.rstrip("/") if is_remote(where) else Path(where.removeprefix("file://"))


def bundle_name(where: str | Path) -> str:
    """The file name of a bundle at a path or a URL."""
    return str(where).rstrip("/").rpartition("/")[2] if is_remote(where) else Path(where).name


def _store_and_name(url: str) -> tuple[RunStore, str]:
    """The store of the folder `url` is in, and its object's name there."""
    parent, _, name = url.rstrip("/").rpartition("/")
    if not name or "://" not in parent or parent.endswith("://"):
        raise PublishError(f"{redacted(url)}: names no object in a bucket (scheme://bucket/name)")
    try:
        return RunStore(parent), name
    except StorageError as exc:
        raise PublishError(str(exc)) from None


def read_bundle_bytes(url: str) -> bytes:
    """The bytes of the bundle at `url`; a missing one is one error naming it."""
    store, name = _store_and_name(url)
    try:
        return store.read_bytes(name)
    except FileNotFoundError:
        raise PublishError(f"{redacted(url)}: no such bundle") from None
    except StorageError as exc:
        raise PublishError(str(exc)) from None


def check_target(url: str) -> None:
    """Refuse, before any work, a URL a bundle cannot be written to (credentials in it, its
    scheme's extra missing, no object named)."""
    _store_and_name(url)


def put_bundle(archive: Path, url: str) -> None:
    """The finished local `archive` copied to `url` whole."""
    store, name = _store_and_name(url)
    try:
        store.put_file(name, archive)
    except StorageError as exc:
        raise PublishError(str(exc)) from None


def bundles_at(url: str) -> list[str]:
    """The URLs of the bundles (*.tar.gz) directly in the folder `url`, sorted."""
    try:
        store = RunStore(url.rstrip("/"))
        names = store.names()
    except StorageError as exc:
        raise PublishError(str(exc)) from None
    return [store.url(n) for n in names if "/" not in n and n.endswith(SUFFIX)]
