"""The memory-system conformance suite on the mem0 backend (infer on, fake:mem0-extractor)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lme_bench.backends.configured import open_system
from lme_bench.backends.protocol import MemorySystem
from lme_bench.config.settings import Settings
from lme_bench.conformance import MemorySystemConformance
from tests.extras import reason

pytest.importorskip("mem0", reason=reason("mem0"))
pytestmark = pytest.mark.slow  # a real mem0 with the MiniLM model: about a minute


class TestMem0(MemorySystemConformance):
    def make_system(self, data_dir: Path) -> MemorySystem:
        settings = Settings(
            memory={"backend": "mem0"},
            run={"results_dir": data_dir},
            models={"memory": "fake:mem0-extractor"},
        )
        return open_system(settings)
