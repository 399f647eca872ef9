"""Atomic file writes: write a temporary file beside the target, fsync, then rename over it."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path


class ResultsWriteError(OSError):
    """A results file could not be written (disk full, read-only folder, no permission); the
    message names the file. Whatever was there before is left as it was."""


def _reason(error: OSError) -> str:
    return os.strerror(error.errno) if error.errno else str(error)


def write_atomically(path: Path, write: Callable[[Path], object]) -> None:
    """Call `write(tmp_path)`, then move the finished file to `path`; never leave a partial file.
    Raises ResultsWriteError naming `path` when the file system refuses."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise ResultsWriteError(f"cannot write {path}: {_reason(exc)}") from exc
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        write(tmp)
        tmp.chmod(0o644)  # mkstemp makes 0600; results are meant to be read
        with tmp.open("rb") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError) and not isinstance(exc, ResultsWriteError):
            raise ResultsWriteError(f"cannot write {path}: {_reason(exc)}") from exc
        raise


def write_text_atomically(path: Path, text: str) -> None:
    write_atomically(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
