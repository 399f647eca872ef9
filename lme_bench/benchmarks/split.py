"""Preparing a benchmark of shared builds (LoCoMo, BEAM) for a run: one file per build, and per
question one file of its public view and, apart from it, one of its gold labels (read back by
lme_bench.dataset.build_records, the gold by the scorer only).

Session dates are written as LongMemEval writes them (`2023/05/08 (Mon) 13:56`), so every
memory system and the reader read one date form; the build's content digest is that of its
sessions as the benchmark gives them.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from lme_bench.benchmarks.protocol import Benchmark, BenchmarkDataError, Build, Gold
from lme_bench.benchmarks.registry import detect_benchmark, load_benchmark
from lme_bench.dataset.errors import DatasetError
from lme_bench.dataset.models import parse_date
from lme_bench.dataset.shards import QuestionRef, Splitter

DateParser = Callable[[str], datetime]


def memory_date(text: str, own: DateParser | None = None) -> str:
    """A session date as the memory and the reader get it: LongMemEval's form, or `text`
    unchanged when it is no date lme-bench knows. `own`: the benchmark's `parse_session_date`
    (its own date form), tried after LongMemEval's and before ISO 8601."""
    parsers: tuple[DateParser, ...] = (parse_date, *((own,) if own else ()), datetime.fromisoformat)
    for parse in parsers:
        try:
            moment = parse(text)
        except ValueError:
            continue
        return moment.strftime("%Y/%m/%d (%a) %H:%M")
    return text


def _build_row(build: Build, own: DateParser | None) -> dict[str, Any]:
    return {
        "build_id": build.build_id,
        "sessions": [
            {
                "key": s.key,
                "date": memory_date(s.date, own),
                "turns": [[t.index, t.role, t.speaker, t.content] for t in s.turns],
            }
            for s in build.sessions
        ],
    }


def _gold_row(gold: Gold, category: str) -> dict[str, Any]:
    native = gold.native
    return {
        "category": category,
        "answers": list(gold.answers),
        "evidence_sessions": list(gold.evidence_sessions),
        "evidence_turns": list(gold.evidence_turns),
        "evidence_ids": list(gold.evidence_ids),
        "abstention": gold.abstention,
        "adversarial": gold.adversarial,
        "native": (
            dataclasses.asdict(native)
            if dataclasses.is_dataclass(native) and not isinstance(native, type)
            else None
        ),
    }


def _dump(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def split_builds(benchmark: Benchmark, path: Path, target: Path) -> list[QuestionRef]:
    """Write the builds and questions of `path` under `target`; the questions' refs in file
    order. A question naming a build the file does not hold is one DatasetError."""
    for folder in ("b", "q", "g"):
        (target / folder).mkdir(exist_ok=True)
    own: DateParser | None = getattr(benchmark, "parse_session_date", None)
    builds: dict[str, tuple[str, str, int, int]] = {}
    for number, build in enumerate(benchmark.builds(path)):
        shard = target / "b" / f"{number:04d}.json"
        shard.write_bytes(_dump(_build_row(build, own)))
        digest = build.content_digest
        builds[build.build_id] = (shard.name, digest, len(build.sessions), build.turn_count)
    refs = []
    for index, (question, gold) in enumerate(benchmark.questions(path)):
        if question.build_id not in builds:
            raise BenchmarkDataError(
                path,
                f"asks build {question.build_id!r}, which the file does not hold",
                item=f"question {question.question_id!r}",
            )
        build_shard, digest, n_sessions, n_turns = builds[question.build_id]
        public = question.public()
        date = memory_date(public.question_date, own) if public.question_date else None
        public_bytes = _dump({"question": public.question, "question_date": date})
        gold_bytes = _dump(_gold_row(gold, question.category))
        (target / "q" / f"{index:05d}.json").write_bytes(public_bytes)
        (target / "g" / f"{index:05d}.json").write_bytes(gold_bytes)
        content = hashlib.sha256(public_bytes + b"\n" + gold_bytes + b"\n" + digest.encode())
        refs.append(
            QuestionRef(
                index=index,
                question_id=question.question_id,
                question_type=question.category,
                is_abstention=gold.abstention,
                content_sha256=content.hexdigest(),
                n_sessions=n_sessions,
                n_turns=n_turns,
                shard=f"{index:05d}.json",
                build_id=question.build_id,
                build_sha256=digest,
                benchmark=benchmark.name,
                build_shard=build_shard,
            )
        )
    return refs


def splitter_for(name: str | None, path: Path) -> tuple[Splitter | None, str]:
    """How a run splits `path` (`[dataset] benchmark` `name`, else the benchmark recognising
    the file) and the split's kind: (None, "") for LongMemEval, and for a file nothing
    recognises, so LongMemEval's loader names its problem."""
    if name:
        benchmark = load_benchmark(name)
    else:
        try:
            benchmark = detect_benchmark(path)
        except DatasetError:
            return None, ""
    if getattr(benchmark, "longmemeval_format", False):  # read by LongMemEval's own loader
        return None, ""
    return functools.partial(split_builds, benchmark), benchmark.name
