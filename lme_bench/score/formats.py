"""Which benchmark's format an answers file is in, read as that format: every known
benchmark's `answers_formats` (lme_bench.benchmarks.answers) tried in the benchmarks' order,
a fallback format last."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lme_bench.benchmarks.answers import AnswersFile, AnswersFormat, ScoreInputError
from lme_bench.benchmarks.registry import BenchmarkError, benchmark_class, known_names
from lme_bench.benchmarks.scoring_hooks import resolved_hook


@dataclass(frozen=True, slots=True)
class KnownFormat:
    """A format and the benchmark whose answers it holds."""

    benchmark: str
    format: AnswersFormat


@functools.lru_cache(maxsize=8)
def known_formats(configured: str | None = None) -> tuple[KnownFormat, ...]:
    """Every known benchmark's formats, fallbacks last, each in the benchmarks' order: the
    configured one (`[dataset] benchmark`, a plug-in's class) first, then the built-in and
    registered ones."""
    found = []
    for name in dict.fromkeys([*([configured] if configured else []), *known_names()]):
        try:
            cls = benchmark_class(name)
        except BenchmarkError:
            continue  # a registered benchmark that cannot load has no formats to offer
        for value in getattr(cls, "answers_formats", ()):
            found.append(KnownFormat(cls.name, resolved_hook(value)))
    return tuple(sorted(found, key=lambda known: known.format.fallback))


def format_named(name: str, configured: str | None = None) -> KnownFormat:
    return next(k for k in known_formats(configured) if k.format.name == name)


def read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ScoreInputError(f"{path}: cannot read the answers file: {exc}") from None


def _parsed(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None  # several lines of JSON, or not JSON


def read_answers(path: Path, configured: str | None = None) -> AnswersFile:
    path = Path(path).expanduser()
    text = read_text(path)
    whole = _parsed(text)
    first = _parsed(next((line for line in text.splitlines() if line.strip()), ""))
    formats = known_formats(configured)
    for known in formats:
        if known.format.recognises(whole, first):
            return known.format.read(path, text, whole)
    words = ", ".join(known.format.words for known in formats)
    raise ScoreInputError(f"{path}: line 1: in none of the answers formats known ({words})")
