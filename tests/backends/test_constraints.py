"""constraints.txt, for installing a memory system's client beside lme-bench: it keeps every
exact pin of the harness (Prefect's first), and `make constraints` writes it from pip freeze."""

from __future__ import annotations

import importlib.util
import re
import tomllib
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "constraints_script", ROOT / "scripts" / "constraints.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _constraints() -> dict[str, str]:
    lines = (ROOT / "constraints.txt").read_text().splitlines()
    pairs = [line.split("==") for line in lines if line and not line.startswith("#")]
    return {name.lower(): version for name, version in pairs}


def test_constraints_keep_the_harness_pins_prefect_first() -> None:
    pins = {}
    for requirement in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "dependencies"
    ]:
        exact = re.fullmatch(r"([\w.-]+)==([\w.]+)", requirement.strip())
        if exact:
            pins[exact.group(1).lower()] = exact.group(2)
    assert "prefect" in pins
    constraints = _constraints()
    assert constraints.get("prefect") == pins["prefect"]
    assert {name: constraints.get(name) for name in pins} == pins
    assert "python-dateutil" in constraints  # what a client's install moved, breaking Prefect


def test_freeze_lines_become_constraints_pip_can_satisfy_anywhere() -> None:
    freeze = "\n".join(
        [
            "Prefect==3.8.8",
            "torch==2.13.0+cpu",
            "llama_cpp_python @ file:///root/.cache/wheels/llama_cpp_python-0.3.36.whl",
            "-e git+https://example.org/repo.git#egg=thing",
            "aiosqlite==0.22.1",
        ]
    )
    assert _script().constraint_lines(freeze) == [
        "aiosqlite==0.22.1",
        "Prefect==3.8.8",
        "torch==2.13.0",
    ]
