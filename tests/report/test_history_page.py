"""history.html: a trend chart per headline figure, a point per run linking its report.html,
interval bands and per-type lines; another dataset file breaks every line with a marker saying
why, another judge the judge's figures only, and no line joins runs across a break."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

from lme_bench.report.history_html import write_history_html
from lme_bench.results.history import series_history


def _run(results: Path, run_id: str, day: int, sha: str, judge: str, accuracy: float) -> None:
    folder = results / run_id
    folder.mkdir(parents=True)
    manifest = {
        "run_id": run_id,
        "series": "weekly",
        "benchmark": "longmemeval",
        "code_version": "0.1.0",
        "started_at": f"2026-11-{day:02d}T03:00:00+00:00",
        "finished_at": f"2026-11-{day:02d}T03:10:00+00:00",
        "dataset": {"path": "data/s.json", "sha256": sha},
        "stages": ["ingest", "retrieval", "answer", "judge", "report"],
        "models": {"judge": judge},
        "failed_question_ids": [],
        "ingestion": {"empty_memories": []},
    }
    record = {"accuracy": accuracy, "correct": 1, "n": 4, "ci95": [accuracy - 0.2, accuracy + 0.1]}
    summary = {
        "qa": {
            "judges": {
                judge: {
                    "kind": "llm",
                    "per_type": {"multi-session": record, "temporal-reasoning": record},
                    "overall": record,
                    "task_averaged": record,
                }
            }
        },
        "session": {
            "overall": {"n": 4, "recall_all@5": 0.75, "ndcg_any@10": 0.5},
            "by_type": {"multi-session": {"recall_all@5": 0.5, "ndcg_any@10": 0.4}},
        },
        "cost": {"total": 0.0123},
    }
    (folder / "manifest.json").write_text(json.dumps(manifest))
    (folder / "summary.json").write_text(json.dumps(summary))
    if run_id != "r2":  # r2 wrote no report: its point links nothing
        (folder / "report.html").write_text("<html></html>")


def _breaks(chart: str) -> dict[str, str]:
    found = re.findall(r'class="break" data-before="(\d)"><title>([^<]+)</title>', chart)
    return {before: unescape(title) for before, title in found}


def _charts(page: str) -> dict[str, str]:
    figures = re.findall(r'<figure class="trend">(.*?)</figure>', page, re.S)
    return {re.search(r'aria-label="([^"]+)"', f).group(1): f for f in figures}  # type: ignore[union-attr]


def test_the_page_has_a_point_per_run_links_and_breaks_saying_why(tmp_path: Path) -> None:
    _run(tmp_path, "r1", 2, "aa" * 32, "openai:gpt-4o", 0.5)
    _run(tmp_path, "r2", 9, "aa" * 32, "openai:gpt-4o", 0.6)
    _run(tmp_path, "r3", 16, "bb" * 32, "openai:gpt-4o", 0.4)  # another dataset file
    _run(tmp_path, "r4", 23, "bb" * 32, "openai:gpt-5", 0.45)  # another judge
    page_path = write_history_html(series_history(tmp_path, "weekly"))
    assert page_path == tmp_path / "series" / "weekly" / "history.html"
    assert [p.name for p in page_path.parent.iterdir()] == ["history.html"]  # no temp file left
    page = page_path.read_text()
    charts = _charts(page)
    assert set(charts) == {
        "QA overall",
        "QA task-averaged",
        "session recall_all@5",
        "session nDCG@10",
    }

    qa = charts["QA overall"]
    assert re.findall(r'class="point" data-run="([^"]+)"', qa) == ["r1", "r2", "r3", "r4"]
    links = re.findall(r'<a href="([^"]+)"><circle class="point" data-run="(r\d)"', qa)
    assert links == [
        ("../../r1/report.html", "r1"),
        ("../../r3/report.html", "r3"),
        ("../../r4/report.html", "r4"),
    ]
    breaks = _breaks(qa)
    assert set(breaks) == {"2", "3"}
    assert "dataset file sha256 aaaaaaaaaaaa -> bbbbbbbbbbbb" in breaks["2"]
    assert "judge openai:gpt-4o -> openai:gpt-5" in breaks["3"]
    assert len(re.findall(r'class="line"', qa)) == 1  # r1-r2 only; r3 and r4 stand alone
    assert qa.count('class="band"') == 3  # one per segment
    assert 'data-type="multi-session"' in qa and 'data-type="temporal-reasoning"' in qa

    recall = charts["session recall_all@5"]
    breaks = _breaks(recall)
    assert list(breaks) == ["2"]  # another judge does not break retrieval
    assert len(re.findall(r'class="line"', recall)) == 2  # r1-r2 and r3-r4, never r2-r3
    assert "before r3: dataset file sha256" in page  # the caption says it in words too
    table = page[page.index("<table>") : page.index("</table>")]
    assert '<a href="../../r4/report.html">r4</a>' in table
    assert "<b>judge openai:gpt-4o -&gt; openai:gpt-5</b>" in table
    assert "60.0% [40.0%, 70.0%]" in table and "$0.0123" in table


def test_a_long_run_id_is_shown_by_its_end_under_its_point() -> None:
    from lme_bench.report.history_chart import _short_id

    assert _short_id("run-20261202-023259") == "run-20261202-023259"  # fits: whole
    shown = _short_id("run-20261202-023259-1f2e3d4c")
    assert len(shown) == 20 and shown.startswith("\u2026") and shown.endswith("023259-1f2e3d4c")
