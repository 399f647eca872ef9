"""The memory-system conformance suite (lme_bench.conformance) on the built-in embedded store
and on the one-file example backend in docs/."""

from __future__ import annotations

from pathlib import Path

from lme_bench.backends.protocol import MemorySystem
from lme_bench.backends.registry import backend_class
from lme_bench.conformance import MemorySystemConformance, build_system

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "example_backend.py"


class TestEmbeddedStore(MemorySystemConformance):
    def make_system(self, data_dir: Path) -> MemorySystem:
        # Built as a plugin is: its [memory.params] checked by its Params.
        params = {"path": str(data_dir / "memory.sqlite")}
        return build_system(backend_class("embedded"), params, data_dir)


class TestExampleBackend(MemorySystemConformance):
    def make_system(self, data_dir: Path) -> MemorySystem:
        return build_system(backend_class(f"{EXAMPLE}:SessionNotes"), {"min_word": 3}, data_dir)
