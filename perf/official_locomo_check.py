"""Score generated predictions for every LoCoMo question with the official evaluation code and
with lme-bench's, and compare every value.

    LOCOMO_REPO=/path/to/locomo python perf/official_locomo_check.py [--data FILE]

The data is the checkout's `data/locomo10.zip` unless `--data` names a `locomo10.json`, a zip,
or a folder of conversation files; lme-bench's reader reads it. Each question gets one
prediction per variant (the gold answer as it is, shouted, cut in half, padded, another
question's answer, empty, "Not mentioned ...", "No information available", its comma parts
reversed with an extra one, a ';' tail), most with retrieved dialog ids or `S<n>` sessions
(the evidence, half of it, random turns, sessions). lme-bench writes them with its exporter;
the checkout's `task_eval/evaluation.py` `eval_question_answering` scores each conversation
file, unmodified, and `task_eval/evaluation_stats.py` `analyze_acc` aggregates them by
category. Checked: every per-question score and recall, and every per-category score and
recall, equal lme-bench's exactly; the overall figures agree to 1e-12 (the official code sums
them in another order). Exit 1 on any difference; without LOCOMO_REPO the check explains itself
and skips.

The official module imports `bert_score` at the top but uses it only for items marked
`"metric": "bertscore"` (none here): when that package is missing, a stand-in module that fails
if called takes its place. It also needs numpy, regex and nltk, all in lme-bench's venv, and
evaluation_stats needs tqdm.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import inspect
import io
import json
import os
import random
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import support  # noqa: F401  (lme_bench from this clone on the import path)

from lme_bench.builtin_benchmarks.locomo.export import Prediction, write_conversation_predictions
from lme_bench.builtin_benchmarks.locomo.official_driver import stand_in_bert_score
from lme_bench.builtin_benchmarks.locomo.reader import load_samples
from lme_bench.builtin_benchmarks.locomo.records import Gold, Sample
from lme_bench.builtin_benchmarks.locomo.scoring import ScoredQuestion, aggregate, score_question

Variant = Callable[[Gold, Gold, random.Random], str]


def _gold_text(gold: Gold) -> str:
    return gold.answer if gold.answer is not None else (gold.adversarial_answer or "")


def _half(text: str) -> str:
    words = text.split()
    return " ".join(words[: max(1, len(words) // 2)])


def _reversed_parts(text: str) -> str:
    return ", ".join([*reversed([p.strip() for p in text.split(",")]), "something else"])


ANSWERS: dict[str, Variant] = {
    "exact": lambda g, other, rng: _gold_text(g),
    "shouted": lambda g, other, rng: f"The {_gold_text(g).upper()}!",
    "partial": lambda g, other, rng: _half(_gold_text(g)),
    "verbose": lambda g, other, rng: f"I think it was {_gold_text(g)} and more, as they said.",
    "wrong": lambda g, other, rng: _gold_text(other),
    "empty": lambda g, other, rng: "",
    "not_mentioned": lambda g, other, rng: "Not mentioned in the conversation",
    "no_information": lambda g, other, rng: "No information available.",
    "comma_list": lambda g, other, rng: _reversed_parts(_gold_text(g)),
    "semicolon": lambda g, other, rng: f"{_gold_text(g)}; or maybe {_gold_text(other)}",
}
RETRIEVALS = ("evidence", "half", "random", "sessions", "random_sessions", None)


def _retrieved(kind: str | None, gold: Gold, dia_ids: list[str], rng: random.Random) -> Any:
    """Retrieved ids of one kind; never empty (the official code cannot score an empty list)."""
    if kind is None:
        return None
    if kind == "evidence":
        found = list(gold.evidence)
    elif kind == "half":
        found = list(gold.evidence[: len(gold.evidence) // 2]) + rng.sample(dia_ids, 3)
    elif kind == "random":
        found = rng.sample(dia_ids, 5)
    elif kind == "sessions":
        found = sorted({"S" + ev.split(":")[0][1:] for ev in gold.evidence})
    else:
        found = sorted({"S" + d.split(":")[0][1:] for d in rng.sample(dia_ids, 3)})
    return found or rng.sample(dia_ids, 2)


def _official_modules(repo: Path) -> tuple[Any, Any]:
    sys.path.insert(0, str(repo))
    stand_in_bert_score()
    evaluation = importlib.import_module("task_eval.evaluation")
    stats = importlib.import_module("task_eval.evaluation_stats")
    return evaluation, stats


def _official_scores(evaluation: Any, path: Path, key: str) -> tuple[list[Any], list[Any]]:
    """The checkout's eval_question_answering on one written file: (scores, recalls)."""
    takes_file = next(iter(inspect.signature(evaluation.eval_question_answering).parameters))
    given: Any = path if takes_file == "infile" else json.loads(path.read_text())["qa"]
    with contextlib.redirect_stdout(io.StringIO()):
        scores, _lengths, recalls = evaluation.eval_question_answering(given, key)
    return list(scores), list(recalls)


