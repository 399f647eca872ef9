"""Loading a local sentence-transformers model: once per model directory per process, offline."""

from __future__ import annotations

import importlib
import os
import threading
from pathlib import Path
from typing import Any

from lme_bench.common.waits import waiting

loaded_models: dict[str, Any] = {}
_lock = threading.Lock()


def _force_offline() -> None:
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def load_model(path: Path) -> Any:
    """The SentenceTransformer of `path`, loaded at the first call (it takes seconds: counted
    as waiting on lme-bench, like waiting for another thread's load)."""
    key = str(path)
    found = loaded_models.get(key)
    if found is not None:
        return found
    with waiting(), _lock:
        if key not in loaded_models:
            _force_offline()
            from sentence_transformers import SentenceTransformer

            hf_logging: Any = importlib.import_module("transformers.utils.logging")
            hf_logging.disable_progress_bar()  # no "Loading weights" bar on stderr
            loaded_models[key] = SentenceTransformer(key, device="cpu", local_files_only=True)
        return loaded_models[key]
