"""The run manifest: what was run, on what, with which code, config and packages."""

from __future__ import annotations

import json
import platform
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

from lme_bench.results.atomic import write_text_atomically

PACKAGES = ("lme-bench", "prefect", "pydantic", "pydantic-settings", "pyarrow", "ijson")
_REPO = Path(__file__).resolve().parents[2]


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(_REPO), *args], capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def git_state() -> dict[str, Any]:
    """The code's commit and whether tracked files differ from it (None outside a checkout)."""
    sha = _git("rev-parse", "HEAD")
    if sha is None:
        return {"sha": None, "dirty": None}
    status = _git("status", "--porcelain", "--untracked-files=no")
    return {"sha": sha, "dirty": bool(status) if status is not None else None}


def package_versions(names: tuple[str, ...] = PACKAGES) -> dict[str, str | None]:
    versions: dict[str, str | None] = {}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def _code_version(state: dict[str, Any]) -> str | None:
    """lme-bench's version and the commit it ran from (`state`): `0.4.0+g1a2b3c4`, with
    `.dirty` when tracked files differ from it."""
    version = package_versions(("lme-bench",))["lme-bench"]
    if state["sha"] is None:
        return version
    dirty = ".dirty" if state["dirty"] else ""
    return f"{version}+g{state['sha'][:7]}{dirty}"


def build_manifest(**fields: Any) -> dict[str, Any]:
    git = git_state()
    return {
        "manifest_version": 1,
        **fields,
        "git": git,
        "code_version": _code_version(git),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packages": package_versions(),
    }


def write_manifest(path: Path, manifest: dict[str, Any]) -> None:
    write_text_atomically(path, json.dumps(manifest, indent=2, sort_keys=False) + "\n")
