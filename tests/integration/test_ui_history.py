"""The Prefect UI renders a run's `history-<series>` artifact: its heading, the trend charts
as images (SVG data URIs) and the runs' table, in headless Chromium."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from tests.integration.chromium import find_chromium, in_ci, render
from tests.integration.prefect_server import PrefectStack
from tests.integration.runs import CompletedRun, artifacts

pytestmark = pytest.mark.integration


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
