"""A series' history of three runs made for real (a few sample questions through the flow, the
reader's settings changed between them): `lme-bench history` lists them newest first with what
changed, their figures and intervals; `--html` writes history.html; every run of the series
publishes the `history-<series>` artifact with the trend and the table."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lme_bench_flows.benchmark import benchmark
from prefect import get_client
from prefect.testing.utilities import prefect_test_harness

from lme_bench import cli
from lme_bench.report.ui_tables import PAGE_PX, column_px
from lme_bench.report.ui_tables import cells as table_cells
from lme_bench.run.request import RunRequest

pytestmark = pytest.mark.slow  # runs the whole flow three times

CONFIG = """
[ingest]
mode = "raw"

[models]
qa = "fake:quote-memory"
judge = "fake:match-judge"

[qa]
strategy = "single"
"""
RUNS = (("w1", {}), ("w2", {"qa.top_ke": 3}), ("w3", {"qa.top_ke": 1, "limits.answer": 2}))


@pytest.fixture(scope="module")
def series(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, list[Any]]]:
    """Three runs of the series `Weekly.Demo` (its config's stem), and their artifacts."""
    results = tmp_path_factory.mktemp("history")
    config = results.parent / "Weekly.Demo.toml"
    config.write_text(CONFIG)
    with prefect_test_harness(server_startup_timeout=120):
        for run_id, overrides in RUNS:
            request = RunRequest(
                config=str(config),
                results_dir=str(results),
                run_id=run_id,
                limit=3,
                overrides=overrides,
            )
            benchmark(request)
        with get_client(sync_client=True) as client:
            artifacts = [a for a in client.read_artifacts() if a.key == "history-weekly-demo"]
        yield results, sorted(artifacts, key=lambda a: a.created)


def _summary(results: Path, run_id: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((results / run_id / "summary.json").read_text())
    return data


def _rows(text: str) -> dict[str, list[str]]:
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        match = re.fullmatch(r"\[?(w\d)\]?(\(.*\))?", cells[0])
        if match:
            rows[match.group(1)] = cells
    return rows


def test_history_lists_the_runs_newest_first_with_settings_changes_and_figures(
    series: tuple[Path, list[Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    results, _ = series
    assert cli.main(["history", "--results-dir", str(results)]) == 0  # the only series
    text = capsys.readouterr().out
    assert text.startswith("# History of series Weekly.Demo")
    header = next(line for line in text.splitlines() if line.startswith("| run |"))
    columns = [c.strip() for c in header.strip("|").split(" | ")]
    assert columns[4:] == [
        "QA overall",
        "QA task-averaged",
        "session recall_all@5",
        "session nDCG@10",
        "cost",
        "failed",
        "empty memories",
    ]
    rows = _rows(text)
    assert list(rows) == ["w3", "w2", "w1"]  # newest first
    assert rows["w3"][3] == "qa.top_ke: 3 -> 1"  # limits change no result: left out
    assert rows["w2"][3] == "qa.top_ke: 10 -> 3"
    assert rows["w1"][3] == "first run"
    for run_id, cells in rows.items():
        summary = _summary(results, run_id)
        manifest = json.loads((results / run_id / "manifest.json").read_text())
        judge = summary["qa"]["judges"]["fake:match-judge"]["overall"]
        low, high = judge["ci95"]
        qa = f"{100 * judge['accuracy']:.1f}% [{100 * low:.1f}%, {100 * high:.1f}%]"
        recall = summary["session"]["overall"]["recall_all@5"]
        assert cells[1] == manifest["started_at"][:16].replace("T", " ")
        assert cells[2] == manifest["code_version"]
        assert cells[4] == qa
        assert cells[6].startswith(f"{recall:.3f} [")
        assert cells[-3:] == ["-", "0", "0"]  # no prices; no failed question, no empty memory


def test_history_html_and_bad_input(
    series: tuple[Path, list[Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    results, _ = series
    assert cli.main(["history", "Weekly.Demo", "--results-dir", str(results), "--html"]) == 0
    page = results / "series" / "Weekly.Demo" / "history.html"
    assert f"wrote: {page}" in capsys.readouterr().out
    text = page.read_text()
    assert text.count('<circle class="point" data-run="w1"') == 4  # one per headline figure
    assert '<a href="../../w3/report.html">' in text
    assert 'class="break"' not in text  # one benchmark, dataset file and judge

    assert cli.main(["history", "monthly", "--results-dir", str(results)]) == 2
    error = capsys.readouterr().err
    assert error.strip() == (
        f"lme-bench: error: {results}: no runs of series 'monthly' (its series: Weekly.Demo)"
    )
    assert cli.main(["history", "--results-dir", str(results / "nowhere")]) == 2
    assert f"{results / 'nowhere'}: no such results folder" in capsys.readouterr().err


def test_every_run_publishes_the_series_history_artifact(series: tuple[Path, list[Any]]) -> None:
    results, artifacts = series
    assert len(artifacts) == 3  # one key, a version per run
    latest = str(artifacts[-1].data)
    rows = _rows(latest)
    assert list(rows) == ["w3", "w2", "w1"]
    report = (results / "w2" / "report.html").resolve().as_uri()
    assert rows["w2"][0] == f"[w2]({report})"
    images = re.findall(r"!\[trend of ([^\]]+)\]\(data:image/svg\+xml;base64,", latest)
    assert images == ["QA overall", "QA task-averaged", "session recall_all@5", "session nDCG@10"]
    page = (results / "series" / "Weekly.Demo" / "history.html").resolve().as_uri()
    assert f"[history.html]({page})" in latest
    assert list(_rows(str(artifacts[0].data))) == ["w1"]  # the first run's: itself alone
    tables = latest.split("| run |")[1:]  # wider than the artifact's page: split
    assert len(tables) >= 2
    for table in tables:
        lines = [line for line in ("| run |" + table).split("\n") if line.startswith("|")]
        columns = zip(
            *(table_cells(line) for line in lines if not line.startswith("|-")), strict=True
        )
        assert sum(column_px(column) for column in columns) <= PAGE_PX