def _official_aggregate(
    stats: Any, items: list[dict[str, Any]], key: str, rag: bool, folder: Path
) -> tuple[dict[str, Any], float | None]:
    """analyze_acc over all conversations' scored items: its result and printed overall recall."""
    scores_file, out_file = folder / f"{key}_scores.json", folder / f"{key}_stats.json"
    scores_file.write_text(json.dumps({"qa": items}))
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(io.StringIO()):
        stats.analyze_acc(str(scores_file), str(out_file), key, metric_key=f"{key}_f1", rag=rag)
    result = json.loads(out_file.read_text())[key]
    overall_recall = None
    for line in printed.getvalue().splitlines():
        if line.startswith("Overall recall accuracy:"):
            overall_recall = float(line.split(":", 1)[1])
    return result, overall_recall


def _check_variant(
    name: str,
    retrieval: str | None,
    samples: list[Sample],
    official: tuple[Any, Any],
    folder: Path,
    seed: int,
) -> tuple[int, int, list[str]]:
    """(equal, different, descriptions of differences) for one prediction variant."""
    evaluation, stats = official
    rng, key = random.Random(seed), f"{name}_prediction"
    equal, different, notes = 0, 0, []
    ours: list[ScoredQuestion] = []
    scored_items: list[dict[str, Any]] = []
    for sample in samples:
        dia_ids = [turn.dia_id for turn in sample.conversation.turns()]
        predictions = {}
        for index, gold in enumerate(sample.gold):
            other = sample.gold[(index + 1) % len(sample.gold)]
            answer = ANSWERS[name](gold, other, rng)
            predictions[gold.question_id] = Prediction(
                answer, _retrieved(retrieval, gold, dia_ids, rng)
            )
        path = folder / f"{sample.conversation.conversation_id}.json"
        write_conversation_predictions(path, sample, predictions, key=key)
        scores, recalls = _official_scores(evaluation, path, key)
        items = json.loads(path.read_text())["qa"]
        for gold, item, score, recall in zip(sample.gold, items, scores, recalls, strict=True):
            prediction = predictions[gold.question_id]
            mine = score_question(gold, prediction.answer, prediction.retrieved)
            ours.append(mine)
            mine_recall = 1.0 if mine.recall is None else mine.recall
            if float(score) == mine.score and float(recall) == mine_recall:
                equal += 1
            else:
                different += 1
                notes.append(
                    f"{gold.question_id} {name}: official {score!r}/{recall!r}, "
                    f"lme-bench {mine.score!r}/{mine_recall!r} for {prediction.answer!r}"
                )
            item[f"{key}_f1"] = float(score)
            item[f"{key}_f1_recall"] = float(recall)
            scored_items.append(item)
    rag = retrieval is not None
    result, official_recall = _official_aggregate(stats, scored_items, key, rag, folder)
    summary = aggregate(ours)
    counts, totals = result["category_counts"], result["cum_accuracy_by_category"]
    for category, mine_category in summary.categories.items():
        checks = [
            ("count", counts[str(category)], mine_category.count),
            ("total", totals[str(category)], mine_category.total),
        ]
        if rag:
            official_cat_recall = result["recall_by_category"].get(str(category), 0.0)
            checks.append(("recall", official_cat_recall, mine_category.recall))
        for what, theirs, mine_value in checks:
            if theirs == mine_value:
                equal += 1
            else:
                different += 1
                notes.append(f"{name} category {category} {what}: {theirs!r} vs {mine_value!r}")
    order = [c for c in (4, 1, 2, 3, 5) if str(c) in counts]
    official_overall = sum(totals[str(c)] for c in order) / sum(counts[str(c)] for c in order)
    pairs = [("overall", official_overall, summary.overall)]
    if rag:
        pairs.append(("overall recall", official_recall, summary.overall_recall))
    for what, theirs, mine_value in pairs:
        if theirs is not None and mine_value is not None and abs(theirs - mine_value) <= 1e-12:
            equal += 1
        else:
            different += 1
            notes.append(f"{name} {what}: {theirs!r} vs {mine_value!r}")
    return equal, different, notes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, help="LoCoMo data (default: the checkout's zip)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    repo_text = os.environ.get("LOCOMO_REPO")
    if not repo_text:
        print("skipped: set LOCOMO_REPO to a checkout of snap-research/locomo to compare with it.")
        return 0
    repo = Path(repo_text).resolve()
    data = args.data or repo / "data" / "locomo10.zip"
    samples = load_samples(data)
    questions = sum(len(sample.questions) for sample in samples)
    print(f"{len(samples)} conversations, {questions} questions from {data}")
    official = _official_modules(repo)
    total_equal = total_different = 0
    with tempfile.TemporaryDirectory(prefix="locomo-check-") as tmp:
        for number, name in enumerate(ANSWERS):
            retrieval = RETRIEVALS[number % len(RETRIEVALS)]
            folder = Path(tmp) / name
            folder.mkdir()
            equal, different, notes = _check_variant(
                name, retrieval, samples, official, folder, args.seed + number
            )
            total_equal += equal
            total_different += different
            print(f"{name:15} retrieval={retrieval!s:16} equal {equal:5}  different {different}")
            for note in notes[:5]:
                print("   ", note)
    print(f"all: {total_equal} equal, {total_different} different")
    return 1 if total_different else 0


if __name__ == "__main__":
    raise SystemExit(main())
