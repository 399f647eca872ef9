"""A plug-in benchmark's report hooks give it a section of its own: the headline's lead, a
report.html section, a `lme-bench compare` section pairing its figures, and a history figure;
the report and compare code find them by the run's benchmark name, not by a list of names."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import pytest

from lme_bench.benchmarks import registry, report_hooks
from lme_bench.compare import build_comparison
from lme_bench.report.compare_render import render_markdown
from lme_bench.report.html_report import write_html_report
from lme_bench.report.run_report import headline
from lme_bench.results.history_figures import figure_kinds, headline_figures
from tests.ingest.test_memory_health import QA, _run, _settings

PLUGIN = """
from lme_bench.benchmarks.report_hooks import (
    CompareWords, HistoryFigure, HistoryKind, ReportHooks, ReportTable,
)
from lme_bench.compare.official import OfficialPart
from lme_bench.compare.paired import MetricComparison, PairedDelta


ROW = MetricComparison("all", PairedDelta(2, 0.5, 1.0, 0.5, None))


class Choices:
    name = "choices"
    scoring = None
    detect = validate = builds = questions = None
    report_hooks = ReportHooks(
        headline=lambda s: [f"exact-choice accuracy {s['exact']:.2f}"],
        html_section=lambda s: ReportTable("Choices", "Exact match.", ["k", "v"], [["x", "1"]]),
        compare=lambda r: OfficialPart(r.benchmark, "exact choice", [ROW]),
        compare_words=CompareWords("Choices (official)", "seed {seed}", "share", "choice set"),
        replaces_qa="QA accuracy not compared: choices are scored exactly.",
        history_kind=HistoryKind("choices", "exact choice", judged=False, percent=True),
        history=lambda s, run_dir: HistoryFigure(s["exact"], 2, {}),
    )
"""


@pytest.fixture
def registered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    (tmp_path / "lme_choices_example.py").write_text(PLUGIN, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    point = EntryPoint("choices", "lme_choices_example:Choices", registry.ENTRY_POINT_GROUP)
    monkeypatch.setattr(registry, "entry_points", lambda group: [point] * (group == point.group))
    monkeypatch.setattr(registry, "_REQUIRED", ("name",))
    report_hooks.report_hooks_of.cache_clear()
    yield
    report_hooks.report_hooks_of.cache_clear()


def _as_choices(run_dir: Path, exact: float) -> dict[str, Any]:
    path = run_dir / "summary.json"
    summary: dict[str, Any] = json.loads(path.read_text())
    summary["benchmark"] = "choices"
    summary["choices"] = {"exact": exact}
    path.write_text(json.dumps(summary))
    return summary


def test_a_plugin_benchmarks_hooks_give_its_sections(tmp_path: Path, registered: None) -> None:
    report, _ = _run(_settings(tmp_path, None, **QA), limit=2)
    summary = _as_choices(report.run_dir, 0.5)

    assert headline(summary).startswith("exact-choice accuracy 0.50; ")
    page = write_html_report(report.run_dir, "t", summary, [], [], [], [], {}).read_text()
    assert "<h2>Choices</h2><p>Exact match.</p>" in page

    kinds = [k.key for k in figure_kinds()]
    assert kinds[-1] == "choices" and kinds.index("locomo_f1") < kinds.index("beam")
    assert headline_figures(summary, report.run_dir)["choices"].value == 0.5

    other = tmp_path / "b"
    shutil.copytree(report.run_dir, other)
    _as_choices(other, 1.0)
    comparison = build_comparison(report.run_dir.name, "b", results_dir=tmp_path)
    assert comparison.benchmark == "choices" and comparison.qa is None
    text = render_markdown(comparison)
    assert "Choices (official)" in text and "| choice set |" in text
    assert "QA accuracy not compared: choices are scored exactly." in text


def test_a_benchmark_without_hooks_has_no_section(tmp_path: Path) -> None:
    assert report_hooks.report_hooks_of("not-installed-anywhere") == report_hooks.NO_HOOKS
    summary = {"benchmark": "not-installed-anywhere", "not-installed-anywhere": {"exact": 1}}
    assert headline_figures(summary, tmp_path) == {}
