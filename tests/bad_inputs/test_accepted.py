"""Odd but valid inputs: the official files hold them, so they must load and run.

- an empty session `[]` in a haystack (LongMemEval_S and _M have a few; the authors call them
  noise to be ignored), kept in place so the other sessions keep their positions;
- a turn with empty content (the official scripts index it like any other turn);
- a long turn under the per-turn limit (long ShareGPT answers reach tens of KB).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from lme_bench_flows.command import main
from prefect.testing.utilities import prefect_test_harness

from lme_bench.dataset.models import MAX_TURN_CHARS
from tests.bad_inputs.cases import PLAIN_CONFIG
from tests.factories import make_question


@pytest.fixture(scope="module")
def harness() -> Iterator[None]:
    with prefect_test_harness(server_startup_timeout=120):
        yield


def _odd_questions() -> list[dict[str, object]]:
    with_empty_session = make_question("aa11bb22")
    with_empty_session["haystack_sessions"].insert(1, [])
    with_empty_session["haystack_session_ids"].insert(1, "sharegpt_empty_0")
    with_empty_session["haystack_dates"].insert(1, "2023/05/10 (Wed) 08:00")
    with_empty_turn = make_question("bb22cc33")
    with_empty_turn["haystack_sessions"][0][0]["content"] = ""  # a user turn
    with_long_turn = make_question("cc33dd44")
    with_long_turn["haystack_sessions"][0][1]["content"] = "pasted log line\n" * (
        MAX_TURN_CHARS // 20
    )
    return [with_empty_session, with_empty_turn, with_long_turn]


@pytest.mark.slow
def test_odd_but_valid_questions_run_end_to_end(
    harness: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "odd.json"
    data.write_text(json.dumps(_odd_questions()))
    config = tmp_path / "run.toml"
    config.write_text(PLAIN_CONFIG)
    results = tmp_path / "results"

    args = ["run", str(config), "--dataset", str(data), "--run-id", "odd"]
    code = main([*args, "--results-dir", str(results)])
    err = capsys.readouterr().err
    assert code == 0, err[-3000:]

    ingest = pq.read_table(results / "odd" / "ingest.parquet").to_pylist()
    assert all(r["status"] == "ok" for r in ingest)
    sessions = {(r["question_id"], r["session_index"]): r["turns"] for r in ingest}
    assert len(sessions) == 3 + 2 + 2
    assert sorted(t for (q, _), t in sessions.items() if q == "aa11bb22") == [0, 2, 4]
    retrieval = pq.read_table(results / "odd" / "retrieval.parquet").to_pylist()
    assert len(retrieval) == 6 and all(r["status"] == "ok" for r in retrieval)
    # the evidence turn is still found where the official ids put it
    turn = {r["question_id"]: r for r in retrieval if r["granularity"] == "turn"}
    assert turn["aa11bb22"]["n_evidence"] == 1
