"""Real ways a results folder refuses writes, each a context manager over the run folder that
yields the `preexec_fn` a child run needs (or None) and the reason its error should give."""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import shutil
import signal
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

Preexec = Callable[[], None] | None

FILE_SIZE_LIMIT = 4096  # bytes: less than the first table a run writes (retrieval.parquet)

_LIBC = ctypes.CDLL(None, use_errno=True)  # loaded before any fork
_PR_CAPBSET_DROP = 24
_CAPABILITY_VERSION_3 = 0x20080522
# CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER: what lets root ignore file permissions
_PERMISSION_BYPASS = (1, 2, 3)


class _CapHeader(ctypes.Structure):
    _fields_ = (("version", ctypes.c_uint32), ("pid", ctypes.c_int))


class _CapData(ctypes.Structure):
    _fields_ = (
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    )


def _limit_file_size() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_SIZE_LIMIT, FILE_SIZE_LIMIT))


def _permission_bypass_dropper() -> Callable[[], None]:
    """A preexec_fn after which root's next exec holds none of the capabilities that bypass
    file permissions: gone from the bounding and the inheritable sets (what exec grants root)."""
    header, data = _CapHeader(_CAPABILITY_VERSION_3, 0), (_CapData * 2)()
    mask = sum(1 << capability for capability in _PERMISSION_BYPASS)

    def check(result: int, call: str) -> None:
        if result != 0:
            raise OSError(ctypes.get_errno(), call)

    def drop() -> None:
        check(_LIBC.capget(ctypes.byref(header), data), "capget")
        data[0].inheritable &= ~mask
        check(_LIBC.capset(ctypes.byref(header), data), "capset")
        for capability in _PERMISSION_BYPASS:
            check(_LIBC.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0), "prctl(PR_CAPBSET_DROP)")

    return drop


@contextmanager
def file_size_limit(run_dir: Path) -> Iterator[tuple[Preexec, str]]:
    """No file of the run's may grow past a few KiB (RLIMIT_FSIZE, as when its disk quota is
    used up); the memory server and the Prefect server are other processes, unaffected."""
    yield _limit_file_size, "File too large"


@contextmanager
def read_only(run_dir: Path) -> Iterator[tuple[Preexec, str]]:
    """The run folder made read-only (and, as root, the run unable to ignore that)."""
    mode = run_dir.stat().st_mode
    run_dir.chmod(0o555)
    try:
        yield (_permission_bypass_dropper() if os.geteuid() == 0 else None), "Permission denied"
    finally:
        run_dir.chmod(mode)


def _mount_tmpfs(target: Path, size_kib: int) -> bool:
    command = ["mount", "-t", "tmpfs", "-o", f"size={size_kib}k", "tmpfs", str(target)]
    try:
        done = subprocess.run(command, capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


@contextmanager
def full_tmpfs(run_dir: Path) -> Iterator[tuple[Preexec, str]]:
    """The run folder on a small tmpfs holding its files and filled to the last block; skipped
    where mounting is not allowed (file_size_limit covers a full disk there)."""
    held = {p.name: p.read_bytes() for p in run_dir.iterdir()}
    if os.geteuid() != 0 or shutil.which("mount") is None or not _mount_tmpfs(run_dir, 1024):
        pytest.skip("cannot mount a tmpfs here")
    try:
        for name, data in held.items():
            (run_dir / name).write_bytes(data)
        filler = (run_dir / "filler").open("wb", buffering=0)
        with filler, contextlib.suppress(OSError):  # until ENOSPC: full
            while filler.write(b"\0" * 4096):
                pass
        yield None, "No space left on device"
    finally:
        subprocess.run(["umount", str(run_dir)], capture_output=True, timeout=30, check=True)
