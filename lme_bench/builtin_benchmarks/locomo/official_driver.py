"""Run in a process of its own by lme_bench.builtin_benchmarks.locomo.official_check: LoCoMo's
official `eval_question_answering` (task_eval/evaluation.py) on each conversation file and its
`analyze_acc` (task_eval/evaluation_stats.py) over all of them, both unmodified from the
checkout, their figures printed as one JSON object.

    python -m lme_bench.builtin_benchmarks.locomo.official_driver REPO KEY FILE...

The official module imports `bert_score` at the top and uses it only for items marked
`"metric": "bertscore"` (lme-bench writes none): where that package is missing, a stand-in
that fails if called takes its place."""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import sys
import tempfile
import types
from pathlib import Path
from typing import Any


def stand_in_bert_score() -> None:
    """`bert_score` importable: the installed package, else a stand-in that fails if called."""
    try:
        importlib.import_module("bert_score")
    except ImportError:
        stand_in = types.ModuleType("bert_score")

        def score(*args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("bert_score is not installed (no item asks for it)")

        stand_in.score = score  # type: ignore[attr-defined]
        sys.modules["bert_score"] = stand_in


def main(argv: list[str]) -> int:
    repo, key, *files = argv
    sys.path.insert(0, repo)
    stand_in_bert_score()
    evaluation = importlib.import_module("task_eval.evaluation")
    stats = importlib.import_module("task_eval.evaluation_stats")
    items: list[dict[str, Any]] = []
    scores: dict[str, list[float]] = {}
    for file in files:
        with contextlib.redirect_stdout(io.StringIO()):
            found, _lengths, _recalls = evaluation.eval_question_answering(file, key)
        scores[file] = [float(s) for s in found]
        qa = json.loads(Path(file).read_text(encoding="utf-8"))["qa"]
        for item, score in zip(qa, found, strict=True):
            items.append({**item, f"{key}_f1": float(score)})
    with tempfile.TemporaryDirectory() as scratch:
        ann, out = Path(scratch) / "scores.json", Path(scratch) / "stats.json"
        ann.write_text(json.dumps({"qa": items}))
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            stats.analyze_acc(str(ann), str(out), key, metric_key=f"{key}_f1")
        aggregated = json.loads(out.read_text())[key]
    print(json.dumps({"scores": scores, "stats": aggregated}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
