"""Every package of the repository is in pyproject's explicit package list, and flows/ and
tasks/ are installed under their own names (never as generic top-level `flows` / `tasks`)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_package_list_holds_every_package_and_maps_flows_and_tasks() -> None:
    setup = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    found = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in (ROOT / "lme_bench").rglob("__init__.py")
    }
    assert set(setup["packages"]) == found | {"lme_bench_flows", "lme_bench_tasks"}
    assert setup["package-dir"] == {"lme_bench_flows": "flows", "lme_bench_tasks": "tasks"}
    assert "flows" not in setup["packages"] and "tasks" not in setup["packages"]
