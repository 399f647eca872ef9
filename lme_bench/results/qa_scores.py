"""QA results of a run: scores per judge (never mixing judges), agreement, and the
exports in the official formats (hypotheses.jsonl and .eval-results-<judge>).

The headline figures follow the official rule: every question a judge answered is judged, and a
reply without "yes" is wrong. Beside them, labelled, the figures over readable verdicts only.
A question with no verdict (its answer or its judge call failed after retries) is left out of
both and named: the run is incomplete until a rerun redoes it.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

from lme_bench.benchmarks.scoring_hooks import FiguresInput, RunFigures
from lme_bench.metrics.qa import Accuracy, Judged, QaScores, score_qa
from lme_bench.providers.calls import call_totals
from lme_bench.results.atomic import write_text_atomically
from lme_bench.results.qa_records import (
    AccuracyRecord,
    Agreement,
    Figures,
    JudgeRecord,
    PromptSource,
    QaReport,
    Retries,
)
from lme_bench.results.qa_tables import HypothesisRow, ScoreRow

UNKNOWN_PROMPTS: PromptSource = {"source": "unknown", "description": "", "script_sha256": None}


def first_verdicts(rows: Sequence[ScoreRow]) -> dict[str, ScoreRow]:
    """A judge's verdict per question: its first judgment (repeat 0), as the official script
    judges each question once; repeats only measure agreement."""
    return {r.question_id: r for r in rows if r.repeat == 0 and r.status == "ok"}


def _accuracy(acc: Accuracy) -> AccuracyRecord:
    return {"accuracy": acc.value, "correct": acc.correct, "n": acc.n, "ci95": acc.ci95}


def _retries(rows: Sequence[object]) -> Retries:
    totals = call_totals(rows)
    return {
        "retries": totals["retries"],
        "retries_throttled": totals["retries_throttled"],
        "retries_timeout": totals["retries_timeout"],
        "retries_connection": totals["retries_connection"],
        "retries_server": totals["retries_server"],
        "capped_replies": totals["capped_replies"],
        "timeouts": totals["timeouts"],
    }


def _figures(qa: QaScores) -> Figures:
    return {
        "per_type": {t: _accuracy(a) for t, a in qa.per_type.items()},
        "task_averaged": _accuracy(qa.task_averaged),
        "overall": _accuracy(qa.overall),
        "abstention": _accuracy(qa.abstention),
    }


def _judge_summary(
    rows: Sequence[ScoreRow],
    types: dict[str, str],
    prompts: PromptSource | None,
    abstention: Collection[str] | None,
) -> JudgeRecord:
    verdicts = first_verdicts(rows)

    def judged(q: str, label: bool | None) -> Judged:
        return Judged(q, types[q], label, None if abstention is None else q in abstention)

    official = score_qa([judged(q, v.label) for q, v in verdicts.items()])
    missing = sorted(q for q in types if q not in verdicts)
    llm = rows[0].judge_kind == "llm"
    figures, retries = _figures(official), _retries(rows)
    summary: JudgeRecord = {
        "per_type": figures["per_type"],
        "task_averaged": figures["task_averaged"],
        "overall": figures["overall"],
        "abstention": figures["abstention"],
        "retries": retries["retries"],
        "retries_throttled": retries["retries_throttled"],
        "retries_timeout": retries["retries_timeout"],
        "retries_connection": retries["retries_connection"],
        "retries_server": retries["retries_server"],
        "capped_replies": retries["capped_replies"],
        "timeouts": retries["timeouts"],
        "kind": rows[0].judge_kind,
        "prompt_version": rows[0].prompt_version,
        "prompt_sha256": sorted({s.prompt_sha256 for s in rows if s.prompt_sha256}),
        "types_judged": len(official.per_type),
        "not_judged": len(missing),
        "not_judged_ids": missing,
        "repeat_agreement": _repeat_agreement(rows) if {s.repeat for s in rows} != {0} else None,
        "attribution": dict(Counter(s.attribution for s in rows if s.repeat == 0)),
    }
    if llm:
        readable = [judged(q, v.label) for q, v in verdicts.items() if v.readable]
        summary["prompts"] = prompts or UNKNOWN_PROMPTS
        summary["unreadable"] = sum(1 for v in verdicts.values() if not v.readable)
        summary["readable_only"] = _figures(score_qa(readable))
    return summary


def qa_summary(
    scores: Sequence[ScoreRow],
    hypotheses: Sequence[HypothesisRow],
    question_types: dict[str, str],
    prompts: PromptSource | None = None,
    abstention: Collection[str] | None = None,
) -> QaReport:
    """Per judge: the official-rule figures over the run's questions (`question_types`: id ->
    type, every question of the run), the readable-only figures, and what is missing.
    `abstention`: the ids the gold flags as abstention (LoCoMo's adversarial questions); None
    reads LongMemEval's `_abs` ids."""
    judges: dict[str, JudgeRecord] = {}
    labels_by_judge: dict[str, dict[str, bool | None]] = {}
    kinds = {s.judge: s.judge_kind for s in scores}
    for judge in sorted(kinds, key=lambda name: (kinds[name] != "llm", name)):  # LLM judges lead
        mine = [s for s in scores if s.judge == judge]
        labels_by_judge[judge] = {q: v.label for q, v in first_verdicts(mine).items()}
        judges[judge] = _judge_summary(mine, question_types, prompts, abstention)
    answered = [h for h in hypotheses if h.status == "ok"]
    return {
        "judges": judges,
        "agreement": _agreement(labels_by_judge),
        "answers": {
            "questions": len(question_types),
            "answered": len(answered),
            "failed": len(question_types) - len(answered),
            "llm_calls": sum(h.llm_calls for h in hypotheses),
            "input_tokens": sum(h.input_tokens for h in hypotheses),
            "output_tokens": sum(h.output_tokens for h in hypotheses),
            **_retries(hypotheses),
        },
    }


def primary_judge(summary: QaReport) -> JudgeRecord | None:
    """The first LLM judge (the fallback when there is none): whose figures lead."""
    judges = summary["judges"]
    llm = [j for j in judges.values() if j["kind"] == "llm"]
    return llm[0] if llm else next(iter(judges.values()), None)


def _repeat_agreement(rows: Sequence[ScoreRow]) -> float | None:
    per_question: dict[str, set[bool]] = defaultdict(set)
    for row in rows:
        if row.label is not None:
            per_question[row.question_id].add(row.label)
    if not per_question:
        return None
    return sum(len(v) == 1 for v in per_question.values()) / len(per_question)


def _agreement(labels: dict[str, dict[str, bool | None]]) -> list[Agreement]:
    """Pairwise agreement of LLM judges, with the questions they disagree on."""
    names = [n for n in labels if not n.startswith("fallback:")]
    pairs: list[Agreement] = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            both = [
                q for q in labels[a] if labels[a][q] is not None and labels[b].get(q) is not None
            ]
            disputed = sorted(q for q in both if labels[a][q] != labels[b][q])
            rate = (len(both) - len(disputed)) / len(both) if both else None
            pairs.append(
                {"judges": [a, b], "agreement": rate, "n": len(both), "disputed": disputed}
            )
    return pairs


# The official evaluate_qa.py names its result file after the short model name it was given.
OFFICIAL_SHORT_NAMES = {
    "gpt-4o-2024-08-06": "gpt-4o",
    "gpt-4o-mini-2024-07-18": "gpt-4o-mini",
    "meta-llama/Meta-Llama-3.1-70B-Instruct": "llama-3.1-70b-instruct",
}


def eval_results_name(judge: str) -> str:
    """`hypotheses.jsonl.eval-results-<name>` as the official script names it for this judge."""
    model = judge.split(":", 1)[1]
    short = OFFICIAL_SHORT_NAMES.get(model, model)
    return "hypotheses.jsonl.eval-results-" + short.replace("/", "_")


def _jsonl(items: Sequence[dict[str, Any]]) -> str:
    return "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in items)


def export_official(
    run_dir: Path, hypotheses: Sequence[HypothesisRow], scores: Sequence[ScoreRow]
) -> list[Path]:
    """hypotheses.jsonl and, per LLM judge, its eval-results file: every question it judged,
    with the official label and the judge's model name, readable by the official printer."""
    lines = [
        {"question_id": h.question_id, "hypothesis": h.hypothesis}
        for h in hypotheses
        if h.hypothesis is not None
    ]
    path = run_dir / "hypotheses.jsonl"
    write_text_atomically(path, _jsonl(lines))
    written = [path]
    for judge in sorted({s.judge for s in scores if s.judge_kind == "llm"}):
        verdicts = first_verdicts([s for s in scores if s.judge == judge])
        model = judge.split(":", 1)[1]
        out = [
            {**line, "autoeval_label": {"model": model, "label": verdicts[qid].label}}
            for line in lines
            if (qid := str(line["question_id"])) in verdicts
        ]
        target = run_dir / eval_results_name(judge)
        write_text_atomically(target, _jsonl(out))
        written.append(target)
    return written


def longmemeval_files(given: FiguresInput) -> RunFigures | None:
    """LongMemEval's `run_figures` hook (lme_bench.benchmarks.scoring_hooks): its official files,
    where the judge ran; no section of its own (its figures are the run's accuracy)."""
    if given.verdicts is None:
        return None
    asked = {r.question_id for r in given.refs}
    export_official(
        given.run_dir,
        [h for h in given.hypotheses or [] if h.question_id in asked],
        [s for s in given.verdicts if s.question_id in asked],
    )  # named after the actual judge
    return None
