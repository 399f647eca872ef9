"""BEAM's own figures for a run: per LLM judge, the score per ability and the mean over the
abilities as BEAM's report_results.py aggregates them (each ability's mean within a chat, then
the chats' means; beam.scoring.aggregate), per tier and per chat, with the
questions whose judging failed or did not happen counted. The scores are the judge stage's
`score` column (beam.judge_stage); the first judge's repeat 0 leads.

Exports, per chat whose questions form the head of each ability's list in
probing_questions.json (the official evaluator pairs answers and rubrics by position), into
`beam/<tier>/<n>/`: the answers as run_evaluation.py reads them (`results-lme-bench.json`) and,
when every one of them was judged, the per-question figures as it writes them
(`evaluation-results-lme-bench.json`, which report_results.py reads).
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lme_bench.benchmarks.report_hooks import ReportTable
from lme_bench.benchmarks.scoring_hooks import FiguresInput, RunFigures
from lme_bench.builtin_benchmarks.beam.export import write_official_answers
from lme_bench.builtin_benchmarks.beam.models import BeamGold, ProbingQuestion, ProbingSet
from lme_bench.builtin_benchmarks.beam.scoring import QuestionScore, aggregate
from lme_bench.builtin_benchmarks.beam.stored import stored_beam_gold
from lme_bench.dataset.shards import QuestionRef
from lme_bench.results.atomic import write_text_atomically
from lme_bench.results.qa_tables import HypothesisRow, ScoreRow
from lme_bench.results.readback import read_hypotheses, read_scores

EXPORT_FOLDER = "beam"
ANSWERS_NAME = "results-lme-bench.json"
EVALUATION_NAME = "evaluation-" + ANSWERS_NAME
NO_JUDGE = (
    "no LLM judge scored the BEAM questions ([models] judge unset, or the judge stage did not"
    " run): BEAM has no official score without one, and lme-bench gives none"
)


def _number(value: float) -> float | None:
    return None if math.isnan(value) else value


def _tier(chat: str) -> str:
    return chat.rpartition("-")[0] or chat


def judge_figures(refs: Sequence[QuestionRef], rows: Sequence[ScoreRow]) -> dict[str, Any]:
    """One judge's BEAM figures from its rows (repeat 0) over the run's BEAM `refs`."""
    first = {r.question_id: r for r in rows if r.repeat == 0}
    scored: list[QuestionScore] = []
    counts: dict[str, int] = defaultdict(int)
    failed = not_judged = 0
    for ref in refs:
        counts[ref.question_type] += 1
        row = first.get(ref.question_id)
        if row is None:
            not_judged += 1
        elif row.status != "ok" or row.score is None:
            failed += 1
        else:
            scored.append(QuestionScore(ref.build_id, ref.question_type, row.score))
    report = aggregate(scored)
    judged: dict[str, int] = defaultdict(int)
    for score in scored:
        judged[score.ability] += 1
    tiers = sorted({_tier(s.conversation_id) for s in scored})
    return {
        "questions": len(refs),
        "judged": len(scored),
        "failed": failed,
        "not_judged": not_judged,
        "undefined_scores": sum(math.isnan(s.score) for s in scored),
        "unreadable_items": sum(_unreadable(row) for row in first.values()),
        "mean_over_abilities": _number(report.overall) if scored else None,
        "abilities": {
            ability: {
                "questions": counts[ability],
                "judged": judged[ability],
                "score": _number(report.per_ability[ability])
                if ability in report.per_ability
                else None,
            }
            for ability in sorted(counts)
        },
        "tiers": {
            tier: _overall([s for s in scored if _tier(s.conversation_id) == tier])
            for tier in tiers
        },
        "chats": {
            chat: {
                "mean_over_abilities": _number(sum(means.values()) / len(means)),
                "abilities": {a: _number(v) for a, v in means.items()},
            }
            for chat, means in report.per_chat.items()
        },
    }


def _ids(refs: Sequence[QuestionRef]) -> set[str]:
    return {r.question_id for r in refs}


def _unreadable(row: ScoreRow) -> int:
    if row.status != "ok" or not row.raw_verdict:
        return 0
    found = json.loads(row.raw_verdict).get("unreadable_items", 0)
    return int(found)


def _overall(scored: list[QuestionScore]) -> dict[str, Any]:
    report = aggregate(scored)
    return {
        "judged": len(scored),
        "mean_over_abilities": _number(report.overall),
        "abilities": {a: _number(v) for a, v in report.per_ability.items()},
    }


def beam_report(
    run_dir: Path,
    refs: Sequence[QuestionRef],
    hypotheses: Sequence[HypothesisRow] | None,
    scores: Sequence[ScoreRow] | None,
    judges: Sequence[str],
) -> tuple[dict[str, Any], str]:
    """The run's BEAM figures (summary.json) and their summary.md section; writes the
    official-format exports into `run_dir`. `judges`: the LLM judges in the order they lead."""
    beam = list(refs)  # one dataset, one benchmark: the run's questions are BEAM's
    ids = _ids(beam)
    mine = [s for s in scores or [] if s.question_id in ids and s.judge_kind == "llm"]
    order = [j for j in judges if any(s.judge == j for s in mine)]
    order += sorted({s.judge for s in mine} - set(order))
    figures: dict[str, Any] = {
        "questions": len(beam),
        "judge": order[0] if order else None,
        "judges": {j: judge_figures(beam, [s for s in mine if s.judge == j]) for j in order},
    }
    if not order:
        figures["note"] = NO_JUDGE
    figures["exports"] = _export(run_dir, beam, hypotheses or [], mine, order[:1])
    return figures, _markdown(figures)


# ---- exports ---------------------------------------------------------------------------------


def _heads(golds: Sequence[BeamGold]) -> bool:
    """Do the questions form the head of each ability's list (indices 0..k-1)?"""
    by_ability: dict[str, list[int]] = defaultdict(list)
    for gold in golds:
        by_ability[gold.ability].append(gold.index)
    return all(sorted(v) == list(range(len(v))) for v in by_ability.values())


