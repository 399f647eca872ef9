"""A flow run retried after a failed question shows one current card of each artifact: the
server holds none of the failed attempt's (its "1 failed" progress card, its tables), the
artifacts of other flow runs under the same keys are left alone, and the run's Artifacts tab in
the UI shows one progress card. With LME_UI_SCREENSHOTS=docs the tab's cropped screenshot is
saved for the docs."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from uuid import UUID

import pytest
from prefect.client.schemas.objects import Artifact

from tests.integration.chromium import DevTools, boxes_of, crop, require_chromium, shots_dir
from tests.integration.prefect_server import PrefectStack
from tests.integration.runs import (
    CompletedRun,
    FakeLlm,
    artifact_list,
    deployment_run,
    flow_run_id,
    wait_for_attempt,
    write_config,
)

pytestmark = pytest.mark.integration

FAILING_QUESTION = "What is my current 5K personal best?"  # the second sample question
KEYS = {"question-progress", "retrieval-summary", "qa-scores", "run-summary"}


@dataclass
class RetriedRun:
    flow_run: UUID
    first: list[Artifact]  # the failed attempt's artifacts, read before the retry
    others: set[UUID]  # another flow run's artifacts before it


@pytest.fixture(scope="module")
def retried(
    prefect: PrefectStack,
    fake_llm: FakeLlm,
    completed_run: CompletedRun,
    tmp_path_factory: pytest.TempPathFactory,
) -> RetriedRun:
    """A smoke run of 3 questions whose second fails, then `prefect flow-run retry` of it."""
    others = {a.id for a in artifact_list(prefect, completed_run.flow_run)}
    config = write_config(tmp_path_factory.mktemp("it-retry-artifacts"), fake_llm.base_url)
    fake_llm.replies.failing = {FAILING_QUESTION}
    try:
        failed = deployment_run(prefect, config, "it-retry-artifacts", limit=3)
    finally:
        fake_llm.replies.failing = set()
    assert failed.returncode != 0, failed.stdout
    run = flow_run_id(failed.stdout)
    first = artifact_list(prefect, run)
    retry = prefect.prefect("flow-run", "retry", str(run))
    assert retry.returncode == 0, retry.stdout + retry.stderr
    final = wait_for_attempt(prefect, run, attempt=2, timeout=180)
    assert final.state is not None and final.state.is_completed(), final.state
    return RetriedRun(run, first, others)


def test_a_retried_flow_run_has_one_current_artifact_of_each_key(
    prefect: PrefectStack, completed_run: CompletedRun, retried: RetriedRun
) -> None:
    assert {a.key for a in retried.first} >= KEYS
    (stale,) = [a for a in retried.first if a.key == "question-progress"]
    assert "1 failed" in (stale.description or ""), stale.description

    second = artifact_list(prefect, retried.flow_run)
    keys = [str(a.key) for a in second]
    assert sorted(keys) == sorted(set(keys)), [(a.key, a.type) for a in second]  # one each
    assert set(keys) >= KEYS
    assert not {a.id for a in retried.first} & {a.id for a in second}  # all from attempt 2
    (progress,) = [a for a in second if a.key == "question-progress"]
    assert (progress.description or "").startswith("3 of 3 questions done"), progress
    assert "failed" not in (progress.description or "")
    assert float(str(progress.data)) == 100.0
    assert {a.id for a in artifact_list(prefect, completed_run.flow_run)} == retried.others


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[DevTools]:
    session = DevTools(require_chromium(), tmp_path / "profile", 1400, 1000)
    try:
        yield session
    finally:
        session.close()


def test_the_retried_runs_artifacts_tab_shows_one_progress_card(
    prefect: PrefectStack, retried: RetriedRun, browser: DevTools
) -> None:
    tab = f"{prefect.ui_url}/v2/runs/flow-run/{retried.flow_run}?tab=Artifacts"
    browser.open(tab, "document.body.innerText.includes('run-summary')")
    text = str(browser.evaluate("document.body.innerText"))
    for key in KEYS:  # one card each: the failed attempt's are gone
        assert text.count(key) == 1, (key, text)
    folder = shots_dir()
    if folder is not None:
        crop(browser, boxes_of(browser, sorted(KEYS)), folder / "prefect-retried-artifacts.png")
