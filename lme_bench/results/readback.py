"""Reading a run's tables back, for stages that reuse an earlier stage's results (answer again
over an existing ingestion, judge existing hypotheses, report without redoing retrieval)."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from lme_bench.ingest.records import SessionRecord
from lme_bench.metrics.retrieval import METRIC_NAMES
from lme_bench.results.qa_tables import HypothesisRow, ScoreRow
from lme_bench.retrieval import RetrievalRow

_HYPOTHESIS_FIELDS = set(HypothesisRow.__dataclass_fields__)
_SCORE_FIELDS = set(ScoreRow.__dataclass_fields__)
_SESSION_FIELDS = set(SessionRecord.__dataclass_fields__)


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
            )
        )
    return rows


def read_hypotheses(path: Path) -> list[HypothesisRow]:
    if not path.is_file():
        return []
    return [
        HypothesisRow(**{k: v for k, v in row.items() if k in _HYPOTHESIS_FIELDS})
        for row in pq.read_table(path).to_pylist()
    ]


def read_scores(path: Path) -> list[ScoreRow]:
    if not path.is_file():
        return []
    return [
        ScoreRow(**({"readable": None} | {k: v for k, v in row.items() if k in _SCORE_FIELDS}))
        for row in pq.read_table(path).to_pylist()
    ]


def read_ingest(path: Path) -> list[SessionRecord]:
    if not path.is_file():
        return []
    records = []
    for row in pq.read_table(path).to_pylist():
        fields = {k: v for k, v in row.items() if k in _SESSION_FIELDS}
        fields["tool_calls"] = dict(row["tool_calls"])
        fields["memory_calls"] = dict(row["memory_calls"])
        records.append(SessionRecord(**fields))
    return records
