"""Headless Chromium against the Prefect UI: screenshots and the DOM after scripts ran."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
from pathlib import Path

NAMES = ("chromium", "chromium-browser")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-dev-shm-usage",
    "--window-size=1400,1000",
    "--virtual-time-budget=15000",  # let the single-page app fetch from the API and render
)
TIMEOUT_S = 120.0


def find_chromium() -> str | None:
    for name in NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def _run(binary: str, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    profile.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(
        [binary, *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(f"chromium failed ({result.returncode}):\n{result.stderr[-3000:]}")
    return result


def render(binary: str, url: str, shot: Path, profile: Path) -> str:
    """Load `url`, write a screenshot to `shot`, and return the DOM as rendered."""
    dom = _run(binary, profile, "--dump-dom", f"--screenshot={shot}", url).stdout
    if not shot.is_file():
        raise RuntimeError(f"chromium wrote no screenshot of {url}")
    return dom


def png_size(path: Path) -> tuple[int, int]:
    """(width, height) from a PNG's IHDR chunk."""
    head = path.read_bytes()[:24]
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path}: not a PNG")
    width, height = struct.unpack(">II", head[16:24])
    return width, height
