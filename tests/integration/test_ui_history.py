"""The Prefect UI renders a run's `history-<series>` artifact: its heading, the trend charts
as images (SVG data URIs) and the runs' table, in headless Chromium."""

from __future__ import annotations

import html
import json
import re
import time
from pathlib import Path
from uuid import UUID

import pytest
from prefect.client.schemas.objects import StateType

from tests.integration.chromium import (
    DevTools,
    crop,
    find_chromium,
    in_ci,
    render,
    require_chromium,
    shots_dir,
)
from tests.integration.prefect_server import PrefectStack
from tests.integration.runs import CompletedRun, artifacts, flow_run_id, read_flow_run

pytestmark = pytest.mark.integration
WEEKLY = "benchmark/weekly"
# what the third run of docs/weekly.md fell by (the second run its baseline)
REGRESSED = (
    "regressed: QA overall \u221214.7 pt [\u221223.5, \u22125.9], "
    "QA task-averaged \u221213.5 pt [\u221222.2, \u22125.2]"
)
CHARTS_SHOWN = (
    "document.querySelectorAll('img[src^=\"data:image/svg\"]').length >= 4"
    " && document.body.innerText.includes('State Message')"
)
SEE_MORE = """[...document.querySelectorAll('body *')]
  .find(e => e.children.length === 0 && e.textContent.trim() === 'See More').click()"""
# what a screenshot holds: the artifact's description, its first two trend charts (QA overall
# and task-averaged) and the side panel's state message of the flow run
SHOWN_BOXES = """(() => { const box = e => { const r = e.getBoundingClientRect();
    return {left: r.left, top: r.top, right: r.right, bottom: r.bottom}; };
  const leaf = test => [...document.querySelectorAll('body *')]
    .find(e => e.children.length === 0 && test(e.textContent.trim()));
  const label = leaf(t => t === 'State Message');
  const charts = [...document.querySelectorAll('img[src^="data:image/svg"]')].slice(0, 2);
  return [box(leaf(t => t.startsWith('the series of run'))), ...charts.map(box), box(label),
          box(label.nextElementSibling || label.parentElement)]; })()"""


def test_the_history_artifact_shows_the_trend_charts(
    prefect: PrefectStack, completed_run: CompletedRun, tmp_path: Path
) -> None:
    chromium = find_chromium()
    if chromium is None:
        if in_ci():
            pytest.fail("CI is set but chromium is not installed")
        pytest.skip("chromium is not installed (Debian: apt-get install chromium)")
    found = {k: a for k, a in artifacts(prefect, completed_run.flow_run).items()}
    keys = [k for k in found if k.startswith("history-")]
    assert keys == ["history-smoke"]  # the smoke deployment's series
    text = str(found["history-smoke"].data)
    assert "| it-1 |" in text or "[it-1](" in text
    shot = tmp_path / "history.png"
    dom = html.unescape(
        render(chromium, f"{prefect.ui_url}/artifacts/artifact/{found['history-smoke'].id}",
               shot, tmp_path / "profile")
    )  # fmt: skip
    assert ">History of series smoke<" in dom  # rendered as a heading, not raw markdown
    images = re.findall(r'<img[^>]+src="(data:image/svg\+xml;base64,[^"]+)"', dom)
    assert len(images) >= 2  # a chart per headline figure of the run
    assert ">it-1<" in dom  # the table's run, its link rendered


@pytest.fixture(scope="module")
def weekly_series(prefect: PrefectStack, tmp_path_factory: pytest.TempPathFactory) -> list[UUID]:
    """Three runs of the weekly deployment (series `weekly`, compared with the previous run),
    as docs/weekly.md makes them: the third with the worse reader, fake:quote-memory."""
    results = tmp_path_factory.mktemp("weekly-results")
    made = []
    for overrides in ({}, {}, {"models.qa": "fake:quote-memory"}):
        request = {
            "config": "configs/weekly.toml",
            "compare_to": "previous",
            "results_dir": str(results),
            "overrides": overrides,
        }
        params = json.dumps({"request": request})
        cli = prefect.prefect("deployment", "run", WEEKLY, "--watch", "--params", params)
        made.append(flow_run_id(cli.stdout))
        final = read_flow_run(prefect, made[-1]).state
        assert final is not None and final.is_final(), cli.stdout + cli.stderr
    return made


def test_the_weekly_series_shows_its_regression_and_trend_in_the_ui(
    prefect: PrefectStack, weekly_series: list[UUID], tmp_path: Path
) -> None:
    first, second, third = (read_flow_run(prefect, run) for run in weekly_series)
    assert [r.state.type for r in (first, second, third) if r.state] == [
        StateType.COMPLETED, StateType.COMPLETED, StateType.FAILED,
    ]  # fmt: skip
    message = third.state.message if third.state else ""
    assert message is not None and REGRESSED in message, message
    history = artifacts(prefect, third.id)["history-weekly"]
    table = str(history.data)
    assert "models.qa: fake:extractive-reader -> fake:quote-memory" in table
    assert table.count("| 14.7% [5.9%, 26.5%] |") == 2 and "| 0.0% [0.0%, 0.0%] |" in table

    browser = DevTools(require_chromium(), tmp_path / "profile", 1400, 1200)
    try:
        browser.open(f"{prefect.ui_url}/artifacts/artifact/{history.id}", CHARTS_SHOWN)
        browser.evaluate(SEE_MORE)  # the state message, whole
        time.sleep(0.5)
        shown = str(browser.evaluate("document.body.innerText"))
        assert "History of series weekly" in shown
        assert "fake:quote-memory" in shown  # the table, rendered
        assert REGRESSED in shown  # the flow run's state message, beside the trend
        folder = shots_dir()
        if folder is not None:
            crop(browser, browser.evaluate(SHOWN_BOXES), folder / "prefect-history-weekly.png")
    finally:
        browser.close()
