"""QA results of a run: attribution, scores per judge (never mixing judges), agreement, cost,
and the exports in the official formats (hypotheses.jsonl and .eval-results-<judge>)."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lme_bench.config import PriceSettings
from lme_bench.judge.runner import attribute
from lme_bench.metrics.qa import Accuracy, Judged, score_qa
from lme_bench.providers.retry import retries_text, retry_totals
from lme_bench.results.atomic import write_text_atomically
from lme_bench.results.qa_tables import HypothesisRow, ScoreRow


def attribute_all(
    scores: Sequence[ScoreRow], hypotheses: Sequence[HypothesisRow], ingested: set[str]
) -> None:
    by_question = {h.question_id: h for h in hypotheses}
    for row in scores:
        hypothesis = by_question.get(row.question_id)
        row.attribution = attribute(
            ingested=row.question_id in ingested,
            answered=hypothesis is not None and hypothesis.status == "ok",
            evidence_in_context=hypothesis.evidence_in_context if hypothesis else None,
            label=row.label,
            status=row.status,
        )


def majority_labels(rows: Sequence[ScoreRow]) -> dict[str, bool | None]:
    """One label per question from a judge's repeats: the majority of ok verdicts (tie: None)."""
    votes: dict[str, Counter[bool]] = defaultdict(Counter)
    for row in rows:
        votes[row.question_id]  # every question gets a key, judged or not
        if row.status == "ok" and row.label is not None:
            votes[row.question_id][row.label] += 1
    labels: dict[str, bool | None] = {}
    for question_id, count in votes.items():
        yes, no = count[True], count[False]
        labels[question_id] = None if yes == no else yes > no
    return labels


def _accuracy(acc: Accuracy) -> dict[str, Any]:
    return {"accuracy": acc.value, "correct": acc.correct, "n": acc.n, "ci95": acc.ci95}


def _cost(hypotheses: Sequence[HypothesisRow], prices: dict[str, PriceSettings]) -> float | None:
    total = 0.0
    for row in hypotheses:
        price = prices.get(row.qa_model)
        if price is None:
            return None
        total += row.input_tokens / 1e6 * price.input_per_mtok
        total += row.output_tokens / 1e6 * price.output_per_mtok
    return total


def qa_summary(
    scores: Sequence[ScoreRow],
    hypotheses: Sequence[HypothesisRow],
    prices: dict[str, PriceSettings],
) -> dict[str, Any]:
    types = {h.question_id: h.question_type for h in hypotheses}
    judges: dict[str, Any] = {}
    labels_by_judge: dict[str, dict[str, bool | None]] = {}
    for judge in sorted({s.judge for s in scores}):
        mine = [s for s in scores if s.judge == judge]
        labels = majority_labels(mine)
        labels_by_judge[judge] = labels
        qa = score_qa([Judged(q, types.get(q, "?"), label) for q, label in labels.items()])
        repeats = {s.repeat for s in mine}
        judges[judge] = {
            "kind": mine[0].judge_kind,
            "prompt_version": mine[0].prompt_version,
            "prompt_sha256": sorted({s.prompt_sha256 for s in mine if s.prompt_sha256}),
            "per_type": {t: _accuracy(a) for t, a in qa.per_type.items()},
            "task_averaged": _accuracy(qa.task_averaged),
            "overall": _accuracy(qa.overall),
            "abstention": _accuracy(qa.abstention),
            "judge_errors": qa.judge_errors,
            "repeat_agreement": _repeat_agreement(mine) if len(repeats) > 1 else None,
            "attribution": dict(Counter(s.attribution for s in mine if s.repeat == 0)),
            **retry_totals(mine),
        }
    answered = [h for h in hypotheses if h.status == "ok"]
    cost = _cost(hypotheses, prices)
    correct = _primary_correct(judges)
    return {
        "judges": judges,
        "agreement": _agreement(labels_by_judge),
        "answers": {
            "questions": len(hypotheses),
            "answered": len(answered),
            "failed": len(hypotheses) - len(answered),
            "llm_calls": sum(h.llm_calls for h in hypotheses),
            "input_tokens": sum(h.input_tokens for h in hypotheses),
            "output_tokens": sum(h.output_tokens for h in hypotheses),
            **retry_totals(hypotheses),
        },
        "cost": None
        if cost is None
        else {
            "answering_total": cost,
            "per_question": cost / len(hypotheses) if hypotheses else None,
            "per_correct_answer": cost / correct if correct else None,
        },
    }


