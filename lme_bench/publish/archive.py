"""Reading a bundle back: its members by name, refusing links, devices and paths that leave
the archive."""

from __future__ import annotations

import tarfile
from pathlib import Path, PurePosixPath

from lme_bench.publish.errors import PublishError


def read_members(path: Path) -> dict[str, bytes]:
    try:
        with tarfile.open(path, mode="r:gz") as archive:
            return _members(path, archive)
    except (OSError, EOFError, tarfile.TarError) as exc:
        raise PublishError(f"{path}: not a bundle (a tar.gz archive): {exc}") from exc


def _members(path: Path, archive: tarfile.TarFile) -> dict[str, bytes]:
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
