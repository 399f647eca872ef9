"""Reading a bundle back, from a local file or a URL (places.py): its members by name,
refusing links, devices and paths that leave the archive."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path, PurePosixPath

from lme_bench.config.storage_urls import redacted
from lme_bench.publish.errors import PublishError
from lme_bench.publish.places import is_remote, read_bundle_bytes


def read_members(path: Path | str) -> dict[str, bytes]:
    remote = is_remote(path)
    data = read_bundle_bytes(str(path)) if remote else None
    try:
        if data is not None:
            with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
                return _members(path, archive)
        with tarfile.open(path, mode="r:gz") as archive:
            return _members(path, archive)
    except (OSError, EOFError, tarfile.TarError) as exc:
        named = redacted(str(path)) if remote else path
        raise PublishError(f"{named}: not a bundle (a tar.gz archive): {exc}") from exc


def _members(path: Path | str, archive: tarfile.TarFile) -> dict[str, bytes]:
    members: dict[str, bytes] = {}
    for info in archive:
        name = PurePosixPath(info.name)
        if info.isdir():
            continue
        if not info.isfile() or name.is_absolute() or ".." in name.parts:
            raise PublishError(f"{path}: {info.name}: not a plain file inside the bundle")
        if info.name in members:
            raise PublishError(f"{path}: {info.name} is in the archive twice")
        extracted = archive.extractfile(info)
        members[info.name] = extracted.read() if extracted is not None else b""
    return members
