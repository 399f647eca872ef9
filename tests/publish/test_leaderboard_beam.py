"""A BEAM bundle on the leaderboard beside a LongMemEval one: its row's judge, prompts and
figure come from BEAM's own section of summary.json (no `qa` judge), its table's key names the
rubric judge and the digests of the prompt files it read, and BUNDLE.json describes that judge."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from lme_bench.publish.archive import read_members
from lme_bench.publish.leaderboard import PAGE, build_site
from lme_bench.publish.leaderboard_rows import prompt_digest
from lme_bench.publish.leaderboard_tables import tables_of
from lme_bench.publish.pack import bundle_run
from tests.benchmarks.beam.samples import STANDIN_PROMPTS
from tests.publish.boards import BEAM_JUDGE, beam_bundle
from tests.publish.runs import make_run


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two BEAM bundles whose judges read different prompt files, and a LongMemEval bundle."""
    root = tmp_path_factory.mktemp("beamboard")
    bundles = root / "bundles"
    beam_bundle(root / "a", bundles / "beam-a.bundle.tar.gz", "beam-a")
    other = STANDIN_PROMPTS + "\n# another copy of the prompts file\n"
    beam_bundle(root / "b", bundles / "beam-b.bundle.tar.gz", "beam-b", other)
    run = make_run(root / "results", "lme", 4, **{"models.qa": "fake:extractive-reader"})
    bundle_run(run, bundles / "lme.bundle.tar.gz")
    return bundles


def _member(board: Path, run_id: str, name: str) -> dict[str, Any]:
    found = json.loads(read_members(board / f"{run_id}.bundle.tar.gz")[name])
    assert isinstance(found, dict)
    return found


def test_a_beam_row_holds_its_rubric_judges_mean_over_abilities(
    board: Path, tmp_path: Path
) -> None:
    site = build_site(board, tmp_path / "site")
    rows = {r.run_id: r for r in site.rows}
    summary = _member(board, "beam-a", "summary.json")
    record = _member(board, "beam-a", "BUNDLE.json")
    figures = summary["beam"]["judges"][BEAM_JUDGE]
    row = rows["beam-a"]
    assert summary["qa"].get("judges") in (None, {})  # its figures are not in `qa`
    assert row.key.benchmark == "beam" and row.key.judge == BEAM_JUDGE
    own = record["prompts"]["own_judge"]["beam"]
    assert row.key.prompt_digest == prompt_digest([own[k] for k in sorted(own)])
    assert row.prompt_version == "beam-official"
    assert row.overall is not None and row.overall.value == figures["mean_over_abilities"]
    assert row.overall.value is not None and row.overall.value > 0
    assert row.overall.n == figures["judged"] and row.overall.ci95 is None  # BEAM gives none
    assert row.overall.label == "BEAM mean over abilities"
    assert row.system == rows["lme"].system  # the other fields as for any bundle
    assert rows["lme"].key.benchmark == "longmemeval" and rows["lme"].overall is not None
    assert rows["lme"].overall.label is None
    page = (tmp_path / "site" / PAGE).read_text()
    shown = f"{100 * figures['mean_over_abilities']:.1f}%"
    assert f'<span class="label">BEAM mean over abilities</span> <span class="v">{shown}' in page


def test_beam_bundles_whose_judges_read_other_prompts_never_share_a_table(
    board: Path, tmp_path: Path
) -> None:
    site = build_site(board, tmp_path / "site")
    tables = tables_of(site.rows)
    assert sorted(sorted(r.run_id for r in t.rows) for t in tables) == [
        ["beam-a"], ["beam-b"], ["lme"]
    ]  # fmt: skip
    a, b = (next(t.key for t in tables if t.rows[0].run_id == r) for r in ("beam-a", "beam-b"))
    assert a.judge == b.judge == BEAM_JUDGE and a.dataset_sha256 == b.dataset_sha256
    assert a.prompt_digest != b.prompt_digest


def test_bundle_json_describes_beams_rubric_judge(board: Path) -> None:
    members = read_members(board / "beam-a.bundle.tar.gz")
    judge = json.loads(members["BUNDLE.json"])["judges"][BEAM_JUDGE]
    rows = pq.read_table(io.BytesIO(members["scores.parquet"])).to_pylist()
    carried = {r["prompt_sha256"] for r in rows if r["judge"] == BEAM_JUDGE}
    assert len(carried) == 1  # the rubric prompt's digest, on each of its score rows
    assert judge["kind"] == "llm" and judge["prompt_version"] == "beam-official"
    assert judge["prompt_sha256"] == sorted(carried)
