"""The leaderboard page in headless Chromium from a file:// URL: three bundles, two judged by one
judge (one table) and one by another (its own table); every figure shown is its bundle's
summary's, each report link opens that run's report, and a click on a header sorts the rows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lme_bench.publish.leaderboard import PAGE, build_site
from lme_bench.report.labels import dollars, percent, seconds
from tests.integration.chromium import DevTools, png_size, require_chromium, shots_dir
from tests.publish.boards import Bundles, three_bundles

pytestmark = pytest.mark.slow

SHOWN = """[...document.querySelectorAll('section.board')].map(s => ({
  heading: s.querySelector('h2').innerText,
  sort: Object.fromEntries([...s.querySelectorAll('th')].map(
    th => [th.dataset.col, th.getAttribute('aria-sort')])),
  rows: [...s.querySelectorAll('tbody tr')].map(tr => ({bundle: tr.dataset.bundle,
    href: tr.querySelector('a') && tr.querySelector('a').href,
    cells: Object.fromEntries([...tr.cells].map(td => [td.dataset.col, td.innerText]))}))
}))"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Bundles, Path]:
    root = tmp_path_factory.mktemp("board")
    bundles = three_bundles(root)
    return bundles, build_site(bundles.folder, root / "site").out


@pytest.fixture
def browser(tmp_path: Path) -> Any:
    session = DevTools(require_chromium(), tmp_path / "profile", 1400, 1000)
    yield session
    session.close()


def _expected(bundles: Bundles, run_id: str) -> dict[str, str]:
    """What each cell of the run's row must say, from its own summary.json."""
    summary = json.loads((bundles.runs[run_id] / "summary.json").read_text())
    judge = next(j for j in summary["qa"]["judges"].values() if j["kind"] == "llm")
    answers = summary["qa"]["answers"]

    def accuracy(group: dict[str, Any]) -> str:
        low, high = group["ci95"]
        return f"{percent(group['accuracy'])} [{percent(low)}, {percent(high)}]"

    cost = (summary.get("cost") or {}).get("per_question")
    return {
        "overall": accuracy(judge["overall"]),
        "task_averaged": accuracy(judge["task_averaged"]),
        "recall": f"{summary['session']['overall']['recall_all@5']:.3f}",
        "latency": seconds(summary["search_latency"]["p50_s"]),
        "context": f"{answers['input_tokens'] / answers['answered']:,.0f}",
        "cost": dollars(cost),
        "settings": f"settings {summary['memory']['params_digest']}",
    }


def _shown(browser: DevTools) -> list[dict[str, Any]]:
    return list(browser.evaluate(SHOWN))


def _order(browser: DevTools, table: int) -> list[str]:
    return [row["bundle"].split(".")[0] for row in _shown(browser)[table]["rows"]]


def _click(browser: DevTools, table: int, column: str) -> None:
    browser.evaluate(
        f"document.querySelectorAll('section.board')[{table}]"
        f".querySelector('th[data-col=\"{column}\"] button').click()"
    )


def test_each_figure_is_its_bundles(
    site: tuple[Bundles, Path], browser: DevTools, tmp_path: Path
) -> None:
    bundles, out = site
    browser.open((out / PAGE).as_uri(), "document.querySelectorAll('tbody tr').length === 3")
    shown = _shown(browser)
    assert [s["heading"].rsplit(" ", 1)[-1] for s in shown] == [
        "fake:lexical-judge",
        "fake:match-judge",
    ]
    assert [[r["bundle"] for r in s["rows"]] for s in shown] == [
        ["lexical.bundle.tar.gz"],
        ["reader.bundle.tar.gz", "quoter.bundle.tar.gz"],  # best overall accuracy first
    ]
    for table in shown:
        for row in table["rows"]:
            run_id = row["bundle"].split(".")[0]
            cells = row["cells"]
            for column, text in _expected(bundles, run_id).items():
                cell = cells["system"] if column == "settings" else cells[column]
                assert text in cell, (run_id, column, cell)
            assert cells["verified"].startswith("verified")
            signer = bundles.fingerprint[:16] if run_id == "reader" else "unsigned"
            assert cells["signer"].startswith(signer)
            assert row["href"] == (out / f"{run_id}.bundle.report.html").as_uri()
    assert shown[1]["rows"][0]["cells"]["cost"] != "-"  # the priced run has a cost
    shot = tmp_path / "leaderboard.png"
    height = browser.evaluate("document.documentElement.scrollHeight")
    browser.screenshot(shot, {"x": 0, "y": 0, "width": 1400, "height": height})
    assert png_size(shot) == (1400, height) and shot.stat().st_size > 30_000
    folder = shots_dir()
    if folder is not None:
        (folder / "leaderboard.png").write_bytes(shot.read_bytes())
    browser.open(shown[1]["rows"][1]["href"], "document.querySelector('h1')")
    assert browser.evaluate("document.querySelector('h1').innerText") == (
        "lme-bench run quoter (search: bm25)"
    )


def test_a_click_on_a_header_sorts_the_rows(site: tuple[Bundles, Path], browser: DevTools) -> None:
    _, out = site
    browser.open((out / PAGE).as_uri(), "document.querySelectorAll('tbody tr').length === 3")
    assert _order(browser, 1) == ["reader", "quoter"]
    _click(browser, 1, "overall")  # best first on the first click
    assert _order(browser, 1) == ["reader", "quoter"]
    assert _shown(browser)[1]["sort"]["overall"] == "descending"
    _click(browser, 1, "overall")  # then reversed
    assert _order(browser, 1) == ["quoter", "reader"]
    assert _shown(browser)[1]["sort"]["overall"] == "ascending"
    _click(browser, 1, "questions")  # 6 before 4
    assert _order(browser, 1) == ["reader", "quoter"]
    sort = _shown(browser)[1]["sort"]
    assert sort["questions"] == "descending" and sort["overall"] == "none"
    _click(browser, 1, "report")  # text: by file name, a to z
    assert _order(browser, 1) == ["quoter", "reader"]
    assert _order(browser, 0) == ["lexical"]  # the other table is its own
