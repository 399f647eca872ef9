"""A run's headline figures as Every Eval Ever evaluation results (schema 0.3.0): QA accuracy per
judge (overall, task-averaged, abstention, per question type) with its 95% interval, retrieval
recall and nDCG per granularity, and the numbers of a benchmark's own section of summary.json
that are scores (a key naming accuracy, F1, recall, a mean or a score)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from lme_bench.results.run_summary import RunSummary
from lme_bench.retrieval.official_ids import GRANULARITIES

Result = dict[str, Any]

# The QA groups a judge's record holds, in the order they are written.
QA_GROUPS = (
    ("overall", "overall"),
    ("task_averaged", "task-averaged"),
    ("abstention", "abstention"),
)
# A key naming a score, as a word of it: "overall_f1", "recall_any@5", "mean_over_abilities",
# not a count such as "undefined_scores".
_SCORE_KEY = re.compile(r"(^|_)(accuracy|f1|recall|mean|score)(_|@|$)", re.I)
_AT_K = re.compile(r"@(\d+)$")


def _unit_metric(metric_id: str, name: str, description: str) -> dict[str, Any]:
    """A figure from 0 to 1, higher better."""
    config: dict[str, Any] = {
        "evaluation_description": description,
        "metric_id": metric_id,
        "metric_name": name,
        "metric_kind": name.split("@")[0].split("_")[0],
        "metric_unit": "proportion",
        "lower_is_better": False,
        "score_type": "continuous",
        "min_score": 0.0,
        "max_score": 1.0,
    }
    if found := _AT_K.search(name):
        config["metric_parameters"] = {"k": int(found.group(1))}
    return config


def _score(value: float, n: Any, ci95: Any, method: str) -> dict[str, Any]:
    details: dict[str, Any] = {"score": value}
    uncertainty: dict[str, Any] = {}
    if isinstance(n, int) and not isinstance(n, bool):
        uncertainty["num_samples"] = n
    if isinstance(ci95, list | tuple) and len(ci95) == 2:
        uncertainty["confidence_interval"] = {
            "lower": float(ci95[0]),
            "upper": float(ci95[1]),
            "confidence_level": 0.95,
        }
        if method:
            uncertainty["confidence_interval"]["method"] = method
    if uncertainty:
        details["uncertainty"] = uncertainty
    return details


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _judge_scoring(name: str, record: dict[str, Any]) -> dict[str, Any] | None:
    """llm_scoring for an LLM judge (None for a rule-based one): the judge's model and its
    prompts named by version and sha256 (their text is not copied into the record)."""
    if record.get("kind") != "llm":
        return None
    digests = record.get("prompt_sha256") or []
    prompts = record.get("prompts") or {}
    return {
        "judges": [
            {
                "model_info": {
                    "name": name,
                    "id": name,
                    "additional_details": {
                        "deployment_type": "unknown",
                        "model_availability": "unknown",
                    },
                }
            }
        ],
        "input_prompt": f"{record.get('prompt_version') or 'unknown'} (by sha256 below)",
        "additional_details": {
            "prompt_sha256": ",".join(str(d) for d in digests),
            "prompt_source": str(prompts.get("source") or "unknown"),
        },
    }


def qa_result_id(judge: str, group: str) -> str:
    return f"qa/{judge}/{group}"


def qa_evaluation_name(benchmark: str, label: str) -> str:
    return f"{benchmark} QA accuracy, {label}"


def _qa_results(summary: RunSummary, source: dict[str, Any]) -> Iterator[Result]:
    judges = (summary.qa or {}).get("judges") or {}
    for judge, record in judges.items():
        groups = [(key, label, record.get(key)) for key, label in QA_GROUPS]
        per_type = record.get("per_type") or {}
        groups += [(f"per_type/{t}", t, figures) for t, figures in per_type.items()]
        scoring = _judge_scoring(judge, record)
        for key, label, figures in groups:
            if not isinstance(figures, dict) or not _is_number(figures.get("accuracy")):
                continue  # no question of the group was judged
            metric = _unit_metric(
                "accuracy",
                "accuracy",
                f"share of questions judged right by {judge} ({label}); a reply without a"
                " verdict counts wrong",
            )
            if scoring is not None:
                metric["llm_scoring"] = scoring
            metric["additional_details"] = {"judge": judge}
            yield {
                "evaluation_result_id": qa_result_id(judge, key),
                "evaluation_name": qa_evaluation_name(summary.benchmark, label),
                "source_data": source,
                "metric_config": metric,
                "score_details": _score(
                    figures["accuracy"],
                    figures.get("n"),
                    figures.get("ci95"),
                    "bootstrap over questions, stratified by question type (percentile)",
                ),
            }


def _retrieval_results(summary: RunSummary, source: dict[str, Any]) -> Iterator[Result]:
    written = summary.model_dump(exclude_unset=True)
    for granularity in GRANULARITIES:
        overall = (written.get(granularity) or {}).get("overall") or {}
        for name, value in overall.items():
            if name == "n" or not _is_number(value):
                continue
            yield {
                "evaluation_result_id": f"retrieval/{granularity}/{name}",
                "evaluation_name": f"{summary.benchmark} retrieval, {granularity} level",
                "source_data": source,
                "metric_config": _unit_metric(
                    f"lme_bench.{name}",
                    name,
                    f"{name} of the memory system's search over {granularity}s, averaged over"
                    f" questions ({(written.get('averaging') or {}).get('overall', '')})",
                ),
                "score_details": _score(value, overall.get("n"), None, ""),
            }


def _section_scores(value: Any, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Any]]:
    if not isinstance(value, dict):
        return
    for key, inner in value.items():
        if isinstance(inner, dict):
            yield from _section_scores(inner, (*path, key))
        elif _is_number(inner) and _SCORE_KEY.search(key) and 0 <= inner <= 1:
            yield (*path, key), value


def _section_results(summary: RunSummary, source: dict[str, Any]) -> Iterator[Result]:
    bench = summary.benchmark
    for section_name, section in summary.sections().items():
        for path, parent in _section_scores(section, ()):
            leaf = path[-1]
            n = next(
                (parent[k] for k in ("n", "count", "judged") if _is_number(parent.get(k))), None
            )
            if n is None and _is_number(section.get("questions")):
                n = section["questions"]
            where = " ".join(path[:-1]) or "all questions"
            yield {
                "evaluation_result_id": f"{section_name}/{'/'.join(path)}",
                "evaluation_name": f"{bench} own scoring ({section_name}), {where}",
                "source_data": source,
                "metric_config": _unit_metric(
                    f"{section_name}.{leaf}",
                    leaf,
                    f"{leaf} of the benchmark's own scoring ({section_name} section of"
                    f" summary.json, {where})",
                ),
                "score_details": _score(
                    parent[leaf],
                    n,
                    parent.get("ci95"),
                    "",
                ),
            }


def evaluation_results(summary: RunSummary, source: dict[str, Any]) -> list[Result]:
    """Every figure of the run that maps to an evaluation result, each naming `source`."""
    return [
        *_qa_results(summary, source),
        *_retrieval_results(summary, source),
        *_section_results(summary, source),
    ]
