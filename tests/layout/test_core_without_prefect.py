"""The core package never imports prefect: flows/ and tasks/ are the only Prefect layers."""

from __future__ import annotations

import json
import subprocess
import sys

# Run in a fresh interpreter: this test process has prefect loaded by other tests.
# A backend whose extra is not installed cannot be imported; only that is let pass.
OPTIONAL = (
    "mem0",
    "qdrant_client",
    "langmem",
    "langgraph",
    "pysqlite3",
    "sqlite_vec",
    "graphiti_core",
    "kuzu",
    "torch",
    "sentence_transformers",
)
_IMPORT_EVERY_MODULE = """
import importlib, json, pkgutil, sys
import lme_bench

failed, skipped = [], []
names = []
for info in pkgutil.walk_packages(lme_bench.__path__, "lme_bench.", onerror=failed.append):
    names.append(info.name)
    try:
        importlib.import_module(info.name)
    except ModuleNotFoundError as missing:
        if (missing.name or "").split(".")[0] not in OPTIONAL:
            raise
        skipped.append(info.name)
print(json.dumps({
    "modules": names,
    "failed": failed,
    "skipped": skipped,
    "prefect": sorted(m for m in sys.modules if m == "prefect" or m.startswith("prefect.")),
}))
"""


def test_importing_every_lme_bench_module_loads_no_prefect() -> None:
    done = subprocess.run(
        [sys.executable, "-c", f"OPTIONAL = {OPTIONAL!r}\n" + _IMPORT_EVERY_MODULE],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.splitlines()[-1])
    assert found["failed"] == []
    assert all(name.startswith("lme_bench.backends.") for name in found["skipped"])
    # the walk reached the whole package: the top level, a subpackage and a leaf module
    assert {"lme_bench.cli", "lme_bench.reference_memory", "lme_bench.providers.retry"} <= set(
        found["modules"]
    )
    assert found["prefect"] == []
