"""Cheap looks at a file's first bytes, for benchmarks' `detect` (never a parse, never raises)."""

from __future__ import annotations

import zipfile
from pathlib import Path

HEAD_BYTES = 256 << 10


def json_head(path: Path, size: int = HEAD_BYTES) -> bytes | None:
    """The first `size` bytes of a regular file, without a UTF-8 BOM and leading whitespace;
    None for a folder, a missing or unreadable file."""
    try:
        if not Path(path).is_file():
            return None
        with Path(path).open("rb") as handle:
            return handle.read(size).lstrip(b"\xef\xbb\xbf").lstrip()
    except OSError:
        return None


def zip_json_head(path: Path, size: int = HEAD_BYTES) -> bytes | None:
    """The first bytes of a zip's first `.json` member (skipping macOS metadata); None when
    `path` is no readable zip or holds no such member."""
    try:
        if not Path(path).is_file() or not zipfile.is_zipfile(path):
            return None
        with zipfile.ZipFile(path) as archive:
            names = [
                n
                for n in archive.namelist()
                if n.endswith(".json") and "__MACOSX" not in n and not Path(n).name.startswith(".")
            ]
            if not names:
                return None
            with archive.open(sorted(names)[0]) as member:
                return member.read(size).lstrip(b"\xef\xbb\xbf").lstrip()
    except (OSError, zipfile.BadZipFile):
        return None
