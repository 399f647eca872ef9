"""A BEAM question's gold read back from a run's split (lme_bench.benchmarks.split writes a
`BeamGold` as its fields under the gold row's `native`); scorer side only."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lme_bench.benchmarks.protocol import BenchmarkDataError
from lme_bench.builtin_benchmarks.beam.models import ABILITIES, BeamGold
from lme_bench.dataset.build_records import gold_file, gold_of


def beam_gold(native: Mapping[str, Any], where: Path | str = "gold") -> BeamGold:
    """The `BeamGold` whose fields `native` holds (as `dataclasses.asdict` gives them)."""
    try:
        ability = native["ability"]
        gold = BeamGold(
            question_id=str(native["question_id"]),
            conversation_id=str(native["conversation_id"]),
            ability=ability,
            index=int(native["index"]),
            rubric=tuple(str(item) for item in native["rubric"]),
            reference_answer=native.get("reference_answer"),
            ordering_tested=tuple(str(item) for item in native.get("ordering_tested") or ()),
            extra=dict(native.get("extra") or {}),
        )
    except (KeyError, TypeError, ValueError) as exc:
        problem = f"not a BEAM gold record ({type(exc).__name__}: {exc})"
        raise BenchmarkDataError(where, problem) from None
    if ability not in ABILITIES:
        raise BenchmarkDataError(where, f"unknown BEAM ability {ability!r}", field="ability")
    if not gold.rubric:
        raise BenchmarkDataError(where, "no rubric items to judge", field="rubric")
    return gold


def stored_beam_gold(shard: str) -> BeamGold:
    """The gold of the split question whose public view is `shard`."""
    native = gold_of(shard).get("native")
    if not isinstance(native, Mapping):
        raise BenchmarkDataError(gold_file(shard), "holds no BEAM gold record", field="native")
    return beam_gold(native, gold_file(shard))
