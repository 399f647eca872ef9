"""Reading a run's tables back, for stages that reuse an earlier stage's results (answer again
over an existing ingestion, judge existing hypotheses, report without redoing retrieval)."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from lme_bench.common.row_schema import read_rows
from lme_bench.ingest.records import SessionRecord
from lme_bench.metrics.ranking_metrics import METRIC_NAMES
from lme_bench.results.qa_tables import HypothesisRow, ScoreRow
from lme_bench.retrieval.official_ids import RetrievalRow


def read_retrieval(path: Path) -> list[RetrievalRow]:
    if not path.is_file():
        return []
    rows = []
    for row in pq.read_table(path).to_pylist():
        metrics = {m: row[m] for m in METRIC_NAMES if row.get(m) is not None}
        rows.append(
            RetrievalRow(
                row["question_id"],
                row["question_type"],
                row["is_abstention"],
                row["granularity"],
                list(row["ranked_ids"]),
                metrics,
                row["n_evidence"],
                row["status"],
                row["error"],
                row.get("provenance") or "exact",  # tables before provenance were all exact
                row.get("requested_depth"),
                row.get("depth"),
                row.get("reason"),
                row.get("search_seconds"),  # tables before schema 4 did not time it
                row.get("search_embedding_calls"),  # nor, before schema 5, count its calls
                row.get("search_model_calls"),
                row.get("named_hits"),  # tables before schema 6 did not check the names
                row.get("unstored_hits"),
                row.get("unstored_reason"),
                # by name: tables before it held the waits in search_seconds
                search_wait_seconds=row.get("search_wait_seconds"),
            )
        )
    return rows


def read_hypotheses(path: Path) -> list[HypothesisRow]:
    return read_rows(path, HypothesisRow)


def read_scores(path: Path) -> list[ScoreRow]:
    return read_rows(path, ScoreRow, {"readable": None})  # tables before readable verdicts


def read_ingest(path: Path) -> list[SessionRecord]:
    return read_rows(path, SessionRecord)
