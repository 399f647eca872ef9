"""`lme-bench score`: answers written by any harness, judged and reported as a run judges and
reports them. The settings are a run's with the judge and report stages alone; the answers
become the hypotheses rows the answer stage would have written; the run's judges judge them
(lme_bench.score.judging); lme_bench.run.finish.write_run writes the folder (the official
eval-results file, scores.parquet, summary.json, summary.md, report.html, manifest.json).
A file of rankings (a format with `ranking_rows`, e.g. LongMemEval's retrieval log) is no
answers: its rankings become the retrieval stage's rows, with the retrieval and report stages
alone.

Questions of the dataset the file does not answer are counted and listed in summary.json
(`answers_file.missing_ids`), named in a banner of summary.md, and left out of every figure;
the folder is written all the same (the command then exits 1, see lme_bench.score.command).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from lme_bench.benchmarks.answers import Answer, AnswersFile
from lme_bench.config.settings import Settings
from lme_bench.dataset.shards import QuestionRef
from lme_bench.judge.batch_job_stage import JudgeItem
from lme_bench.results.qa_tables import HypothesisRow
from lme_bench.run.finish import RunReport, RunResults, write_run
from lme_bench.run.steps import judge_panel, plan_run, prepare_questions
from lme_bench.score.formats import format_named, read_answers
from lme_bench.score.judging import judge_answers
from lme_bench.score.matching import match_answers

STAGES = ["judge", "report"]
RANKING_STAGES = ["retrieval", "report"]  # rankings: no answers to judge
STRATEGY = "answers-file"  # the hypotheses rows' strategy: answered elsewhere, read from a file


@dataclass(frozen=True, slots=True)
class Scored:
    report: RunReport
    missing: list[str]  # questions of the dataset without an answer
    failed: list[str]  # questions whose judging failed


def score_settings(
    settings: Settings, dataset: Path, out: Path, stages: list[str] = STAGES
) -> Settings:
    """`settings` with the dataset, the stages, and `out` as the run folder."""
    out = Path(out).expanduser().resolve()
    updates: dict[str, Any] = {
        "run": settings.run.model_copy(
            update={"stages": stages, "id": out.name, "results_dir": out.parent}
        ),
        "dataset": settings.dataset.model_copy(update={"path": Path(dataset)}),
    }
    return settings.model_copy(update=updates)


def hypothesis_row(ref: QuestionRef, answer: Answer) -> HypothesisRow:
    """The row the answer stage would write, for an answer it did not give: no model, no
    search, nothing spent here."""
    return HypothesisRow(
        question_id=ref.question_id,
        question_type=ref.question_type,
        is_abstention=ref.is_abstention,
        hypothesis=answer.hypothesis,
        strategy=STRATEGY,
        qa_model="",
        prompt_version="",
        top_ke=0,
        top_kc=0,
    )


def answers_record(answers: AnswersFile, answered: int, missing: list[str]) -> dict[str, Any]:
    return {
        "path": str(answers.path),
        "name": answers.path.name,
        "format": answers.format,
        "sha256": answers.sha256,
        "answered": answered,
        "missing": len(missing),
        "missing_ids": missing,
    }


def score_file(path: Path, dataset: Path, settings: Settings, out: Path) -> Scored:
    """Judge and report the answers in `path` against `dataset`, into the folder `out`."""
    started_at = datetime.now(UTC)
    configured = settings.dataset.benchmark
    # The file's own errors come first, before any model check.
    answers = read_answers(path, configured)
    ranking_rows = format_named(answers.format, configured).format.ranking_rows
    stages = RANKING_STAGES if ranking_rows is not None else STAGES
    settings = score_settings(settings, dataset, out, stages)
    plan = plan_run(settings)
    prepared, _ = prepare_questions(plan)
    matched = match_answers(answers, prepared, configured)
    record = answers_record(answers, len(matched.refs), matched.missing)
    plan = replace(plan, request={"command": "score", "answers": record})
    if ranking_rows is not None:
        retrieval = [
            row
            for ref in matched.refs
            for row in ranking_rows(answers.path, ref, matched.answers[ref.question_id])
        ]
        results = RunResults(retrieval=retrieval, answers_file=record)
        report = write_run(plan, settings, prepared, matched.refs, results, started_at)
        return Scored(report, matched.missing, [])
    hypotheses = [hypothesis_row(r, matched.answers[r.question_id]) for r in matched.refs]
    plan.run_dir.mkdir(parents=True, exist_ok=True)
    items = [JudgeItem(r, h) for r, h in zip(matched.refs, hypotheses, strict=True)]
    judged = judge_answers(items, judge_panel(settings), plan.run_dir)
    results = RunResults(
        hypotheses=hypotheses, scores=judged.scores, failed=judged.failed, answers_file=record
    )
    report = write_run(plan, settings, prepared, matched.refs, results, started_at)
    return Scored(report, matched.missing, sorted(judged.failed))
