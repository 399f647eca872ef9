"""LoCoMo's `official_check` hook (lme_bench.benchmarks.scoring_hooks) for `lme-bench verify
--official-repo`: the checkout's own scorer (`task_eval/evaluation.py` and
`task_eval/evaluation_stats.py`, unmodified, in a process of their own:
locomo.official_driver) on the bundle's per-conversation prediction files, its F1 per category
and overall beside summary.json's `locomo` section. The official overall is its categories'
totals over their counts (it sums in another order than lme-bench: equal to 1e-12)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lme_bench.builtin_benchmarks.locomo.benchmark import CATEGORY_NAMES
from lme_bench.results.run_summary import RunSummary

SCORER = Path("task_eval") / "evaluation.py"
KEY = "prediction"  # the key lme-bench's conversation files hold the answers under
DRIVER = "lme_bench.builtin_benchmarks.locomo.official_driver"


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


def _official(repo: Path, files: Mapping[str, bytes], names: list[str]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="lme-locomo-official-") as scratch:
        for name in names:
            target = Path(scratch) / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(files[name])
        done = subprocess.run(
            [sys.executable, "-m", DRIVER, str(repo.resolve()), KEY, *names],
            capture_output=True,
            text=True,
            cwd=scratch,
        )
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"{SCORER.as_posix()} failed: {tail}")
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def official_check(
    files: Mapping[str, bytes], summary: RunSummary, repo: Path, dataset: Path | None
) -> tuple[list[str], str]:
    """(problems, what held): the official F1 per category and overall against the bundle's."""
    if not (repo / SCORER).is_file():
        return [f"{repo}: not a LoCoMo checkout (no {SCORER.as_posix()})"], ""
    section = summary.model_dump(exclude_unset=True).get("locomo") or {}
    names = [n for n in section.get("conversation_predictions") or [] if n in files]
    if not names or not section.get("answers_scored"):
        return ["summary.json's locomo section names no scored conversation files"], ""
    try:
        stats = _official(repo, files, names)["stats"]
    except (RuntimeError, ValueError, KeyError) as exc:
        return [str(exc)], ""
    counts, totals = stats["category_counts"], stats["cum_accuracy_by_category"]
    problems, compared = [], 0
    for number, name in CATEGORY_NAMES.items():
        ours = (section.get("categories") or {}).get(name)
        count = counts.get(str(number), 0)
        if ours is None or not count:
            if ours is not None or count:
                problems.append(f"locomo.categories.{name}: the official scorer counts {count}")
            continue
        theirs = totals[str(number)] / count
        compared += 2
        if ours.get("count") != count:
            problems.append(f"locomo.categories.{name}.count is {ours.get('count')}; the"
                            f" official scorer counts {count}")  # fmt: skip
        if not _close(float(ours.get("f1", math.nan)), theirs):
            problems.append(f"locomo.categories.{name}.f1 is {ours.get('f1')}; the official"
                            f" scorer gives {theirs}")  # fmt: skip
    overall = sum(totals.values()) / sum(counts.values())
    compared += 1
    if not _close(float(section.get("overall_f1", math.nan)), overall):
        problems.append(f"locomo.overall_f1 is {section.get('overall_f1')}; the official scorer"
                        f" gives {overall}")  # fmt: skip
    held = f"official {SCORER.as_posix()} on {len(names)} conversation files: {compared} F1"
    return problems, f"{held} figures equal" if not problems else ""
