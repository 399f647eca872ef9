"""The official LongMemEval checkout a check runs beside lme-bench: where it is, and a venv of
its own with the checkout's `requirements-lite.txt` (made once, reused while that file is the
same). Nothing of the checkout is copied into this repository."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

# openai 1.35 (the checkout's pin) passes `proxies` to httpx, which httpx 0.28 no longer takes.
EXTRA = ("httpx<0.28",)


def checkout() -> Path | None:
    """LONGMEMEVAL_REPO, or None (after saying how to set it) when unset."""
    repo = os.environ.get("LONGMEMEVAL_REPO")
    if not repo:
        print("skipped: set LONGMEMEVAL_REPO to a LongMemEval checkout")
        print("(git clone https://github.com/xiaowu0162/LongMemEval) to compare with it.")
        return None
    return Path(repo).resolve()


def official_python(repo: Path) -> Path:
    """The venv's python, with the checkout's own pinned requirements."""
    requirements = repo / "requirements-lite.txt"
    digest = hashlib.sha256(requirements.read_bytes() + repr(EXTRA).encode()).hexdigest()[:12]
    venv = Path.home() / ".cache" / "lme-bench" / f"official-venv-{digest}"
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        pip = [str(python), "-m", "pip", "install", "-q", "-r", str(requirements), *EXTRA]
        subprocess.run(pip, check=True)
    return python
