"""One leaderboard row from one bundle: which table it belongs in (benchmark, dataset file,
judge model and prompts), its system, its figures as its summary.json records them, and what
`verify` found of it. A benchmark whose figures are not in `qa` (scored by a judge of its own)
gives its judge and figures through its report hooks' `leaderboard`."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from lme_bench.benchmarks.report_hooks import BoardFigure, BoardHeadline, report_hooks_of
from lme_bench.publish.errors import PublishError
from lme_bench.publish.pack import MANIFEST, SIGNATURE
from lme_bench.publish.places import bundle_name
from lme_bench.publish.signing import check_signature
from lme_bench.publish.verify import Verdict
from lme_bench.results.qa_records import QaReport
from lme_bench.results.qa_scores import primary_judge

NO_JUDGE = "not judged"


@dataclass(frozen=True, order=True)
class TableKey:
    """What rows must share to be ranked together: runs judged differently never do."""

    benchmark: str
    dataset_sha256: str
    judge: str
    prompt_digest: str  # sha256 of the judge's prompt files' digests, in their order


@dataclass(frozen=True)
class Figure:
    value: float | None
    ci95: tuple[float, float] | None = None
    correct: int | None = None
    n: int | None = None
    label: str | None = None  # what the figure is, when not the QA accuracy


@dataclass(frozen=True)
class Row:
    bundle: str  # the bundle's file name
    run_id: str
    key: TableKey
    dataset_name: str
    prompt_version: str
    system: str
    settings_digest: str | None
    questions: int | None
    overall: Figure | None
    task_averaged: Figure | None
    session_recall_all_5: float | None
    search_p50_s: float | None
    context_tokens: float | None  # the reader's input tokens per answered question
    cost_total: float | None
    cost_per_question: float | None
    estimate: Figure | None  # the successor judge's estimate of the reference judge's figure
    reference_judge: str | None
    verified: bool
    checked: tuple[str, ...]
    problems: tuple[str, ...]
    signer: str | None  # the fingerprint of the key whose signature holds
    report: str | None  # the extracted report.html's file name in the site


def prompt_digest(digests: list[str] | tuple[str, ...]) -> str:
    return hashlib.sha256(json.dumps(list(digests)).encode()).hexdigest()


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _figure(record: Any) -> Figure | None:
    if not isinstance(record, dict):
        return None
    ci = record.get("ci95")
    interval = (float(ci[0]), float(ci[1])) if isinstance(ci, list) and len(ci) == 2 else None
    correct, n = record.get("correct"), record.get("n")
    return Figure(
        _number(record.get("accuracy")),
        interval,
        correct if isinstance(correct, int) else None,
        n if isinstance(n, int) else None,
    )


def _context_tokens(answers: dict[str, Any]) -> float | None:
    tokens, answered = _number(answers.get("input_tokens")), _number(answers.get("answered"))
    return tokens / answered if tokens is not None and answered else None


def _system(memory: dict[str, Any]) -> str:
    backend = str(memory.get("backend") or "unknown")
    search = memory.get("search")
    return f"{backend} ({search})" if search else backend


def _judge(summary: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    qa = summary.get("qa") or {}
    judges = qa.get("judges") or {}
    if not judges:
        return NO_JUDGE, {}
    record = primary_judge(cast(QaReport, qa))
    name = next(n for n, j in judges.items() if j is record)
    return name, dict(record or {})


def _own_headline(summary: dict[str, Any], record: dict[str, Any]) -> BoardHeadline | None:
    """The benchmark's own headline when `qa` holds no judge and its report hooks give one."""
    if (summary.get("qa") or {}).get("judges"):
        return None
    benchmark = str(summary.get("benchmark") or record.get("benchmark") or "")
    hooks = report_hooks_of(benchmark, summary.get("benchmark_source")) if benchmark else None
    section = summary.get(benchmark)
    if hooks is None or hooks.leaderboard is None or not isinstance(section, dict):
        return None
    found: BoardHeadline | None = hooks.call("leaderboard", section, record)
    return found


def _board_figure(figure: BoardFigure | None) -> Figure | None:
    if figure is None:
        return None
    return Figure(figure.value, figure.ci95, None, figure.n, figure.label)


def _estimate(summary: dict[str, Any], judge: str) -> tuple[Figure | None, str | None]:
    profiled = (summary.get("qa") or {}).get("judge_profile")
    if not isinstance(profiled, dict) or profiled.get("judge") != judge:
        return None, None
    estimate = profiled.get("estimate") or {}
    return _figure(estimate), profiled.get("reference_judge")


def _signer(members: dict[str, bytes]) -> str | None:
    if SIGNATURE not in members:
        return None
    return check_signature(members[MANIFEST], members[SIGNATURE])[0]


def _json(bundle: Path | str, members: dict[str, bytes], name: str) -> dict[str, Any]:
    try:
        found = json.loads(members[name])
    except KeyError:
        raise PublishError(f"{bundle}: no {name}; not an lme-bench bundle") from None
    except ValueError as exc:
        raise PublishError(f"{bundle}: {name} is not JSON ({exc})") from exc
    if not isinstance(found, dict):
        raise PublishError(f"{bundle}: {name} is not a JSON object")
    return found


def bundle_row(
    bundle: Path | str, members: dict[str, bytes], verdict: Verdict, report: str | None
) -> Row:
    """The row of the bundle at `bundle` (its members read, its verdict found); a bundle
    whose BUNDLE.json or summary.json cannot be read has no row (PublishError)."""
    record = _json(bundle, members, MANIFEST)
    summary = _json(bundle, members, "summary.json")
    dataset = record.get("dataset") or {}
    recorded = (summary.get("run") or {}).get("dataset") or {}
    judge, judged = _judge(summary)
    digests = judged.get("prompt_sha256") or []
    own = _own_headline(summary, record)
    if own is not None:
        judge, digests = own.judge, list(own.prompt_digests)
        judged = {"prompt_version": own.prompt_version}
    memory = summary.get("memory") or {}
    cost = summary.get("cost") or {}
    estimate, reference = _estimate(summary, judge)
    return Row(
        bundle=bundle_name(bundle),
        run_id=str(record.get("run_id") or bundle_name(bundle)),
        key=TableKey(
            benchmark=str(summary.get("benchmark") or record.get("benchmark") or "unknown"),
            dataset_sha256=str(dataset.get("sha256") or recorded.get("sha256") or "unknown"),
            judge=judge,
            prompt_digest=prompt_digest(digests) if judged else "",
        ),
        dataset_name=str(dataset.get("name") or Path(str(recorded.get("path") or "")).name),
        prompt_version=str(judged.get("prompt_version") or ""),
        system=_system(memory),
        settings_digest=memory.get("params_digest"),
        questions=dataset.get("questions") if isinstance(dataset.get("questions"), int) else None,
        overall=_board_figure(own.headline) if own else _figure(judged.get("overall")),
        task_averaged=_board_figure(own.second) if own else _figure(judged.get("task_averaged")),
        session_recall_all_5=_number(
            ((summary.get("session") or {}).get("overall") or {}).get("recall_all@5")
        ),
        search_p50_s=_number((summary.get("search_latency") or {}).get("p50_s")),
        context_tokens=_context_tokens((summary.get("qa") or {}).get("answers") or {}),
        cost_total=_number(cost.get("total")),
        cost_per_question=_number(cost.get("per_question")),
        estimate=estimate,
        reference_judge=reference,
        verified=verdict.ok,
        checked=tuple(verdict.held),
        problems=tuple(verdict.problems),
        signer=_signer(members),
        report=report,
    )
