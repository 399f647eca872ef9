"""`verify --rejudge` for a benchmark scored by a judge of its own (its `own_judge` hook, e.g.
BEAM's rubric judge): graded scores, no yes/no verdict, so the scores are compared.

The judge is the bundle's: its models ([models] judge, [judge] second_model as the run had
them) and the prompts it read, known by what the run recorded of them (manifest.json and
BUNDLE.json `prompts.own_judge.<benchmark>`: the judge's `cache_part`, BEAM's the digests of
the checkout's prompt files). Here the same judge must read the same: its `check` passes on
the settings (`--config`, the environment) and its `cache_part` is the recorded one, else one
problem names the judges, what differs and the setting, and nothing is sent. A bundle made
before the digests were recorded cannot show its judge and is not judged again. The requests
the judge sends (its `request_shapes`) must be those the bundle records it sent
(`judges.<name>.own_judge_requests.<benchmark>`), else one problem names the judge and both.

The bundle's answers files (its answers format's `run_file`, BEAM's one per chat) are judged
by the `score` path, once each. Per judge, each question's first score (repeat 0) is paired
with the bundle's: equal within `TOLERANCE` (two NaNs, BEAM's undefined tau_norm, are equal),
the fraction equal, the mean absolute difference, both mean scores and the ids whose score
differs. A judge at temperature 0 scoring the same answers with the same prompts gives the
same scores; a hosted model is not exactly repeatable, so `min_agreement` bounds the fraction
of equal scores, as it bounds the verdicts' agreement.
"""

from __future__ import annotations

import json
import math
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lme_bench.benchmarks.scoring_hooks import OwnJudge
from lme_bench.config.settings import ConfigError, Settings, load_settings
from lme_bench.judge.family_requests import own_judge_request_shapes
from lme_bench.results.qa_tables import ScoreRow
from lme_bench.results.run_summary import RunSummary
from lme_bench.score.rejudged import (
    LISTED_AT_MOST,
    Comparison,
    bundled_rows,
    compare_judges,
    first_rows,
    judge_again,
    own_request_problems,
    percent,
    rejudge_settings,
)

TOLERANCE = 1e-9  # two scores this close are equal
OWN_JUDGE = "own_judge"  # the key of the own judges' part in a manifest's `prompts`
SETTINGS_WORDS = "the settings it reads its prompts from"  # a judge naming no `prompts_setting`


