"""The run's tables as the Prefect UI renders them, in headless Chromium at the 1400 px the
UI is checked at: table artifacts in words and percent as report.html shows them, and the
comparison's wide tables split so that each fits the artifact's page (none cut, to be
scrolled). With LME_UI_SCREENSHOTS=docs the cropped screenshots the docs show are saved."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from uuid import UUID

import pytest

from tests.integration.chromium import DevTools, crop_tables, require_chromium, shots_dir, tables
from tests.integration.prefect_server import PrefectStack
from tests.integration.runs import (
    DEPLOYMENT,
    CompletedRun,
    FakeLlm,
    artifacts,
    flow_run_id,
    write_config,
)

pytestmark = pytest.mark.integration

UI_WIDTH = 1400
HAS_TABLES = "document.querySelectorAll('table').length >= {}"


@pytest.fixture(scope="module")
def chromium() -> str:
    return require_chromium()


@pytest.fixture
def browser(chromium: str, tmp_path: Path) -> Iterator[DevTools]:
    # tall, so that a screenshot holds every part of a split table; as wide as the UI is checked
    session = DevTools(chromium, tmp_path / "profile", UI_WIDTH, 2400)
    try:
        yield session
    finally:
        session.close()


@pytest.fixture(scope="module")
def compared_run(
    prefect: PrefectStack,
    fake_llm: FakeLlm,
    completed_run: CompletedRun,
    tmp_path_factory: pytest.TempPathFactory,
) -> UUID:
    """A second run of the smoke deployment beside it-1, compared with it (`compare_to`)."""
    folder = tmp_path_factory.mktemp("it-cmp")
    request = {
        "config": str(write_config(folder, fake_llm.base_url)),
        "run_id": "it-cmp",
        "limit": 6,
        "compare_to": "it-1",
        "results_dir": str(completed_run.run_dir.parent),
    }
    params = json.dumps({"request": request})
    cli = prefect.prefect("deployment", "run", DEPLOYMENT, "--watch", "--params", params)
    assert cli.returncode == 0, cli.stdout + cli.stderr
    return flow_run_id(cli.stdout)


def _save(browser: DevTools, indices: list[int], name: str) -> None:
    folder = shots_dir()
    if folder is not None:
        crop_tables(browser, indices, folder / name)


def _fits(table: dict[str, float]) -> None:
    assert table["right"] <= UI_WIDTH, table
    assert table["overflow"] <= 0, table  # not cut at the page's edge


def test_compare_tables_are_split_to_fit_1400_px(
    prefect: PrefectStack, compared_run: UUID, browser: DevTools
) -> None:
    comparison = artifacts(prefect, compared_run)["compare"]
    browser.open(f"{prefect.ui_url}/artifacts/artifact/{comparison.id}", HAS_TABLES.format(4))
    found = tables(browser)
    qa = [i for i, t in enumerate(found) if t["header"][0] == "question type"]
    assert len(qa) >= 2  # compare's QA accuracy table, in parts
    headers = {h for i in qa for h in found[i]["header"][1:]}
    assert {"A accuracy", "B accuracy", "paired n", "Δ B-A", "95% CI of Δ"} <= headers
    for table in found:
        _fits(table)
    _save(browser, qa, "prefect-compare-tables.png")


def test_table_artifacts_are_in_words_and_percent(
    prefect: PrefectStack, completed_run: CompletedRun, browser: DevTools
) -> None:
    found = artifacts(prefect, completed_run.flow_run)
    scores = found["qa-scores"]
    browser.open(f"{prefect.ui_url}/artifacts/artifact/{scores.id}", HAS_TABLES.format(1))
    (table,) = tables(browser)
    header = [h.lower() for h in table["header"]]
    assert header == ["judge", "question type", "accuracy", "95% interval"]
    assert "100.0% (6 / 6)" in table["text"]  # the fake's "yes" is right
    assert "ci95" not in table["text"] and "0.0833" not in table["text"]
    _fits(table)
    _save(browser, [0], "prefect-qa-scores.png")

    retrieval = found["retrieval-summary"]
    browser.open(f"{prefect.ui_url}/artifacts/artifact/{retrieval.id}", HAS_TABLES.format(1))
    (table,) = tables(browser)
    assert [h.lower() for h in table["header"][:4]] == [
        "question type",
        "questions",
        "top k",
        "recall, any evidence",
    ]
    _fits(table)
    _save(browser, [0], "prefect-retrieval-summary.png")
