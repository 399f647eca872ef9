"""LongMemEval's `official_check` hook (lme_bench.benchmarks.scoring_hooks) for `lme-bench verify
--official-repo`: its own `print_qa_metrics.py`, run unmodified from a checkout on a bundle's
eval-results file, its printed figures beside the bundle's summary."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lme_bench.results.qa_scores import eval_results_name
from lme_bench.results.run_summary import RunSummary

OFFICIAL_MODEL = "gpt-4o-2024-08-06"  # the only judge model the printer accepts
PRINTER = Path("src") / "evaluation" / "print_qa_metrics.py"
TOTALS = ("Task-averaged Accuracy", "Overall Accuracy", "Abstention Accuracy")


def printed_figures(text: str) -> dict[str, float]:
    """The printer's figures: per type, task-averaged, overall, abstention."""
    found = {m[0]: float(m[1]) for m in re.findall(r"^\t([\w-]+): ([\d.]+|nan) \(", text, re.M)}
    for name in TOTALS:
        match = re.search(rf"^{name}: ([\d.]+|nan)", text, re.M)
        if match:
            found[name] = float(match.group(1))
    return found


def bundle_figures(judge: dict[str, Any]) -> dict[str, float]:
    """The same figures from the bundle's summary, rounded as the printer rounds."""

    def value(acc: dict[str, Any] | None) -> float:
        if not acc or acc.get("accuracy") is None:
            return float("nan")
        return float(round(acc["accuracy"], 4))

    found = {t: value(a) for t, a in judge["per_type"].items()}
    found |= dict(
        zip(
            TOTALS,
            (value(judge.get(k)) for k in ("task_averaged", "overall", "abstention")),
            strict=True,
        )
    )
    return found


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


def official_check(
    files: Mapping[str, bytes],
    summary: RunSummary,
    repo: Path,
    dataset: Path | None,
    python: str = sys.executable,
) -> tuple[list[str], str]:
    """(problems, what held): the printer's figures against the bundle's, each named."""
    printer = repo / PRINTER
    if not printer.is_file():
        return [f"{repo}: not a LongMemEval checkout (no {PRINTER.as_posix()})"], ""
    if dataset is None:
        return ["--official-repo needs --dataset: the printer reads the question types there"], ""
    judges = (summary.qa or {}).get("judges", {})
    official = [n for n, j in judges.items() if j.get("kind") == "llm"
                and n.split(":", 1)[-1] == OFFICIAL_MODEL]  # fmt: skip
    name = eval_results_name(official[0]) if official else ""
    if not official or name not in files:
        return [
            f"the official printer reads only {OFFICIAL_MODEL}'s verdicts; this bundle was"
            f" judged by: {', '.join(judges) or 'no judge'}"
        ], ""
    judge = judges[official[0]]
    with tempfile.TemporaryDirectory(prefix="lme-official-") as scratch:
        results = Path(scratch) / name
        results.write_bytes(files[name])
        done = subprocess.run(
            [python, str(printer), str(results), str(dataset.resolve())],
            capture_output=True,
            text=True,
            cwd=scratch,
        )
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return [f"{PRINTER.as_posix()} failed on {name}: {tail}"], ""
    theirs, ours = printed_figures(done.stdout), bundle_figures(judge)
    note = ""
    absent = [t for t, v in theirs.items() if t not in TOTALS and math.isnan(v) and t not in ours]
    if absent and math.isnan(theirs.get(TOTALS[0], 0.0)):  # its mean over all six types
        ours.pop(TOTALS[0], None)
        note = f"; its task average is nan (no questions of {', '.join(absent)}): not compared"
    problems = [
        f"{name}: the official printer gives {k} {theirs.get(k, 'nothing')}; summary.json"
        f" says {ours[k]}"
        for k in ours
        if k not in theirs or not _same(theirs[k], ours[k])
    ]
    problems += [
        f"{name}: the official printer gives {k}, summary.json nothing"
        for k in theirs
        if k not in ours and not math.isnan(theirs[k]) and k != TOTALS[0]
    ]
    shown = json.dumps({k: v for k, v in theirs.items() if k in ours})
    return problems, f"official print_qa_metrics.py: {len(ours)} figures equal {shown}{note}"
