"""A LoCoMo retrieval-only run with one memory per conversation against the same questions
with one memory each.

    LOCOMO_DATA=path/to/locomo10.zip python perf/locomo_builds_speed.py [--work DIR]

LoCoMo (CC BY-NC 4.0, never bundled) asks ~200 questions of each of its 10 conversations.
lme-bench ingests each conversation once (a memory build) and answers every question of it from
that memory. The comparison writes the same questions as a LongMemEval-format file in which each
question carries its whole conversation as its haystack (so each gets a memory of its own, as a
harness without builds would do) and runs both retrieval-only on the embedded store (BM25, raw
ingestion), timing each command from start to exit. The converted file lives in --work (a
temporary folder by default) and is never kept in the repository.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

import support

from lme_bench.benchmarks.split import memory_date
from lme_bench.builtin_benchmarks.locomo.benchmark import Locomo

CONFIG = """\
[memory]
backend = "embedded"

[memory.params]
search = "bm25"

[ingest]
mode = "raw"

[retrieval]
top_k = 1000

[run]
id = "{run_id}"
results_dir = "{results}"
stages = ["ingest", "retrieval", "report"]
"""


def one_memory_per_question(data: Path, out: Path) -> int:
    """The LoCoMo questions as LongMemEval questions, each with its conversation's sessions."""
    benchmark = Locomo()
    builds = {build.build_id: build for build in benchmark.builds(data)}
    rows = []
    for question, gold in benchmark.questions(data):
        build = builds[question.build_id]
        evidence = set(gold.evidence_turns)
        sessions = [
            [
                {
                    "role": "user",
                    "content": turn.content,
                    **({"has_answer": True} if f"{s.key}:{turn.index}" in evidence else {}),
                }
                for turn in s.turns
            ]
            for s in build.sessions
        ]
        prefix = "answer_" if not gold.abstention else ""
        rows.append(
            {
                "question_id": f"q{len(rows):05d}" + ("_abs" if gold.abstention else ""),
                "question_type": "multi-session",
                "question": question.question,
                "answer": gold.answers[0] if gold.answers else "",
                "question_date": memory_date(build.sessions[-1].date),
                "haystack_session_ids": [
                    (prefix if s.key in gold.evidence_sessions else "")
                    + f"{build.build_id}-{s.key}"
                    for s in build.sessions
                ],
                "haystack_dates": [memory_date(s.date) for s in build.sessions],
                "haystack_sessions": sessions,
                "answer_session_ids": [
                    f"answer_{build.build_id}-{key}" for key in gold.evidence_sessions
                ],
            }
        )
    out.write_text(json.dumps(rows))
    return len(rows)


def timed_run(name: str, dataset: Path, work: Path) -> float:
    config = work / f"{name}.toml"
    config.write_text(CONFIG.format(run_id=name, results=work / name))
    started = time.perf_counter()
    subprocess.run(
        [str(support.ROOT / ".venv/bin/lme-bench"), "run", str(config), "--dataset", str(dataset)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=os.environ.get("LOCOMO_DATA"))
    parser.add_argument("--work", type=Path, default=None)
    args = parser.parse_args()
    if args.data is None:
        parser.error("give --data or LOCOMO_DATA: a LoCoMo file, zip or folder")
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        converted = work / "locomo_one_memory_each.json"
        questions = one_memory_per_question(args.data, converted)
        shared = timed_run("locomo-builds", args.data, work)
        separate = timed_run("locomo-one-memory-each", converted, work)
    print("| run | questions | memories | wall |")
    print("|---|---:|---:|---:|")
    print(f"| one memory per conversation (builds) | {questions} | 10 | {shared:.1f} s |")
    print(f"| one memory per question | {questions} | {questions} | {separate:.1f} s |")


if __name__ == "__main__":
    main()
