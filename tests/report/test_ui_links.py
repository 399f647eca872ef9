"""The run-summary artifact's links: report.html first, every result file, under `[run]
link_base` when set (a browser opens http links from the UI, not file:// ones)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lme_bench.config.settings import ConfigError, load_settings
from lme_bench.report.run_report import RunReport
from lme_bench.report.ui_markdown import compare_markdown, report_markdown

BASE = "http://127.0.0.1:4201/"


def _report(results_dir: Path) -> RunReport:
    run_dir = results_dir / "run a"  # a space, to be quoted in the URL
    run_dir.mkdir(parents=True)
    for name in ("report.html", "summary.md", "config.json", "scores.parquet"):
        (run_dir / name).write_text("x", encoding="utf-8")
    return RunReport("run a", run_dir, {}, "# lme-bench run a\n", [])


def _links(markdown: str) -> list[str]:
    return re.findall(r"\]\(([^)]+)\)", markdown)


def test_links_go_under_the_link_base_report_first(tmp_path: Path) -> None:
    links = _links(report_markdown(_report(tmp_path), BASE))
    assert links[0] == BASE + "run%20a/report.html"
    assert links[1:] == [
        BASE + "run%20a/report.html",
        BASE + "run%20a/summary.md",
        BASE + "run%20a/config.json",
        BASE + "run%20a/scores.parquet",
    ]


def test_without_a_link_base_links_are_file_urls(tmp_path: Path) -> None:
    report = _report(tmp_path)
    links = _links(report_markdown(report))
    assert links[0] == (report.run_dir / "report.html").resolve().as_uri()
    assert all(link.startswith("file://") for link in links)


def test_comparison_files_are_linked_under_the_link_base(tmp_path: Path) -> None:
    chart = tmp_path / "b" / "compare" / "compare.svg"
    chart.parent.mkdir(parents=True)
    chart.write_text("<svg/>", encoding="utf-8")
    assert _links(compare_markdown("# c\n", [chart], tmp_path, BASE)) == [
        BASE + "b/compare/compare.svg"
    ]


def test_link_base_comes_from_the_environment_and_must_be_a_url_folder(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LME_RUN__LINK_BASE", BASE)
    assert load_settings(None).run.link_base == BASE
    monkeypatch.setenv("LME_RUN__LINK_BASE", "127.0.0.1:4201")
    with pytest.raises(ConfigError, match="link_base"):
        load_settings(None)


def test_benchmark_exports_are_linked(tmp_path: Path) -> None:
    report = _report(tmp_path)
    exports = ["locomo_predictions.json", "beam/100K/1/results-lme-bench.json", "locomo/26.json"]
    for name in exports:
        (report.run_dir / name).parent.mkdir(parents=True, exist_ok=True)
        (report.run_dir / name).write_text("{}", encoding="utf-8")
    links = _links(report_markdown(report, BASE))
    # After the run's own files, every other file of the folder, in path order.
    assert [BASE + "run%20a/" + name for name in sorted(exports)] == [
        link for link in links if link.endswith(".json") and "config" not in link
    ]
