"""`lme-bench leaderboard`: a table per benchmark, dataset file and judge (model and prompt
digest), one row per bundle with its summary's figures, what verify found and the signer; a
tampered bundle is a row marked not verified with the reason, a file that is no bundle is
listed by name; the site replaces an earlier one whole and never a folder of something else."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from lme_bench.cli import main
from lme_bench.publish.archive import read_members
from lme_bench.publish.leaderboard import DATA, PAGE, build_site
from lme_bench.publish.leaderboard_html import table_html
from lme_bench.publish.leaderboard_rows import Figure, Row, TableKey, bundle_row, prompt_digest
from lme_bench.publish.leaderboard_tables import tables_of
from lme_bench.publish.verify import Verdict
from tests.publish.boards import Bundles, three_bundles
from tests.publish.runs import SAMPLE, flip_byte, tampered, write_members


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> Bundles:
    return three_bundles(tmp_path_factory.mktemp("board"))


def _summary(bundles: Bundles, run_id: str) -> dict[str, Any]:
    return dict(json.loads((bundles.runs[run_id] / "summary.json").read_text()))


def _row(bundles: Bundles, run_id: str) -> Row:
    path = bundles.folder / f"{run_id}.bundle.tar.gz"
    return bundle_row(path, read_members(path), Verdict(), None)


def test_a_row_holds_its_bundles_figures(bundles: Bundles) -> None:
    summary = _summary(bundles, "reader")
    judge = summary["qa"]["judges"]["fake:match-judge"]
    row = _row(bundles, "reader")
    assert row.key == TableKey(
        "longmemeval",
        hashlib.sha256(SAMPLE.read_bytes()).hexdigest(),
        "fake:match-judge",  # the LLM judge leads, not the no-LLM fallback beside it
        prompt_digest(judge["prompt_sha256"]),
    )
    assert row.overall == Figure(
        judge["overall"]["accuracy"],
        tuple(judge["overall"]["ci95"]),
        judge["overall"]["correct"],
        judge["overall"]["n"],
    )
    assert row.overall.value == 0.5 and row.overall.ci95 is not None  # figures with spread
    assert row.overall.ci95[0] < 0.5 < row.overall.ci95[1]
    assert row.task_averaged is not None
    assert row.task_averaged.value == judge["task_averaged"]["accuracy"]
    assert row.search_p50_s == summary["search_latency"]["p50_s"]
    answers = summary["qa"]["answers"]
    assert row.context_tokens == answers["input_tokens"] / answers["answered"]
    assert row.settings_digest == summary["memory"]["params_digest"]
    assert row.system == "embedded (bm25)" and row.questions == 6
    assert row.cost_per_question == summary["cost"]["per_question"] and row.cost_total
    assert row.signer == bundles.fingerprint
    assert _row(bundles, "quoter").signer is None and _row(bundles, "quoter").cost_total is None


def _keyed(row: Row, **changes: str) -> Row:
    return dataclasses.replace(row, key=dataclasses.replace(row.key, **changes))


def test_rows_judged_differently_never_share_a_table(bundles: Bundles) -> None:
    reader, quoter, lexical = (_row(bundles, r) for r in ("reader", "quoter", "lexical"))
    tables = tables_of([quoter, lexical, reader])
    assert [[r.run_id for r in t.rows] for t in tables] == [["lexical"], ["reader", "quoter"]]
    assert reader.key.prompt_digest == lexical.key.prompt_digest  # only the model differs
    other_prompts = _keyed(quoter, prompt_digest=prompt_digest(["another prompt"]))
    other_data = _keyed(quoter, dataset_sha256="0" * 64)
    other_benchmark = _keyed(quoter, benchmark="locomo")
    tables = tables_of([reader, quoter, other_prompts, other_data, other_benchmark])
    assert len(tables) == 4
    assert [len(t.rows) for t in tables if t.key == reader.key] == [2]


def test_rows_rank_by_overall_accuracy_with_none_last(bundles: Bundles) -> None:
    quoter = _row(bundles, "quoter")
    ranked = [
        dataclasses.replace(quoter, bundle=name, overall=Figure(value))
        for name, value in (("a", 0.2), ("b", None), ("c", 0.9), ("d", 0.2))
    ]
    (table,) = tables_of(ranked)
    assert [r.bundle for r in table.rows] == ["c", "a", "d", "b"]


def test_a_successor_estimate_has_its_own_labelled_column(bundles: Bundles) -> None:
    path = bundles.folder / "quoter.bundle.tar.gz"
    members = read_members(path)
    summary = json.loads(members["summary.json"])
    summary["qa"]["judge_profile"] = {
        "judge": "fake:match-judge",
        "reference_judge": "gpt-4o-2024-08-06",
        "estimate": {"accuracy": 0.625, "ci95": [0.5, 0.75]},
    }
    members["summary.json"] = json.dumps(summary).encode()
    row = bundle_row(path, members, Verdict(), None)
    assert row.estimate == Figure(0.625, (0.5, 0.75)) and row.overall is not None
    assert row.overall.value == 0.0  # the run's own figure stays the judge's
    page = table_html(tables_of([row])[0], 0)
    header = re.findall(r'<th data-col="(\w+)"', page)
    assert header[2:4] == ["overall", "estimate"]
    assert "estimated official figure (not official)" in page
    estimate = re.search(r'<td data-col="estimate" data-value="0.625">(.*?)</td>', page)
    assert estimate is not None and "est. " in estimate.group(1) and "62.5%" in estimate.group(1)
    overall = re.search(r'<td data-col="overall"[^>]*>(.*?)</td>', page)
    assert overall is not None and "62.5%" not in overall.group(1)
    plain = table_html(tables_of([_row(bundles, "reader")])[0], 0)
    assert 'data-col="estimate"' not in plain  # no estimate: no column


def _board(bundles: Bundles, tmp_path: Path) -> Path:
    folder = tmp_path / "bundles"
    shutil.copytree(bundles.folder, folder)
    return folder


def test_the_site_has_a_page_its_data_and_each_report(bundles: Bundles, tmp_path: Path) -> None:
    out = tmp_path / "site"
    site = build_site(_board(bundles, tmp_path), out)
    assert sorted(p.name for p in out.iterdir()) == [
        PAGE, DATA, "lexical.bundle.report.html", "quoter.bundle.report.html",
        "reader.bundle.report.html",
    ]  # fmt: skip
    for run_id in bundles.runs:
        members = read_members(bundles.folder / f"{run_id}.bundle.tar.gz")
        assert (out / f"{run_id}.bundle.report.html").read_bytes() == members["report.html"]
    page = (out / PAGE).read_text()
    assert page.count('<section class="board"') == 2
    assert '<a href="reader.bundle.report.html">report</a>' in page
    assert "<script src" not in page and "<link" not in page and "http" not in page.lower()
    assert all(r.verified for r in site.rows)
    data = json.loads((out / DATA).read_text())
    checked = [r["checked"] for t in data["tables"] for r in t["rows"]]
    assert all(any("figures of summary.json" in c for c in found) for found in checked)
    assert not list(tmp_path.glob(".site.*"))  # the temporary folder was renamed


def test_a_tampered_bundle_is_shown_not_verified_with_the_reason(
    bundles: Bundles, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _board(bundles, tmp_path)
    tampered(
        folder / "quoter.bundle.tar.gz",
        folder / "quoter.bundle.tar.gz",
        lambda m: m.__setitem__("summary.md", flip_byte(m["summary.md"])),
    )
    (folder / "notes.tar.gz").write_bytes(b"not an archive")
    write_members(folder / "other.tar.gz", {"a.txt": b"a"})
    out = tmp_path / "site"
    code = main(["leaderboard", str(folder), "--out", str(out)])
    said = capsys.readouterr()
    assert code == 0, said.err
    assert "2 verified, 2 unreadable" in said.out
    assert "not verified: quoter.bundle.tar.gz: summary.md: changed" in said.err
    assert "not on the board: notes.tar.gz: not a bundle" in said.err
    assert "not on the board: other.tar.gz: no BUNDLE.json" in said.err
    page = (out / PAGE).read_text()
    row = re.search(r'<tr data-bundle="quoter.bundle.tar.gz" class="unverified">(.*?)</tr>', page)
    assert row is not None and "not verified" in row.group(1)
    assert "FAILED: summary.md: changed (its sha256 is not BUNDLE.json&#x27;s)" in row.group(1)
    assert "<code>notes.tar.gz</code>: not a bundle" in page
    assert str(folder) not in page  # files named, this machine's folders not
    code = main(["leaderboard", str(folder), "--out", str(out), "--require-verified"])
    assert code == 1 and (out / PAGE).is_file()


def test_the_site_replaces_an_earlier_one_and_nothing_else(
    bundles: Bundles, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _board(bundles, tmp_path)
    out = tmp_path / "site"
    build_site(folder, out)
    (out / "stale.report.html").write_text("old")
    (folder / "lexical.bundle.tar.gz").unlink()
    site = build_site(folder, out)
    assert len(site.tables) == 1 and not (out / "stale.report.html").exists()
    assert not (out / "lexical.bundle.report.html").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    other = tmp_path / "mine"
    other.mkdir()
    (other / "keep.txt").write_text("mine")
    code = main(["leaderboard", str(folder), "--out", str(other)])
    assert code == 2 and "not a leaderboard site" in capsys.readouterr().err
    assert [p.name for p in other.iterdir()] == ["keep.txt"]
    empty = tmp_path / "empty"
    empty.mkdir()
    code = main(["leaderboard", str(empty), "--out", str(tmp_path / "s2")])
    assert code == 2 and f"{empty}: no bundles" in capsys.readouterr().err
    assert not (tmp_path / "s2").exists()


def test_what_a_bundle_says_is_shown_as_text_never_as_markup(bundles: Bundles) -> None:
    path = bundles.folder / "quoter.bundle.tar.gz"
    members = read_members(path)
    summary = json.loads(members["summary.json"])
    summary["memory"]["backend"] = '<img src=x onerror="alert(1)">'
    summary["memory"]["params_digest"] = '"><script>alert(2)</script>'
    members["summary.json"] = json.dumps(summary).encode()
    page = table_html(tables_of([bundle_row(path, members, Verdict(), None)])[0], 0)
    assert "<img" not in page and "<script" not in page
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in page
