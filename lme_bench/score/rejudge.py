"""`lme-bench verify BUNDLE --rejudge`: the bundle's answers judged again by the bundle's own
judge, verdict by verdict against its scores.parquet (the verdicts its eval-results files
hold).

The judge is the one the bundle records: its model ([models] judge, [judge] second_model as the
run had them), its prompts (version and template digests) and its request shape (family,
endpoint, body without the prompt). Provider endpoints and keys come from `--config` and the
environment, as for `lme-bench score`; a judge set up here other than the bundle's is named and
nothing is sent. The answers (the file a run of the benchmark writes in a format `score`
reads, its `run_file`: LongMemEval's `hypotheses.jsonl`, LoCoMo's `locomo_predictions.json`)
are judged by the `score` path (lme_bench.score.scoring.score_file: the run's judge code, its
retries, `[limits] judge`, the provider's limits, `[judge] batch`), once each: each question's
first verdict (repeat 0) is compared, as an eval-results file holds it. A benchmark scored by a
judge of its own (BEAM's rubric scores, no yes/no verdict) is judged again and compared score
by score instead (lme_bench.score.rejudge_graded).

Per LLM judge the verdicts are paired by question id, the bundle's as the reference: agreement
(count, fraction), Cohen's κ, both accuracies over the paired questions and the ids whose
verdict differs. Agreement below `min_agreement` is a problem naming the judge and the figures.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lme_bench.config.settings import Settings, load_settings
from lme_bench.judge.prompts import judge_prompts
from lme_bench.metrics.judge_agreement import (
    Table,
    agreement_of,
    candidate_accuracy_of,
    kappa_of,
    point,
    reference_accuracy_of,
)
from lme_bench.publish.commands import DEFAULT_MIN_AGREEMENT
from lme_bench.publish.figures import bundle_scoring
from lme_bench.publish.verify import Check
from lme_bench.results.qa_tables import ScoreRow
from lme_bench.results.run_summary import RunSummary
from lme_bench.score.rejudge_graded import rejudge_graded
from lme_bench.score.rejudged import (
    LISTED_AT_MOST,
    SCORES,
    Comparison,
    answers_files_of,
    bundled_rows,
    compare_judges,
    first_rows,
    judge_again,
    percent,
    rejudge_settings,
    request_problems,
)


@dataclass(frozen=True, slots=True)
class Agreement:
    """One judge's verdicts again beside the bundle's, on the questions both judged."""

    judge: str
    table: Table  # the bundle's verdict as the reference, the rejudge's as the candidate
    differing: list[str]  # question ids, sorted

    @property
    def agreed(self) -> int:
        return self.table.both_yes + self.table.both_no

    @property
    def fraction(self) -> float | None:
        return point(agreement_of, self.table)

    @property
    def kappa(self) -> float | None:
        return point(kappa_of, self.table)

    @property
    def bundle_accuracy(self) -> float | None:
        return point(reference_accuracy_of, self.table)

    @property
    def rejudged_accuracy(self) -> float | None:
        return point(candidate_accuracy_of, self.table)

    def figures(self) -> str:
        if not self.table.n:
            return "no question judged by both"
        kappa = "undefined (one label only)" if self.kappa is None else f"{self.kappa:.3f}"
        shown = ", ".join(self.differing[:LISTED_AT_MOST])
        more = f" and {len(self.differing) - LISTED_AT_MOST} more" if self._cut else ""
        return (
            f"{self.agreed} of {self.table.n} verdicts agree ({percent(self.fraction)}),"
            f" Cohen's kappa {kappa}, accuracy {percent(self.rejudged_accuracy)} rejudged vs"
            f" {percent(self.bundle_accuracy)} in the bundle"
            + (f"; differing: {shown}{more}" if self.differing else "")
        )

    @property
    def _cut(self) -> bool:
        return len(self.differing) > LISTED_AT_MOST


def agreement(judge: str, bundle: Mapping[str, bool], again: Mapping[str, bool]) -> Agreement:
    """The pairs of the questions both hold (the caller names those only one holds)."""
    shared = sorted(set(bundle) & set(again))
    table = Table.of((bundle[q], again[q]) for q in shared)
    return Agreement(judge, table, [q for q in shared if bundle[q] != again[q]])


def llm_judges(record: dict[str, Any]) -> list[str]:
    """The bundle's LLM judges, [models] judge first, as BUNDLE.json records them."""
    models = record.get("models") or {}
    judges = record.get("judges") or {}
    named = [models.get("judge"), models.get("second_judge")]
    return [j for j in named if isinstance(j, str) and (judges.get(j) or {}).get("kind") == "llm"]


