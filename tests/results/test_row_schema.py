"""One definition per table: each row type declares its Parquet columns, and what is written
reads back as the same rows; a type that has no column type is refused by name."""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lme_bench.common.row_schema import row_fields
from lme_bench.ingest.records import SessionRecord
from lme_bench.metrics.ranking_metrics import METRIC_NAMES
from lme_bench.results.ingest_table import INGEST_SCHEMA, ingest_table
from lme_bench.results.qa_tables import (
    HYPOTHESES_SCHEMA,
    SCORES_SCHEMA,
    HypothesisRow,
    ScoreRow,
    hypotheses_table,
    scores_table,
)
from lme_bench.results.readback import read_hypotheses, read_ingest, read_scores
from lme_bench.results.tables import RETRIEVAL_SCHEMA
from lme_bench.retrieval.official_ids import RetrievalRow


@pytest.mark.parametrize(
    ("schema", "row_type"),
    [(HYPOTHESES_SCHEMA, HypothesisRow), (SCORES_SCHEMA, ScoreRow), (INGEST_SCHEMA, SessionRecord)],
)
def test_each_table_has_exactly_its_row_types_fields(schema: pa.Schema, row_type: type) -> None:
    assert schema.names == ["run_id", *(f.name for f in fields(row_type))]
    assert schema.field("input_tokens").type == pa.int64()  # Int64 columns
    assert schema.field("error").nullable and not schema.field("question_id").nullable


def test_retrieval_table_spreads_the_metrics_into_columns() -> None:
    base = [f.name for f in fields(RetrievalRow) if f.name != "metrics"]
    assert RETRIEVAL_SCHEMA.names == ["run_id", *base, *METRIC_NAMES]


def test_rows_read_back_as_written(tmp_path: Path) -> None:
    hypothesis = HypothesisRow(
        "q1", "multi-session", False, None, "single", "fake:x", "v1", 10, 3, ["a", "b"],
        evidence_in_context=None, input_tokens=3_000_000_000, error="boom", status="error",
    )  # fmt: skip
    score = ScoreRow(
        "q1", "multi-session", False, "fake:j", "llm", 0, "v2", "default", "a" * 64,
        label=False, readable=False, raw_verdict="", status="ok", attribution="judge-unreadable",
    )  # fmt: skip
    record = SessionRecord("q1", "s000", 0, "agentic", 4, 5, {"add_entry": 2}, {"add_entry": 2})
    for table, rows, read in (
        (hypotheses_table, [hypothesis], read_hypotheses),
        (scores_table, [score], read_scores),
        (ingest_table, [record], read_ingest),
    ):
        path = tmp_path / "t.parquet"
        pq.write_table(table("run", rows), path)
        assert read(path) == rows


def test_an_older_table_reads_with_defaults_for_its_missing_columns(tmp_path: Path) -> None:
    record = SessionRecord("q1", "s000", 0, "raw", 2, retries=3, retries_server=3)
    table = ingest_table("run", [record]).drop_columns(["retries_server", "resumed"])
    pq.write_table(table, tmp_path / "old.parquet")
    (read,) = read_ingest(tmp_path / "old.parquet")
    assert (read.retries, read.retries_server, read.resumed) == (3, 0, False)


def test_a_field_type_without_a_column_type_is_named() -> None:
    @dataclass
    class Odd:
        when: complex

    with pytest.raises(TypeError, match="complex"):
        row_fields(Odd)
