"""The reference knowledge-graph MCP server (@modelcontextprotocol/server-memory, the version
configs/mcp-knowledge-graph.toml pins), installed once into a cache folder for the tests that
start it over stdio."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
KG_CONFIG = REPO / "configs" / "mcp-knowledge-graph.toml"
PACKAGE = "@modelcontextprotocol/server-memory"
PINNED = tomllib.loads(KG_CONFIG.read_text())["memory"]["params"]["args"][-1]
VERSION = PINNED.removeprefix(f"{PACKAGE}@")
NPM_CACHE = Path(
    os.environ.get("LME_BENCH_NPM_CACHE", Path.home() / ".cache" / "lme-bench" / "npm")
)


@pytest.fixture(scope="session")
def server_script() -> Path:
    """The pinned server's entry script (skips without node and npm)."""
    folder = NPM_CACHE / f"server-memory-{VERSION}"
    script = folder / "node_modules" / PACKAGE / "dist" / "index.js"
    NPM_CACHE.mkdir(parents=True, exist_ok=True)
    # one install at a time: the suite's processes (pytest-xdist) may all ask at once
    with (NPM_CACHE / ".install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _installed(folder, script)


def _installed(folder: Path, script: Path) -> Path:
    if not script.exists():
        npm, node = shutil.which("npm"), shutil.which("node")
        if npm is None or node is None:
            pytest.skip("node and npm are needed to run @modelcontextprotocol/server-memory")
        try:
            done = subprocess.run(
                [npm, "install", "--no-audit", "--no-fund", "--prefix", str(folder),
                 f"{PACKAGE}@{VERSION}"],
                capture_output=True, text=True, timeout=300, check=False,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            pytest.skip(f"npm could not install {PACKAGE}@{VERSION} within 300 s")
        if done.returncode != 0 or not script.exists():
            pytest.skip(f"npm could not install {PACKAGE}@{VERSION}: {done.stderr[-500:]}")
    if shutil.which("node") is None:
        pytest.skip("node is needed to run @modelcontextprotocol/server-memory")
    return script
