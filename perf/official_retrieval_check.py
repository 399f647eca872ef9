"""Score lme-bench's rankings with the official LongMemEval metric code and compare every value.

    LONGMEMEVAL_REPO=/path/to/LongMemEval python perf/official_retrieval_check.py \
        [--dataset FILE] [--limit N] [--search bm25|dense|hybrid] [--alpha A]

lme-bench ingests each question raw into a fresh embedded store and ranks it (the pipeline's own
steps); then the checkout's `src/retrieval/eval_utils.py`, unmodified and in a venv of its own
(perf/support.py), scores the same rankings: `evaluate_retrieval` at turn level and
`evaluate_retrieval_turn2session` at session level, for k in 1, 3, 5, 10, 30, 50. Checked: every
value equals lme-bench's, and every non-abstention question's turn ranking holds every non-empty
user turn of its haystack (up to `[retrieval] top_k`). Exit 1 on any difference. Without
LONGMEMEVAL_REPO the check explains itself and skips.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from support import official_checkout, official_python

from lme_bench.config.settings import load_settings
from lme_bench.dataset.models import Instance
from lme_bench.retrieval.official_ids import corpus_turn_ids
from lme_bench.run.steps import (
    bundled_sample,
    evaluate_question,
    ingest_question,
    plan_run,
    prepare_questions,
)

K_VALUES = (1, 3, 5, 10, 30, 50)
# Runs in the official venv, in the checkout: reads {k, questions: [{ranking, correct, corpus}]}
# and prints each question's metrics.
SCORER = """
import json, sys
from src.retrieval.eval_utils import evaluate_retrieval as turn
from src.retrieval.eval_utils import evaluate_retrieval_turn2session as session
given, out = json.load(sys.stdin), []
for q in given["questions"]:
    row = {}
    for k in given["k"]:
        for level, fn in (("turn", turn), ("session", session)):
            values = fn(q["ranking"], q["correct"], q["corpus"], k=k)
            for name, value in zip(("recall_any", "recall_all", "ndcg_any"), values):
                row[f"{level}/{name}@{k}"] = float(value)
    out.append(row)
json.dump(out, sys.stdout)
"""


def _positions(instance: Instance, ranked_ids: list[str]) -> list[int]:
    """Turn ids to corpus indices (a session repeated in the haystack has its turns twice)."""
    free: dict[str, list[int]] = {}
    for index, turn_id in enumerate(corpus_turn_ids(instance)):
        free.setdefault(turn_id, []).append(index)
    return [free[turn_id].pop(0) for turn_id in ranked_ids]


def _non_empty_user_turns(instance: Instance) -> int:
    return sum(
        1 for s in instance.haystack_sessions for t in s if t.role == "user" and t.content.strip()
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", type=Path, help="LongMemEval JSON (default: the sample)")
    parser.add_argument("--limit", type=int, help="only the first N questions")
    parser.add_argument("--search", default="bm25", choices=("bm25", "dense", "hybrid"))
    parser.add_argument("--alpha", type=float, default=0.6)
    args = parser.parse_args()
    repo = official_checkout()
    if repo is None:
        return 0
    python = official_python(repo)
    with tempfile.TemporaryDirectory(prefix="lme-retrieval-check-") as scratch:
        overrides: dict[str, Any] = {
            "run.results_dir": scratch,
            "run.id": "check",
            "dataset.path": str(args.dataset or bundled_sample()),
            "memory.params": {"search": args.search, "alpha": args.alpha},
        }
        settings = load_settings(None, **overrides)
        plan = plan_run(settings)
        _, refs = prepare_questions(plan, limit=args.limit)
        questions, ours, full = [], [], 0
        for ref in refs:
            instance = ref.load()
            outcome = asyncio.run(ingest_question(ref, settings, plan.run_id))
            rows = {
                r.granularity: r for r in asyncio.run(evaluate_question(ref, outcome, settings))
            }
            ranking = _positions(instance, rows["turn"].ranked_ids)
            expected = min(_non_empty_user_turns(instance), settings.retrieval.top_k)
            full += instance.is_abstention or len(ranking) == expected
            corpus = corpus_turn_ids(instance)
            correct = sorted({c for c in corpus if "answer" in c})
            questions.append({"ranking": ranking, "correct": correct, "corpus": corpus})
            ours.append(
                {
                    f"{level}/{name}": value
                    for level, row in rows.items()
                    for name, value in row.metrics.items()
                }
            )
    scored = subprocess.run(
        [str(python), "-c", SCORER],
        cwd=repo,
        input=json.dumps({"k": K_VALUES, "questions": questions}),
        capture_output=True,
        text=True,
        check=True,
    )
    official = json.loads(scored.stdout)
    compared = matched = 0
    for ref, mine, theirs in zip(refs, ours, official, strict=True):
        for key, value in theirs.items():
            compared += 1
            if mine[key] == value:
                matched += 1
            elif compared - matched <= 10:
                print(f"differs: {ref.question_id} {key}: official {value}, lme-bench {mine[key]}")
    print("| check | result |\n|---|---|")
    print(f"| questions ({datetime.now(UTC):%Y-%m-%d}, search {args.search}) | {len(refs)} |")
    print(f"| turn rankings holding every non-empty user turn | {full} of {len(refs)} |")
    print(f"| metric values equal to the official eval_utils | {matched} of {compared} |")
    return 0 if matched == compared and full == len(refs) else 1


if __name__ == "__main__":
    sys.exit(main())
