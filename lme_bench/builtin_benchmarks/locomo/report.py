"""LoCoMo's own figures for a run: the official token-F1 scores per category and overall, as
task_eval/evaluation.py aggregates them (locomo.scoring), the evidence
recall of the retrieval stage's ranking (its first `[qa] top_ke` turns), and the answers
exported in the official format (answers only, no retrieved context;
locomo.export) into the run folder: `locomo_predictions.json`, a list of
conversations as locomo10.json lists them, and `locomo/<n>.json`, one conversation's file as
LoCoMo's own scorer opens it (`eval_question_answering(file, "prediction")`); and each
question's F1 and evidence recall (`locomo_scores.json`, which `lme-bench compare` pairs
across runs). Beside F1, labelled as not the official metric, the first LLM judge's accuracy
per category and overall (its verdicts by locomo.judge_stage's prompt mapping).

The gold labels come from the split's scorer-side files (lme_bench.dataset.build_records); a
question's evidence is compared with its turn ranking as the build's turns (`s001:1`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

from lme_bench.benchmarks.report_hooks import ReportTable
from lme_bench.benchmarks.scoring_hooks import FiguresInput, RunFigures
from lme_bench.builtin_benchmarks.locomo.benchmark import CATEGORY_NAMES
from lme_bench.builtin_benchmarks.locomo.export import (
    Prediction,
    write_conversation_predictions,
    write_predictions,
)
from lme_bench.builtin_benchmarks.locomo.judge_stage import (
    NO_ANSWER_EXPLANATION,
    NOT_OFFICIAL,
    prompt_mapping,
)
from lme_bench.builtin_benchmarks.locomo.records import Conversation, Question, Sample
from lme_bench.builtin_benchmarks.locomo.records import Gold as LocomoGold
from lme_bench.builtin_benchmarks.locomo.report_hooks import QUESTION_SCORES
from lme_bench.builtin_benchmarks.locomo.scoring import ScoredQuestion, aggregate, score_question
from lme_bench.dataset.build_records import gold_of
from lme_bench.dataset.shards import QuestionRef
from lme_bench.report.labels import count, percent
from lme_bench.results.atomic import write_text_atomically
from lme_bench.results.qa_records import AccuracyRecord, QaReport
from lme_bench.results.qa_scores import UNKNOWN_PROMPTS
from lme_bench.results.qa_tables import HypothesisRow
from lme_bench.results.readback import read_hypotheses
from lme_bench.retrieval.official_ids import RetrievalRow

PREDICTIONS_NAME = "locomo_predictions.json"
CONVERSATIONS_FOLDER = "locomo"  # one file per conversation, named as locomo10.zip names them
QUESTION_SCORES_NAME = QUESTION_SCORES  # each question's official F1, for comparisons
NOT_OFFICIAL_SHORT = "not official"


def _native(ref: QuestionRef) -> tuple[LocomoGold, LocomoGold]:
    """The question's LoCoMo gold record, and the same with its evidence as the build's turns
    (`s001:1`): dialog ids the conversation does not hold stay as misses, so recall over
    turns is the official recall over dialog ids."""
    row = gold_of(ref.shard)
    native = dict(row["native"])
    native["evidence"] = tuple(native["evidence"])
    gold = LocomoGold(**native)
    turns = list(row["evidence_turns"])
    missing = [f"missing:{i}" for i in range(len(gold.evidence) - len(turns))]
    return gold, replace(gold, evidence=(*turns, *missing))


def _as_turn(official_id: str) -> str:
    """`answer_s001_2` / `noans_s001_2` / `s001_2` -> `s001:1` (key, turn index from 0)."""
    session, _, number = official_id.rpartition("_")
    return f"{session.rpartition('_')[2]}:{int(number) - 1}"


def _accuracy(record: AccuracyRecord) -> dict[str, Any]:
    return {k: record[k] for k in ("accuracy", "correct", "n", "ci95")}


def judge_figures(qa: QaReport | None) -> dict[str, Any] | None:
    """The first LLM judge's accuracy per LoCoMo category and overall, labelled as not the
    official metric, with its prompts and their mapping (locomo.judge_stage); None
    when no LLM judge gave verdicts."""
    judges = qa["judges"] if qa is not None else {}
    found = [(n, j) for n, j in judges.items() if j["kind"] == "llm"]
    if not found:
        return None
    name, judge = found[0]
    prompts = judge.get("prompts", UNKNOWN_PROMPTS)
    return {
        "label": NOT_OFFICIAL,
        "judge": name,
        "prompts": f"{judge['prompt_version']} ({prompts['description']})",
        "prompt_source": prompts["source"],
        "mapping": prompt_mapping(),
        "categories": {
            c: _accuracy(judge["per_type"][c])
            for c in CATEGORY_NAMES.values()
            if c in judge["per_type"]
        },
        "overall": _accuracy(judge["overall"]),
        "not_judged": judge["not_judged"],
    }


def locomo_report(
    run_dir: Path,
    refs: Sequence[QuestionRef],
    retrieval: Sequence[RetrievalRow],
    hypotheses: Sequence[HypothesisRow] | None,
    depth: int,
    qa: QaReport | None = None,
) -> tuple[dict[str, Any], str]:
    """The run's LoCoMo figures (for summary.json) and their summary.md section, evidence
    recall over the first `depth` turns of each ranking, beside them the LLM judge's accuracy
    from the run's QA summary `qa` (not the official metric); with answers, writes the
    official-format predictions into `run_dir`."""
    ranked = {
        r.question_id: r.ranked_ids[:depth]
        for r in retrieval
        if r.granularity == "turn" and r.status == "ok"
    }
    answered = {
        h.question_id: h.hypothesis
        for h in hypotheses or []
        if h.status == "ok" and h.hypothesis is not None
    }
    scored, predictions = [], {}
    samples: dict[str, list[tuple[Question, LocomoGold]]] = {}
    for ref in refs:
        gold, by_turns = _native(ref)
        retrieved = None
        if ref.question_id in ranked:
            retrieved = [_as_turn(t) for t in ranked[ref.question_id]]
        answer = answered.get(ref.question_id)
        if answer is not None or retrieved is not None:
            scored.append(score_question(by_turns, answer or "", retrieved))
        if answer is not None:
            predictions[ref.question_id] = Prediction(answer=answer)
        index = len(samples.get(ref.build_id, []))
        text = json.loads(Path(ref.shard).read_bytes())["question"]
        question = Question(ref.question_id, ref.build_id, index, text)
        samples.setdefault(ref.build_id, []).append((question, gold))
    scores = aggregate(scored)
    answers_scored = bool(answered)
    figures: dict[str, Any] = {
        "questions": scores.count,
        "answers_scored": answers_scored,
        "overall_f1": scores.overall if answers_scored else None,
        "evidence_recall": scores.overall_recall,
        "evidence_depth": depth,
        "categories": {
            CATEGORY_NAMES[c]: {
                "count": s.count,
                "f1": s.score if answers_scored else None,
                "evidence_recall": s.recall,
            }
            for c, s in scores.categories.items()
        },
    }
    figures["llm_judge"] = judge_figures(qa)
    if answers_scored:
        _write_question_scores(run_dir / QUESTION_SCORES_NAME, scored)
        figures["question_scores"] = QUESTION_SCORES_NAME
    if predictions and len(predictions) == len(refs):
        chosen = [
            Sample(
                conversation=Conversation(build, "", "", ()),
                questions=tuple(q for q, _ in items),
                gold=tuple(g for _, g in items),
            )
            for build, items in samples.items()
        ]
        write_predictions(run_dir / PREDICTIONS_NAME, chosen, predictions)
        figures["predictions"] = PREDICTIONS_NAME
        files = [conversation_file(s.conversation.conversation_id) for s in chosen]
        for sample, name in zip(chosen, files, strict=True):
            write_conversation_predictions(run_dir / name, sample, predictions)
        figures["conversation_predictions"] = files
    return figures, _markdown(figures)


def conversation_file(sample_id: str) -> str:
    """`locomo/26.json` for `conv-26` (the name of its file in locomo10.zip), else
    `locomo/<sample id>.json`."""
    number = sample_id.removeprefix("conv-")
    stem = number if number.isdigit() else sample_id
    return f"{CONVERSATIONS_FOLDER}/{stem}.json"


def _write_question_scores(path: Path, scored: Sequence[ScoredQuestion]) -> None:
    """Each scored question's official F1 and evidence recall, as the figures above add them
    up (lme_bench.compare pairs them per question across runs)."""
    rows = [
        {
            "question_id": q.question_id,
            "category": CATEGORY_NAMES[q.category],
            "f1": q.score,
            "evidence_recall": q.recall,
        }
        for q in scored
    ]
    write_text_atomically(path, json.dumps({"questions": rows}, indent=1) + "\n")


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _judge_cell(judged: dict[str, Any] | None, category: str | None) -> str:
    if judged is None:
        return "-"
    row = judged["overall"] if category is None else judged["categories"].get(category)
    if row is None:
        return "-"
    return f"{percent(row['accuracy'])} ({count(row['correct'])}/{count(row['n'])})"


def _judge_words(judged: dict[str, Any] | None) -> str:
    if judged is None:
        return " No LLM judge gave verdicts on these questions in this run."
    return (
        f" LLM judge accuracy ({judged['label']}): the verdicts of {judged['judge']} with the"
        f" prompts {judged['prompts']}; categories 1-4 by its generic criterion (does the"
        " response contain the gold answer, an open-domain one up to its first `;`), category"
        " 5 (adversarial) by its abstention prompt with the explanation"
        f' "{NO_ANSWER_EXPLANATION}", never the adversarial answer; a reply without "yes" is'
        " wrong. It grades what an answer means, where F1 counts shared words: the two can"
        " differ."
    )


def official_words(figures: dict[str, Any]) -> str:
    """What the figures are: the official metric, evidence recall, the LLM judge beside them."""
    return (
        "Official metric: token F1 by category as task_eval/evaluation.py scores and aggregates"
        " it (category 1 multi-answer F1, category 3 gold cut at `;`, category 5 right when the"
        " answer says the information is not there); evidence recall: the share of each"
        f" question's evidence dialog ids among the first {figures['evidence_depth']} turns of"
        " the retrieval stage's ranking (as many as the reader is shown a search, [qa] top_ke)."
        + _judge_words(figures.get("llm_judge"))
    )


def table(figures: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The header and rows of the figures' table, per category and overall."""
    judged = figures.get("llm_judge")
    header = [
        "category",
        "questions",
        "F1 (official)",
        f"evidence recall @{figures['evidence_depth']}",
        f"LLM judge accuracy ({NOT_OFFICIAL_SHORT})",
    ]
    rows = [
        [
            name,
            str(row["count"]),
            _cell(row["f1"]),
            _cell(row["evidence_recall"]),
            _judge_cell(judged, name),
        ]
        for name, row in figures["categories"].items()
    ]
    rows.append(
        [
            "overall",
            str(figures["questions"]),
            _cell(figures["overall_f1"]),
            _cell(figures["evidence_recall"]),
            _judge_cell(judged, None),
        ]
    )
    return header, rows


