"""memory_excerpts.json: per memory build, what its memory held once ingested (read back from
the memory system: the start of the context document, the newest entries), for report.html.
A run that reuses earlier ingestions keeps their excerpts."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lme_bench.results.atomic import write_text_atomically

EXCERPTS_NAME = "memory_excerpts.json"


def read_excerpts(run_dir: Path) -> dict[str, Any]:
    """Build id -> excerpt (None: it could not be read), as recorded ({} before any)."""
    path = run_dir / EXCERPTS_NAME
    if not path.is_file():
        return {}
    found = json.loads(path.read_text(encoding="utf-8"))
    return found if isinstance(found, dict) else {}


def record_excerpts(run_dir: Path, excerpts: Mapping[str, Any]) -> dict[str, Any]:
    """The recorded excerpts updated with this run's `excerpts` (build id -> excerpt), written
    atomically; every build's, returned."""
    merged = {**read_excerpts(run_dir), **excerpts}
    if merged:
        text = json.dumps(merged, indent=2, ensure_ascii=False) + "\n"
        write_text_atomically(run_dir / EXCERPTS_NAME, text)
    return merged
