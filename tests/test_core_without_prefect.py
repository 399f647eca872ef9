"""The core package never imports prefect: flows/ and tasks/ are the only Prefect layers."""

from __future__ import annotations

import json
import subprocess
import sys

# Run in a fresh interpreter: this test process has prefect loaded by other tests.
_IMPORT_EVERY_MODULE = """
import importlib, json, pkgutil, sys
import lme_bench

failed = []
names = []
for info in pkgutil.walk_packages(lme_bench.__path__, "lme_bench.", onerror=failed.append):
    names.append(info.name)
    importlib.import_module(info.name)
print(json.dumps({
    "modules": names,
    "failed": failed,
    "prefect": sorted(m for m in sys.modules if m == "prefect" or m.startswith("prefect.")),
}))
"""


def test_importing_every_lme_bench_module_loads_no_prefect() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _IMPORT_EVERY_MODULE],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.splitlines()[-1])
    assert found["failed"] == []
    # the walk reached the whole package: the top level, a subpackage and a leaf module
    assert {"lme_bench.cli", "lme_bench.reference_memory", "lme_bench.providers.retry"} <= set(
        found["modules"]
    )
    assert found["prefect"] == []
