"""Recognise official LongMemEval releases by their bytes, so results say which one they used.

Figures on the cleaned and the original releases are not strictly comparable.
"""

from __future__ import annotations

from pathlib import Path

S_CLEANED_SHA256 = "d6f21ea9d60a0d56f34a05b609c79c88a451d2ae03597821ea3d5a9678c3a442"
KNOWN_RELEASES: dict[str, str] = {
    S_CLEANED_SHA256: ("LongMemEval_S, cleaned release (longmemeval_s_cleaned.json)"),
}
BUNDLED_SAMPLE = "lme-bench bundled sample (not an official release)"


def describe_release(sha256: str, path: Path, bundled_sample: Path) -> str:
    if sha256 in KNOWN_RELEASES:
        return KNOWN_RELEASES[sha256]
    if Path(path).resolve() == Path(bundled_sample).resolve():
        return BUNDLED_SAMPLE
    return "unrecognised file (not a known official release: say which in any report)"