def html_section(figures: dict[str, Any]) -> ReportTable:
    """LoCoMo's `html_section` report hook: official F1 first, the LLM judge's accuracy beside
    it as not official (locomo.report_hooks)."""
    header, rows = table(figures)
    return ReportTable("LoCoMo", official_words(figures).replace("`", ""), header, rows)


def _markdown(figures: dict[str, Any]) -> str:
    judged = figures.get("llm_judge")
    header, rows = table(figures)
    lines = [
        "",
        "## LoCoMo",
        "",
        official_words(figures),
        "",
        "| " + " | ".join(header) + " |",
        "|---|" + "---:|" * (len(header) - 1),
        *("| " + " | ".join(row) + " |" for row in rows),
    ]
    if judged is not None and judged["not_judged"]:
        lines += ["", f"{judged['not_judged']} question(s) have no verdict and are left out."]
    if "predictions" in figures:
        files = figures.get("conversation_predictions") or []
        each = f"`{files[0]}`" + (f" … `{files[-1]}`" if len(files) > 1 else "") if files else ""
        lines += [
            "",
            f"Predictions in the official format: `{figures['predictions']}` (the conversations"
            " in one list, as locomo10.json holds them)"
            + (
                f" and one file per conversation, {each}, the file LoCoMo's"
                ' eval_question_answering(file, "prediction") opens.'
                if files
                else "."
            ),
        ]
    return "\n".join(lines) + "\n"


def run_figures(given: FiguresInput) -> RunFigures:
    """LoCoMo's `run_figures` hook (lme_bench.benchmarks.scoring_hooks): `locomo_report` over
    the run's answers (this run's, else those recorded) and `[qa] top_ke` turns of evidence."""
    answers = given.hypotheses
    if answers is None and (given.run_dir / "hypotheses.parquet").exists():
        answers = read_hypotheses(given.run_dir / "hypotheses.parquet")
    depth = given.settings.qa.top_ke
    figures, markdown = locomo_report(
        given.run_dir, given.refs, given.retrieval, answers, depth, cast(Any, given.qa)
    )
    return RunFigures(figures, markdown)