def same_score(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= TOLERANCE


def _mean(values: list[float]) -> float | None:
    finite = [v for v in values if not math.isnan(v)]
    return sum(finite) / len(finite) if finite else None


def _figure(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


@dataclass(frozen=True, slots=True)
class GradedAgreement:
    """One judge's scores again beside the bundle's, on the questions both scored."""

    judge: str
    pairs: list[tuple[str, float, float]]  # question id, the bundle's score, the rejudged one

    @property
    def equal(self) -> int:
        return sum(same_score(a, b) for _, a, b in self.pairs)

    @property
    def fraction(self) -> float | None:
        return self.equal / len(self.pairs) if self.pairs else None

    @property
    def differing(self) -> list[str]:
        return [q for q, a, b in self.pairs if not same_score(a, b)]

    @property
    def mean_difference(self) -> float | None:
        """Over the pairs whose scores are both defined."""
        return _mean([abs(a - b) for _, a, b in self.pairs])

    @property
    def bundle_mean(self) -> float | None:
        return _mean([a for _, a, _ in self.pairs])

    @property
    def rejudged_mean(self) -> float | None:
        return _mean([b for _, _, b in self.pairs])

    def figures(self) -> str:
        if not self.pairs:
            return "no question scored by both"
        differing = self.differing
        shown = ", ".join(differing[:LISTED_AT_MOST])
        more = (
            f" and {len(differing) - LISTED_AT_MOST} more"
            if len(differing) > LISTED_AT_MOST
            else ""
        )
        return (
            f"{self.equal} of {len(self.pairs)} scores equal ({percent(self.fraction)}), mean"
            f" absolute difference {_figure(self.mean_difference)}, mean score"
            f" {_figure(self.rejudged_mean)} rejudged vs {_figure(self.bundle_mean)} in the"
            " bundle" + (f"; differing: {shown}{more}" if differing else "")
        )


def graded_agreement(
    judge: str, bundle: Mapping[str, float], again: Mapping[str, float]
) -> GradedAgreement:
    """The pairs of the questions both hold (the caller names those only one holds)."""
    shared = sorted(set(bundle) & set(again))
    return GradedAgreement(judge, [(q, bundle[q], again[q]) for q in shared])


def scores_of(rows: list[ScoreRow], judge: str) -> dict[str, float]:
    """Each question's score by `judge` (its first repeat); none where the judging failed."""
    return {r.question_id: r.score for r in first_rows(rows, judge) if r.score is not None}


def graded_judges(record: dict[str, Any], rows: list[ScoreRow]) -> list[str]:
    """The bundle's judges ([models] judge first) that gave it scores."""
    models = record.get("models") or {}
    scored = {r.judge for r in rows if r.score is not None}
    named = [models.get("judge"), models.get("second_judge")]
    return [j for j in named if isinstance(j, str) and j in scored]


def recorded_part(record: dict[str, Any], benchmark: str) -> Any:
    """What the run recorded of its own judge's prompts; None for a bundle without it."""
    return ((record.get("prompts") or {}).get(OWN_JUDGE) or {}).get(benchmark)


def _differences(recorded: Any, here: Any) -> str:
    """What differs, key by key for two mappings of digests."""
    if isinstance(recorded, dict) and isinstance(here, dict):
        keys = sorted(k for k in {*recorded, *here} if recorded.get(k) != here.get(k))
        return "; ".join(
            f"{k}: sha256 {recorded.get(k)} in the bundle, {here.get(k)} here" for k in keys
        )
    return f"{json.dumps(recorded, sort_keys=True)} in the bundle, {json.dumps(here)} here"


def same_own_judge_problems(
    own: OwnJudge, recorded: Any, settings: Settings, judges: list[str]
) -> list[str]:
    """Where the judge set up here would not read the prompts the bundle's read."""
    named = ", ".join(judges)
    setting = getattr(own, "prompts_setting", None) or SETTINGS_WORDS
    try:
        own.check(settings)
    except ConfigError as exc:
        return [f"--rejudge: judge {named}: {exc}"]
    here = own.cache_part(settings)
    if here == recorded:
        return []
    return [
        f"--rejudge: judge {named}: its prompts differ from those the bundle's judge read"
        f" ({_differences(recorded, here)}); set {setting} in --config to the bundle's"
    ]


SCORES_EQUAL = Comparison(scores_of, graded_agreement, verb="scored", bar="equal scores")


def no_record_problem(benchmark: str) -> str:
    return (
        f"--rejudge: the bundle records no digests of the prompts {benchmark}'s own judge read"
        f" (BUNDLE.json prompts.{OWN_JUDGE}; a bundle made before lme-bench recorded them), so"
        " this judge cannot be shown to be the bundle's: not judged again"
    )


def rejudge_graded(
    own: OwnJudge,
    members: Mapping[str, bytes],
    record: dict[str, Any],
    summary: RunSummary,
    names: list[str],
    dataset: Path,
    config: Path | None,
    min_agreement: float,
) -> tuple[list[str], list[str]]:
    """(problems, what holds) of scoring the bundle's answers files `names` again with the
    benchmark's own judge `own`."""
    with tempfile.TemporaryDirectory(prefix="lme-rejudge-") as scratch:
        folder = Path(scratch)
        theirs = bundled_rows(members, folder)
        judges = graded_judges(record, theirs)
        if not judges:
            return ["--rejudge: the bundle holds no scores of an LLM judge to judge again"], []
        recorded = recorded_part(record, summary.benchmark)
        if recorded is None:
            return [no_record_problem(summary.benchmark)], []
        settings = rejudge_settings(load_settings(config), judges)
        problems = same_own_judge_problems(own, recorded, settings, judges)
        problems = problems or own_request_problems(
            record, summary.benchmark, own_judge_request_shapes(own, settings), judges
        )
        if problems:
            return problems, []
        again = judge_again(members, names, dataset, settings, folder / "again")
    problems, held = compare_judges(judges, theirs, again.rows, SCORES_EQUAL, min_agreement)
    return again.failed_problem() + problems, held
