"""Retries by cause in every table that accounts model calls, in the summaries, and read back."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lme_bench.ingest.records import SessionRecord
from lme_bench.providers.calls import CALL_COLUMNS
from lme_bench.providers.retry import RETRY_COLUMNS, RetryCount, set_retry_columns
from lme_bench.report.ingest import totals_markdown
from lme_bench.report.qa import qa_markdown
from lme_bench.results.ingest_table import (
    INGEST_SCHEMA,
    ingest_table,
    ingest_totals,
)
from lme_bench.results.qa_scores import qa_summary
from lme_bench.results.qa_tables import (
    HYPOTHESES_SCHEMA,
    SCORES_SCHEMA,
    HypothesisRow,
    ScoreRow,
    hypotheses_table,
    scores_table,
)
from lme_bench.results.readback import read_hypotheses, read_ingest, read_scores
from lme_bench.results.tables import write_parquet

CAUSE_COLUMNS = ["retries_throttled", "retries_timeout", "retries_connection", "retries_server"]


def _count(throttled: int, timeout: int, connection: int, server: int) -> RetryCount:
    return RetryCount(throttled=throttled, timeout=timeout, connection=connection, server=server)


def _record(index: int, count: RetryCount) -> SessionRecord:
    record = SessionRecord("q1", f"s{index:03d}", index, "agentic", turns=4, llm_calls=5)
    set_retry_columns(record, count)
    return record


def _hypothesis(question_id: str, count: RetryCount) -> HypothesisRow:
    row = HypothesisRow(
        question_id, "temporal-reasoning", False, "Austin", "single", "m", "v1", 10, 1
    )
    set_retry_columns(row, count)
    return row


def _score(question_id: str, count: RetryCount) -> ScoreRow:
    row = ScoreRow(
        question_id, "temporal-reasoning", False, "llm:judge", "llm", 0, "v1", "default",
        "0" * 64, True, True, "yes", "ok", "correct",
    )  # fmt: skip
    set_retry_columns(row, count)
    return row


@pytest.mark.parametrize(
    ("schema", "version"), [(INGEST_SCHEMA, b"5"), (HYPOTHESES_SCHEMA, b"6"), (SCORES_SCHEMA, b"6")]
)
def test_one_column_per_cause_follows_the_total(schema: pa.Schema, version: bytes) -> None:
    names = schema.names
    at = names.index("retries")
    assert names[at : at + 5] == ["retries", *CAUSE_COLUMNS] == list(RETRY_COLUMNS)
    assert names[at + 5 : at + 7] == list(CALL_COLUMNS)  # then capped replies and timeouts
    assert schema.metadata[b"lme_bench.schema_version"] == version


def test_counts_by_cause_reach_the_tables_and_read_back(tmp_path: Path) -> None:
    records = [_record(0, _count(2, 1, 0, 0)), _record(1, _count(0, 0, 3, 1))]
    hypotheses = [_hypothesis("q1", _count(1, 0, 0, 2))]
    scores = [_score("q1", _count(0, 1, 1, 0))]
    write_parquet(tmp_path / "ingest.parquet", ingest_table("r", records))
    write_parquet(tmp_path / "hypotheses.parquet", hypotheses_table("r", hypotheses))
    write_parquet(tmp_path / "scores.parquet", scores_table("r", scores))

    rows = pq.read_table(tmp_path / "ingest.parquet").to_pylist()
    assert [[r[c] for c in RETRY_COLUMNS] for r in rows] == [[3, 2, 1, 0, 0], [4, 0, 0, 3, 1]]
    assert read_ingest(tmp_path / "ingest.parquet") == records
    assert read_hypotheses(tmp_path / "hypotheses.parquet") == hypotheses
    assert read_scores(tmp_path / "scores.parquet") == scores


def test_tables_written_before_the_causes_read_back_with_zero_by_cause(tmp_path: Path) -> None:
    record = _record(0, _count(2, 0, 1, 0))
    older = ingest_table("r", [record]).drop_columns(CAUSE_COLUMNS)
    write_parquet(tmp_path / "ingest.parquet", older)
    (again,) = read_ingest(tmp_path / "ingest.parquet")
    assert again.retries == 3 and all(getattr(again, c) == 0 for c in CAUSE_COLUMNS)


def test_summaries_give_the_total_and_each_cause() -> None:
    records = [_record(0, _count(2, 1, 0, 0)), _record(1, _count(0, 0, 3, 1))]
    totals = ingest_totals(records)
    assert [totals[c] for c in RETRY_COLUMNS] == [7, 2, 1, 3, 1]
    assert "7 retries (throttled 2, timeout 1, connection 3, server 1)" in totals_markdown(totals)

    hypotheses = [_hypothesis("q1", _count(1, 0, 0, 2)), _hypothesis("q2", _count(1, 0, 0, 0))]
    scores = [_score("q1", _count(0, 1, 1, 0)), _score("q2", _count(4, 0, 0, 0))]
    summary = qa_summary(
        scores, hypotheses, {"q1": "temporal-reasoning", "q2": "temporal-reasoning"}
    )
    assert [summary["answers"][c] for c in RETRY_COLUMNS] == [4, 2, 0, 0, 2]
    assert [summary["judges"]["llm:judge"][c] for c in RETRY_COLUMNS] == [6, 4, 1, 1, 0]
    markdown = qa_markdown(summary)
    assert "QA model calls, 4 retries (throttled 2, timeout 0, connection 0, server 2)" in markdown
    assert "6 retries (throttled 4, timeout 1, connection 1, server 0)" in markdown