def _primary_correct(judges: dict[str, Any]) -> int:
    llm = [j for j in judges.values() if j["kind"] == "llm"]
    chosen = llm[0] if llm else next(iter(judges.values()), None)
    return int(chosen["overall"]["correct"]) if chosen else 0


def _repeat_agreement(rows: Sequence[ScoreRow]) -> float | None:
    per_question: dict[str, set[bool]] = defaultdict(set)
    for row in rows:
        if row.label is not None:
            per_question[row.question_id].add(row.label)
    if not per_question:
        return None
    return sum(len(v) == 1 for v in per_question.values()) / len(per_question)


def _agreement(labels: dict[str, dict[str, bool | None]]) -> list[dict[str, Any]]:
    """Pairwise agreement of LLM judges, with the questions they disagree on."""
    names = [n for n in labels if not n.startswith("fallback:")]
    pairs = []
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


def export_official(
    run_dir: Path, hypotheses: Sequence[HypothesisRow], scores: Sequence[ScoreRow]
) -> list[Path]:
    """hypotheses.jsonl and, per LLM judge, hypotheses.jsonl.eval-results-<model> (judged only)."""
    lines = [
        {"question_id": h.question_id, "hypothesis": h.hypothesis}
        for h in hypotheses
        if h.hypothesis is not None
    ]
    path = run_dir / "hypotheses.jsonl"
    write_text_atomically(path, "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines))
    written = [path]
    for judge in sorted({s.judge for s in scores if s.judge_kind == "llm"}):
        labels = majority_labels([s for s in scores if s.judge == judge])
        model = judge.split(":", 1)[1]
        out = [
            {**line, "autoeval_label": {"model": model, "label": labels[line["question_id"]]}}
            for line in lines
            if labels.get(str(line["question_id"])) is not None
        ]
        target = run_dir / f"hypotheses.jsonl.eval-results-{model}"
        write_text_atomically(
            target, "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in out)
        )
        written.append(target)
    return written


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _judge_table(name: str, judge: dict[str, Any]) -> list[str]:
    kind = "LLM judge" if judge["kind"] == "llm" else "no-LLM fallback (not comparable)"
    lines = [
        f"### {kind}: {name} (prompts {judge['prompt_version']})",
        "",
        "| question type | accuracy | correct / judged | 95% CI |",
        "|---|---:|---:|---|",
    ]
    rows = [
        *judge["per_type"].items(),
        ("task-averaged", judge["task_averaged"]),
        ("overall", judge["overall"]),
        ("abstention", judge["abstention"]),
    ]
    for row_name, acc in rows:
        ci = acc["ci95"]
        interval = f"{_pct(ci[0])} to {_pct(ci[1])}" if ci else "-"
        counts = f"{acc['correct']} / {acc['n']}"
        lines.append(f"| {row_name} | {_pct(acc['accuracy'])} | {counts} | {interval} |")
    causes = ", ".join(f"{k} {v}" for k, v in sorted(judge["attribution"].items()))
    lines += [
        "",
        f"Judge errors (not counted as wrong): {judge['judge_errors']}. Attribution: {causes}; "
        f"{retries_text(judge)}.",
        "",
    ]
    return lines


def qa_markdown(summary: dict[str, Any]) -> str:
    answers = summary["answers"]
    lines = [
        "## Question answering",
        "",
        f"{answers['answered']} of {answers['questions']} questions answered "
        f"({answers['failed']} failed); {answers['llm_calls']} QA model calls, "
        f"{retries_text(answers)}.",
        "",
    ]
    for name, judge in summary["judges"].items():
        lines += _judge_table(name, judge)
    for pair in summary["agreement"]:
        disputed = ", ".join(pair["disputed"]) or "none"
        lines.append(
            f"Judge agreement {pair['judges'][0]} vs {pair['judges'][1]}: "
            f"{_pct(pair['agreement'])} over {pair['n']}; disputed: {disputed}."
        )
    cost = summary["cost"]
    if cost:
        per_correct = cost["per_correct_answer"]
        shown = "-" if per_correct is None else f"{per_correct:.5f}"
        lines.append(
            f"Answering cost: {cost['answering_total']:.4f} in all, {cost['per_question']:.5f} "
            f"per question, {shown} per correct answer."
        )
    lines.append(
        "Task-averaged: the plain mean of the per-type accuracies; overall: the mean over all "
        "judged questions; `_abs` questions count inside their base type and again in the "
        "abstention row. Intervals: stratified percentile bootstrap."
    )
    return "\n".join(lines) + "\n"
