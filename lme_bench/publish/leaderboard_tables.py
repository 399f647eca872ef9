"""Rows into tables: one per benchmark, dataset file and judge (model and prompt digest), its
rows ranked by the judge's overall accuracy, best first."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from lme_bench.publish.leaderboard_rows import Row, TableKey


@dataclass(frozen=True)
class Table:
    key: TableKey
    rows: tuple[Row, ...]

    @property
    def dataset_name(self) -> str:
        return self.rows[0].dataset_name

    @property
    def prompt_version(self) -> str:
        return self.rows[0].prompt_version

    @property
    def estimated(self) -> bool:
        """Whether any row carries a successor judge's estimate (its column is shown)."""
        return any(r.estimate is not None for r in self.rows)


def _rank(row: Row) -> tuple[bool, float, str]:
    accuracy = row.overall.value if row.overall is not None else None
    return accuracy is None, -(accuracy or 0.0), row.bundle


def tables_of(rows: Iterable[Row]) -> list[Table]:
    """The rows grouped by their table key, tables in key order, rows best first."""
    grouped: dict[TableKey, list[Row]] = defaultdict(list)
    for row in rows:
        grouped[row.key].append(row)
    return [Table(key, tuple(sorted(grouped[key], key=_rank))) for key in sorted(grouped)]
