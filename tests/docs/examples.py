"""The fenced examples of the documentation: where they are, what they say, how each is marked.

A ```bash block carries a marker on the line before it: `<!-- example: run -->` (the test suite
runs it), `<!-- example: slow -->` (runs it, marked slow) or `<!-- example: skip: REASON -->`
(not run, for the reason given). A ```toml block is always parsed, and loaded as a run config
when its tables are settings sections.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# What a run in a scratch folder needs from the repository (the commands name them relatively).
LINKED = [".venv", "configs", "docs", "Makefile", "lme_bench"]
# Keys stay out of the examples that run: they must need none.
KEY_VARIABLES = ("OPENAI_API_KEY", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE")

_MARKER = re.compile(r"<!--\s*example:\s*(run|slow|skip)(?::\s*(.*?))?\s*-->")
_FENCE = re.compile(r"^```(\w*)\s*$")


@dataclass(frozen=True)
class Example:
    path: Path
    line: int  # of the opening fence, 1-based
    language: str
    text: str
    marker: str | None  # run | slow | skip | None
    reason: str

    @property
    def name(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def examples(path: Path) -> list[Example]:
    """Every fenced block of a Markdown file, with the marker on the line before it."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found = []
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        end = index + 1
        while end < len(lines) and not lines[end].startswith("```"):
            end += 1
        before = lines[index - 1] if index else ""
        marker = _MARKER.search(before)
        found.append(
            Example(
                path=path,
                line=index + 1,
                language=opening.group(1),
                text="\n".join(lines[index + 1 : end]) + "\n",
                marker=marker.group(1) if marker else None,
                reason=(marker.group(2) or "") if marker else "",
            )
        )
        index = end + 1
    return found


def all_examples(language: str) -> list[Example]:
    return [e for path in DOC_FILES for e in examples(path) if e.language == language]


def scratch_folder(folder: Path) -> dict[str, str]:
    """Make `folder` a place to run the examples in, as in a clone: the repository's parts
    linked, make's set-up done. Returns their environment: no keys, no Prefect server (each
    run starts its own temporary one)."""
    for name in LINKED:
        (folder / name).symlink_to(ROOT / name)
    # The set-up is done: make's stamp stays newer than these copies of what it is made from,
    # so `make` reinstalls nothing.
    stamp = ROOT / ".venv" / ".installed"
    for name in ("pyproject.toml", "constraints.txt"):
        copy = folder / name
        copy.write_bytes((ROOT / name).read_bytes())
        if stamp.exists():
            older = stamp.stat().st_mtime - 1
            os.utime(copy, (older, older))
    env = {k: v for k, v in os.environ.items() if k not in KEY_VARIABLES}
    env.pop("PREFECT_API_URL", None)
    return env
