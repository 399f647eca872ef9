"""BEAM's `official_check` hook (lme_bench.benchmarks.scoring_hooks) for `lme-bench verify
--official-repo`: the checkout's own report (`report_llms_accuracies` of
`src/evaluation/report_results.py`) on the bundle's per-question figures
(`beam/<tier>/<chat>/evaluation-results-lme-bench.json`, as run_evaluation.py writes them), its
mean per ability of each tier beside summary.json's `beam` section for the leading judge.

The function is compiled from the checkout's file unmodified and run alone, with `os` and
`json` and, for pandas (which lme-bench does not install), a stand-in DataFrame that keeps the
table the report would write to Excel; the rest of the checkout (its model clients) is not
imported."""

from __future__ import annotations

import ast
import builtins
import json
import os
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from lme_bench.builtin_benchmarks.beam.report import EVALUATION_NAME
from lme_bench.results.run_summary import RunSummary

REPORT = Path("src") / "evaluation" / "report_results.py"
FUNCTION = "report_llms_accuracies"


def official_report(repo: Path) -> Callable[..., dict[str, float]]:
    """The checkout's report on a tier's folder of chat folders, for one evaluation file name
    (`report(folder, name=EVALUATION_NAME)`): its mean per ability."""
    source = (repo / REPORT).read_text(encoding="utf-8")
    tree = ast.parse(source, filename=str(repo / REPORT))
    found: list[ast.stmt] = [
        n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == FUNCTION
    ]
    if not found:
        raise ValueError(f"{repo / REPORT}: no function {FUNCTION}")
    table: dict[str, Any] = {}

    class DataFrame:  # what the report would write to Excel, kept
        def __init__(self, rows: list[list[float]], columns: list[str]) -> None:
            table["rows"], table["columns"] = rows, columns

        def insert(self, *args: Any) -> None: ...

        def to_excel(self, *args: Any, **kwargs: Any) -> None: ...

    space: dict[str, Any] = {"__builtins__": builtins, "os": os, "json": json}
    space["pd"] = SimpleNamespace(DataFrame=DataFrame)
    module = ast.Module(body=found, type_ignores=[])
    exec(compile(module, str(repo / REPORT), "exec"), space)  # the official function as written

    def report(folder: Path | str, name: str = EVALUATION_NAME) -> dict[str, float]:
        space[FUNCTION](str(folder), [name], "report.xlsx")
        columns, row = table["columns"], table["rows"][0]
        if len(row) != len(columns):  # pandas would refuse the table too
            raise ValueError(
                f"{REPORT.as_posix()} reports the {len(columns)} abilities in each chat; the"
                f" bundle's chats hold {len(row)} (a run of part of a chat)"
            )
        return dict(zip(columns, row, strict=True))

    return report


def _tiers(files: Mapping[str, bytes]) -> dict[str, dict[str, bytes]]:
    """The bundle's evaluation files by tier, each by its chat's folder."""
    tiers: dict[str, dict[str, bytes]] = {}
    for name, data in files.items():
        parts = name.split("/")
        if len(parts) == 4 and parts[0] == "beam" and parts[3] == EVALUATION_NAME:
            tiers.setdefault(parts[1], {})[parts[2]] = data
    return tiers


def official_check(
    files: Mapping[str, bytes], summary: RunSummary, repo: Path, dataset: Path | None
) -> tuple[list[str], str]:
    """(problems, what held): the official means per ability of each tier against the
    bundle's, for the judge whose figures the evaluation files hold."""
    if not (repo / REPORT).is_file():
        return [f"{repo}: not a BEAM checkout (no {REPORT.as_posix()})"], ""
    section = summary.model_dump(exclude_unset=True).get("beam") or {}
    judge = section.get("judge")
    tiers = _tiers(files)
    if not judge or not tiers:
        return [f"summary.json's beam section names no judged {EVALUATION_NAME} files"], ""
    ours = ((section.get("judges") or {}).get(judge) or {}).get("tiers") or {}
    report = official_report(repo)
    problems, compared = [], 0
    for tier, chats in sorted(tiers.items()):
        with tempfile.TemporaryDirectory(prefix="lme-beam-official-") as scratch:
            for chat, data in chats.items():
                (Path(scratch) / chat).mkdir()
                (Path(scratch) / chat / EVALUATION_NAME).write_bytes(data)
            try:
                theirs = report(Path(scratch))
            except ValueError as exc:
                return [f"beam/{tier}: {exc}"], ""
        recorded = (ours.get(tier) or {}).get("abilities") or {}
        for ability, value in theirs.items():
            compared += 1
            if recorded.get(ability) != value:
                where = f"beam.judges.{judge}.tiers.{tier}.abilities.{ability}"
                problems.append(
                    f"{where} is {recorded.get(ability)}; the official report gives {value}"
                )
    held = f"official {REPORT.as_posix()} on {sum(map(len, tiers.values()))} chats"
    return problems, f"{held}: {compared} means per ability equal" if not problems else ""