def _export(
    run_dir: Path,
    refs: Sequence[QuestionRef],
    hypotheses: Sequence[HypothesisRow],
    rows: Sequence[ScoreRow],
    judge: Sequence[str],
) -> list[str]:
    answers = {
        h.question_id: h.hypothesis
        for h in hypotheses
        if h.status == "ok" and h.hypothesis is not None
    }
    verdicts = {
        r.question_id: r
        for r in rows
        if judge and r.judge == judge[0] and r.repeat == 0 and r.status == "ok"
    }
    chats: dict[str, list[QuestionRef]] = defaultdict(list)
    for ref in refs:
        chats[ref.build_id].append(ref)
    written = []
    for chat, chat_refs in chats.items():
        if not all(r.question_id in answers for r in chat_refs):
            continue
        golds = {r.question_id: stored_beam_gold(r.shard) for r in chat_refs}
        if not _heads(list(golds.values())):
            continue
        tier, _, number = chat.rpartition("-")
        folder = run_dir / EXPORT_FOLDER / (tier or "chats") / (number or chat)
        probing = ProbingSet(
            conversation_id=chat,
            questions=tuple(
                ProbingQuestion(chat, r.question_id.rpartition(":")[2], _text(r)) for r in chat_refs
            ),
            gold=golds,
        )
        write_official_answers(folder / ANSWERS_NAME, probing, answers)
        written.append(str((folder / ANSWERS_NAME).relative_to(run_dir)))
        if all(r.question_id in verdicts for r in chat_refs):
            evaluation = _evaluation(chat_refs, golds, verdicts)
            write_text_atomically(folder / EVALUATION_NAME, json.dumps(evaluation, indent=4))
            written.append(str((folder / EVALUATION_NAME).relative_to(run_dir)))
    return written


def _text(ref: QuestionRef) -> str:
    text: str = json.loads(Path(ref.shard).read_bytes())["question"]
    return text


def _evaluation(
    refs: Sequence[QuestionRef], golds: dict[str, BeamGold], verdicts: dict[str, ScoreRow]
) -> dict[str, list[dict[str, Any]]]:
    """Per ability, in the file's order, each question's figures as the evaluator writes them."""
    by_ability: dict[str, list[tuple[int, dict[str, Any]]]] = defaultdict(list)
    for ref in refs:
        gold = golds[ref.question_id]
        record = json.loads(verdicts[ref.question_id].raw_verdict)
        by_ability[gold.ability].append((gold.index, record))
    return {
        ability: [record for _, record in sorted(items, key=lambda pair: pair[0])]
        for ability, items in sorted(by_ability.items())
    }


# ---- summary.md ------------------------------------------------------------------------------


