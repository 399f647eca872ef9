"""The Prefect UI of a completed smoke run, rendered by headless Chromium: the flow run page,
its Artifacts tab and the run-summary artifact.

The Artifacts tab is opened in the UI at /v2/: the default UI resets a `?tab=` in the address
to Logs while the run loads, so without clicks its tab cannot be reached.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.integration.chromium import png_size, render, require_chromium
from tests.integration.prefect_server import PrefectStack
from tests.integration.runs import CompletedRun, artifacts, read_flow_run

pytestmark = pytest.mark.integration

Page = Callable[[str, str], tuple[str, Path]]


@pytest.fixture(scope="module")
def chromium() -> str:
    return require_chromium()


@pytest.fixture
def page(chromium: str, prefect: PrefectStack, tmp_path: Path) -> Page:
    """Render a UI path: (the DOM as rendered, a 1400x1000 screenshot of it)."""

    def load(path: str, name: str) -> tuple[str, Path]:
        shot = tmp_path / f"{name}.png"
        dom = render(chromium, prefect.ui_url + path, shot, tmp_path / f"profile-{name}")
        assert png_size(shot) == (1400, 1000)
        assert shot.stat().st_size > 50_000  # the app's empty shell is a few KB
        return html.unescape(dom), shot

    return load


def test_flow_run_page_shows_the_run(
    page: Page, prefect: PrefectStack, completed_run: CompletedRun
) -> None:
    run = read_flow_run(prefect, completed_run.flow_run)
    dom, _ = page(f"/runs/flow-run/{run.id}", "flow-run")
    assert run.name in dom
    assert "Completed" in dom
    assert "27 Task runs" in dom  # prepare, locate, 6 x 4 per-question stages, write


def test_artifacts_tab_lists_the_reports(page: Page, completed_run: CompletedRun) -> None:
    dom, _ = page(f"/v2/runs/flow-run/{completed_run.flow_run}?tab=Artifacts", "artifacts")
    for key in ("run-summary", "retrieval-summary", "qa-scores", "question-progress"):
        assert key in dom
    assert "6 of 6 questions done" in dom


def test_run_summary_artifact_renders_its_markdown(
    page: Page, prefect: PrefectStack, completed_run: CompletedRun
) -> None:
    summary = artifacts(prefect, completed_run.flow_run)["run-summary"]
    lines = str(summary.data).splitlines()
    headings = [line.lstrip("#").strip() for line in lines if line.startswith("#")]
    assert len(headings) >= 3
    dom, _ = page(f"/artifacts/artifact/{summary.id}", "run-summary")
    assert "run-summary" in dom
    for heading in headings[:3]:
        assert f">{heading}<" in dom  # a rendered heading element, not raw markdown
    for name in ("report.html", "summary.md"):
        link = (completed_run.run_dir / name).resolve().as_uri()
        assert f'href="{link}"' in dom
