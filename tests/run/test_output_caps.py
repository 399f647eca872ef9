"""Every model request carries an output cap, per role; replies the cap cut short are counted
per row and in the summary."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from lme_bench.config.settings import ConfigError, load_settings
from tests.run.test_answer_judge import _run


def _toml(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "caps.toml"
    path.write_text(text)
    return path


def test_caps_per_role_one_number_for_all_and_bad_values(tmp_path: Path) -> None:
    caps = load_settings(None).models.max_tokens
    assert (caps.agent, caps.qa, caps.memory, caps.for_role("judge")) == (2048, 1024, 4096, None)
    one = load_settings(_toml(tmp_path, "[models]\nmax_tokens = 300\n")).models.max_tokens
    assert (one.agent, one.qa, one.memory) == (300, 300, 300)
    table = load_settings(_toml(tmp_path, "[models.max_tokens]\nqa = 64\n")).models.max_tokens
    assert (table.agent, table.qa) == (2048, 64)
    with pytest.raises(ConfigError, match=r"models\.max_tokens\.judge"):
        load_settings(_toml(tmp_path, "[models.max_tokens]\njudge = 64\n"))
    with pytest.raises(ConfigError, match=r"models\.max_tokens\.qa"):
        load_settings(_toml(tmp_path, "[models.max_tokens]\nqa = 0\n"))


def test_replies_cut_by_the_cap_are_counted_in_rows_and_summary(tmp_path: Path) -> None:
    settings = load_settings(
        Path("configs/full-fake.toml"),
        **{"run.results_dir": str(tmp_path), "models.max_tokens": {"qa": 16}},
    )
    run_dir, summary = _run(settings, limit=8)

    rows = pq.read_table(run_dir / "hypotheses.parquet").to_pylist()
    capped = [r for r in rows if r["capped_replies"]]
    long_answers = [r for r in rows if len((r["hypothesis"] or "").split()) == 16]
    assert capped and {r["question_id"] for r in capped} == {r["question_id"] for r in long_answers}
    answers = summary["qa"]["answers"]
    assert answers["capped_replies"] == len(capped) and answers["timeouts"] == 0
    shown = (run_dir / "summary.md").read_text()
    assert f"{len(capped)} replies cut by the output cap" in shown