def beam_words(figures: dict[str, Any]) -> str:
    """What the BEAM figures are, and by which judge (or why there are none)."""
    if figures["judge"] is None:
        return f"{figures['questions']} BEAM questions; {NO_JUDGE}."
    judged = figures["judges"][figures["judge"]]
    return (
        f"Rubric scores by {figures['judge']} with BEAM's own prompts: per ability the mean"
        " within each chat, then over the chats (report_results.py); "
        f"{judged['judged']} of {judged['questions']} questions scored,"
        f" {judged['failed']} judgings failed."
    )


def beam_table(figures: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The first judge's per-ability rows and the mean over abilities (none without one)."""
    header = ["ability", "questions", "judged", "score"]
    if figures["judge"] is None:
        return header, []
    judged = figures["judges"][figures["judge"]]
    rows = [
        [ability, str(row["questions"]), str(row["judged"]), _cell(row["score"])]
        for ability, row in judged["abilities"].items()
    ]
    mean = _cell(judged["mean_over_abilities"])
    rows.append(["mean over abilities", str(judged["questions"]), str(judged["judged"]), mean])
    return header, rows


def html_section(figures: dict[str, Any]) -> ReportTable:
    """BEAM's `html_section` report hook: the per-ability rubric scores by its first LLM judge
    (beam.report_hooks)."""
    header, rows = beam_table(figures)
    return ReportTable("BEAM", beam_words(figures), header, rows)


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _markdown(figures: dict[str, Any]) -> str:
    lines = [
        "",
        "## BEAM",
        "",
        "Official metric: each rubric item judged by the LLM judge with BEAM's own prompt (read"
        " from [judge] beam_repo), a question's score the items' mean (event ordering: tau_norm"
        " of its aligned order); per ability the mean within each chat, then over the chats, as"
        " src/evaluation/report_results.py averages; the mean over abilities weighs each ability"
        " equally (not in the official table). A BEAM score is no yes/no verdict: no accuracy"
        " table counts BEAM questions.",
        "",
    ]
    if figures["judge"] is None:
        lines.append(f"{figures['questions']} BEAM questions; {NO_JUDGE}.")
    for name, judged in figures["judges"].items():
        lines += [
            f"Judge `{name}`: {judged['judged']} of {judged['questions']} questions scored,"
            f" {judged['failed']} judgings failed, {judged['not_judged']} not judged (no answer),"
            f" {judged['unreadable_items']} rubric replies without a usable score (count 0),"
            f" {judged['undefined_scores']} undefined (NaN) event-ordering scores.",
            "",
            "| ability | questions | judged | score |",
            "|---|---:|---:|---:|",
        ]
        for ability, row in judged["abilities"].items():
            lines.append(
                f"| {ability} | {row['questions']} | {row['judged']} | {_cell(row['score'])} |"
            )
        lines.append(
            f"| mean over abilities | {judged['questions']} | {judged['judged']}"
            f" | {_cell(judged['mean_over_abilities'])} |"
        )
        if len(judged["chats"]) > 1:
            lines += ["", "| chat | mean over abilities |", "|---|---:|"]
            lines += [
                f"| {chat} | {_cell(row['mean_over_abilities'])} |"
                for chat, row in judged["chats"].items()
            ]
        if len(judged["tiers"]) > 1:
            lines += ["", "| tier | judged | mean over abilities |", "|---|---:|---:|"]
            lines += [
                f"| {tier} | {row['judged']} | {_cell(row['mean_over_abilities'])} |"
                for tier, row in judged["tiers"].items()
            ]
        lines.append("")
    if figures["exports"]:
        lines.append(
            "Exports in the official formats (answers as run_evaluation.py reads them, per-"
            "question figures as it writes them): "
            + ", ".join(f"`{p}`" for p in figures["exports"])
            + "."
        )
    return "\n".join(lines) + "\n"


def run_figures(given: FiguresInput) -> RunFigures:
    """BEAM's `run_figures` hook (lme_bench.benchmarks.scoring_hooks): `beam_report` over the
    run's answers and scores (this run's, else those recorded), its judges in the order the
    settings name them."""
    answers = given.hypotheses or read_hypotheses(given.run_dir / "hypotheses.parquet")
    judged = given.scores or read_scores(given.run_dir / "scores.parquet")
    settings = given.settings
    judges = [j for j in (settings.models.judge, settings.judge.second_model) if j]
    figures, markdown = beam_report(given.run_dir, given.refs, answers, judged, judges)
    return RunFigures(figures, markdown)