def same_judge_problems(record: dict[str, Any], settings: Settings) -> list[str]:
    """Where the judges set up here are not the bundle's: prompts or request shape."""
    problems = []
    prompts = judge_prompts(settings.judge)
    here = {*prompts.hashes.values(), prompts.generic.sha256}
    judges = llm_judges(record)
    for name in judges:
        recorded = record["judges"][name]
        if recorded.get("prompt_version") != prompts.version:
            problems.append(
                f"--rejudge: judge {name}: the bundle's prompts are version"
                f" {recorded.get('prompt_version')!r}, these {prompts.version!r} (set [judge]"
                " prompts_dir or official_repo in --config to the bundle's)"
            )
        elif not set(recorded.get("prompt_sha256") or []) <= here:
            problems.append(
                f"--rejudge: judge {name}: a prompt of the bundle (sha256"
                f" {', '.join(sorted(set(recorded['prompt_sha256']) - here))}) is not among"
                f" these prompts of version {prompts.version!r}"
            )
    return problems + request_problems(record, settings, judges)


def _labels(rows: list[ScoreRow], judge: str) -> dict[str, bool]:
    """Each question's verdict by `judge` (its first repeat); none where every call failed."""
    return {r.question_id: r.label for r in first_rows(rows, judge) if r.label is not None}


VERDICTS = Comparison(_labels, agreement, verb="judged", bar="agreement")


def _missing(members: Mapping[str, bytes], summary: RunSummary, names: list[str]) -> list[str]:
    """What the bundle lacks to be judged again: its answers files, its score rows."""
    if not names:
        return [
            f"--rejudge: the bundle holds no answers file of {summary.benchmark} that"
            " `lme-bench score` reads"
        ]
    if SCORES not in members:
        return [f"{SCORES}: not in the bundle; --rejudge needs it"]
    return []


def rejudge(
    members: Mapping[str, bytes],
    record: dict[str, Any],
    summary: RunSummary,
    dataset: Path,
    config: Path | None,
    min_agreement: float = DEFAULT_MIN_AGREEMENT,
) -> tuple[list[str], list[str]]:
    """(problems, what holds) of judging the bundle's answers again."""
    names = answers_files_of(members, summary)
    own_judge = bundle_scoring(summary, members).own_judge
    if own_judge is not None:
        missing = _missing(members, summary, names)
        if missing:
            return missing, []
        return rejudge_graded(
            own_judge, members, record, summary, names, dataset, config, min_agreement
        )
    judges = llm_judges(record)
    if not judges:
        return ["--rejudge: the bundle records no LLM judge: there are no verdicts to judge"], []
    problems = _missing(members, summary, names)
    if problems:
        return problems, []
    settings = rejudge_settings(load_settings(config), judges)
    problems = same_judge_problems(record, settings)
    if problems:
        return problems, []
    with tempfile.TemporaryDirectory(prefix="lme-rejudge-") as scratch:
        folder = Path(scratch)
        again = judge_again(members, names, dataset, settings, folder)
        theirs = bundled_rows(members, folder)
    problems, held = compare_judges(judges, theirs, again.rows, VERDICTS, min_agreement)
    return again.failed_problem() + problems, held


def rejudge_check(dataset: Path, config: Path | None, min_agreement: float) -> Check:
    """The check `verify` runs after its own when --rejudge is given."""

    def check(
        members: Mapping[str, bytes], record: dict[str, Any], summary: RunSummary
    ) -> tuple[list[str], list[str]]:
        return rejudge(members, record, summary, dataset, config, min_agreement)

    return check
