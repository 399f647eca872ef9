"""Declared Parquet schemas of the run files, and their writers."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from lme_bench.common.row_schema import row_fields, table_schema
from lme_bench.metrics.ranking_metrics import METRIC_NAMES
from lme_bench.results.atomic import write_atomically
from lme_bench.retrieval.official_ids import RetrievalRow

SCHEMA_VERSION = "7"  # 2: provenance and search depth; 3: not-applicable reason; 4: search
# time; 5: the memory system's own calls during the search; 6: hits naming what was never stored;
# 7: the search's waits on lme-bench apart (search_wait_seconds), no longer in search_seconds

# The row's metrics dict is one column per official metric.
RETRIEVAL_SCHEMA = table_schema(
    "retrieval",
    SCHEMA_VERSION,
    [
        *row_fields(RetrievalRow, skip=("metrics",)),
        *[pa.field(name, pa.float64()) for name in METRIC_NAMES],
    ],
)


def retrieval_table(run_id: str, rows: Sequence[RetrievalRow]) -> pa.Table:
    columns: dict[str, list[object]] = {name: [] for name in RETRIEVAL_SCHEMA.names}
    for row in rows:
        columns["run_id"].append(run_id)
        columns["question_id"].append(row.question_id)
        columns["question_type"].append(row.question_type)
        columns["is_abstention"].append(row.is_abstention)
        columns["granularity"].append(row.granularity)
        columns["ranked_ids"].append(row.ranked_ids)
        columns["n_evidence"].append(row.n_evidence)
        columns["status"].append(row.status)
        columns["error"].append(row.error)
        columns["provenance"].append(row.provenance)
        columns["requested_depth"].append(row.requested_depth)
        columns["depth"].append(row.depth)
        columns["reason"].append(row.reason)
        columns["search_seconds"].append(row.search_seconds)
        columns["search_embedding_calls"].append(row.search_embedding_calls)
        columns["search_model_calls"].append(row.search_model_calls)
        columns["named_hits"].append(row.named_hits)
        columns["unstored_hits"].append(row.unstored_hits)
        columns["unstored_reason"].append(row.unstored_reason)
        columns["search_wait_seconds"].append(row.search_wait_seconds)
        for name in METRIC_NAMES:
            columns[name].append(row.metrics.get(name) if row.status == "ok" else None)
    return pa.Table.from_pydict(columns, schema=RETRIEVAL_SCHEMA)


def write_parquet(path: Path, table: pa.Table) -> None:
    write_atomically(path, lambda tmp: pq.write_table(table, tmp))
