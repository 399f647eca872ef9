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
judge of its own (BEAM's rubric scores, no yes/no verdict) is not judged again.

Per LLM judge the verdicts are paired by question id, the bundle's as the reference: agreement
(count, fraction), Cohen's κ, both accuracies over the paired questions and the ids whose
verdict differs. Agreement below `min_agreement` is a problem naming the judge and the figures.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lme_bench.benchmarks.answers import ScoreInputError
from lme_bench.config.settings import Settings, load_settings
from lme_bench.judge.family_requests import judge_request_shapes
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
from lme_bench.publish.errors import PublishError
from lme_bench.publish.figures import bundle_scoring, hooks_source
from lme_bench.publish.verify import Check
from lme_bench.results.readback import read_scores
from lme_bench.results.run_summary import RunSummary
from lme_bench.score.formats import known_formats
from lme_bench.score.scoring import score_file

LISTED_AT_MOST = 20  # differing question ids named in a line
SCORES = "scores.parquet"  # the verdicts, bundled and judged again


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
            f"{self.agreed} of {self.table.n} verdicts agree ({_percent(self.fraction)}),"
            f" Cohen's kappa {kappa}, accuracy {_percent(self.rejudged_accuracy)} rejudged vs"
            f" {_percent(self.bundle_accuracy)} in the bundle"
            + (f"; differing: {shown}{more}" if self.differing else "")
        )

    @property
    def _cut(self) -> bool:
        return len(self.differing) > LISTED_AT_MOST


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


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


def rejudge_settings(given: Settings, judges: list[str]) -> Settings:
    """`given` (the --config, the environment) judging with the bundle's judges, once each,
    without the no-LLM fallback or a judge profile (neither is compared)."""
    judge = given.judge.model_copy(
        update={
            "second_model": judges[1] if len(judges) > 1 else None,
            "repeats": 1,
            "fallback": False,
            "profile": None,
        }
    )
    models = given.models.model_copy(update={"judge": judges[0]})
    return given.model_copy(update={"judge": judge, "models": models})


def same_judge_problems(record: dict[str, Any], settings: Settings) -> list[str]:
    """Where the judges set up here are not the bundle's: prompts or request shape."""
    problems = []
    shapes = judge_request_shapes(settings)
    prompts = judge_prompts(settings.judge)
    here = {*prompts.hashes.values(), prompts.generic.sha256}
    for name in llm_judges(record):
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
        if recorded.get("request") is not None and recorded["request"] != shapes.get(name):
            problems.append(
                f"--rejudge: judge {name}: the bundle's request shape is"
                f" {json.dumps(recorded['request'], sort_keys=True)}; this lme-bench sends"
                f" {json.dumps(shapes.get(name), sort_keys=True)}"
            )
    return problems


def _labels(scores: Path, judge: str) -> dict[str, bool]:
    """Each question's verdict by `judge` (its first repeat) in a scores table; none where
    every call failed (no table, or no verdict)."""
    if not scores.is_file():
        return {}
    return {
        r.question_id: r.label
        for r in read_scores(scores)
        if r.judge == judge and r.repeat == 0 and r.label is not None
    }


def _compare(
    name: str, theirs: dict[str, bool], ours: dict[str, bool], min_agreement: float
) -> tuple[str, bool]:
    """One judge's line, and whether it holds."""
    found = agreement(name, theirs, ours)
    unpaired = sorted(set(theirs) ^ set(ours))
    if unpaired:
        return (
            f"--rejudge: judge {name}: {len(unpaired)} question(s) judged by one side only"
            f" ({', '.join(unpaired[:LISTED_AT_MOST])}); {found.figures()}",
            False,
        )
    if (found.fraction or 0.0) < min_agreement:
        return (
            f"--rejudge: judge {name}: agreement below --min-agreement"
            f" {_percent(min_agreement)}: {found.figures()}",
            False,
        )
    return f"judged again by {name}: {found.figures()}", True


def _bundled_labels(members: Mapping[str, bytes], judge: str, folder: Path) -> dict[str, bool]:
    """The verdicts of `judge` in the bundle's scores.parquet; one error naming it."""
    path = folder / SCORES
    path.write_bytes(members[SCORES])
    try:
        return _labels(path, judge)
    except Exception as exc:  # named as the bundle holds it, not by the scratch folder
        raise PublishError(f"{SCORES}: cannot be read: {exc}") from None


def answers_file_of(members: Mapping[str, bytes], summary: RunSummary) -> str | None:
    """The bundle's answers file in a format of its benchmark that `score` reads."""
    for known in known_formats(hooks_source(summary, members)):
        run_file = known.format.run_file
        if known.benchmark == summary.benchmark and run_file is not None and run_file in members:
            return run_file
    return None


def rejudge(
    members: Mapping[str, bytes],
    record: dict[str, Any],
    summary: RunSummary,
    dataset: Path,
    config: Path | None,
    min_agreement: float = DEFAULT_MIN_AGREEMENT,
) -> tuple[list[str], list[str]]:
    """(problems, what holds) of judging the bundle's answers again."""
    if bundle_scoring(summary, members).own_judge is not None:
        return [
            f"--rejudge: {summary.benchmark}'s answers are scored by a judge of its own, not by"
            " yes/no verdicts; judging again compares verdicts"
        ], []
    judges = llm_judges(record)
    if not judges:
        return ["--rejudge: the bundle records no LLM judge: there are no verdicts to judge"], []
    answers_name = answers_file_of(members, summary)
    if answers_name is None:
        return [
            f"--rejudge: the bundle holds no answers file of {summary.benchmark} that"
            " `lme-bench score` reads"
        ], []
    if SCORES not in members:
        return [f"{SCORES}: not in the bundle; --rejudge needs it"], []
    settings = rejudge_settings(load_settings(config), judges)
    problems = same_judge_problems(record, settings)
    if problems:
        return problems, []
    with tempfile.TemporaryDirectory(prefix="lme-rejudge-") as scratch:
        folder = Path(scratch)
        answers = folder / "answers" / answers_name
        answers.parent.mkdir()
        answers.write_bytes(members[answers_name])
        try:
            scored = score_file(answers, dataset, settings, folder / "rejudged")
        except ScoreInputError as exc:  # the bundle's file named as it holds it
            raise PublishError(str(exc).replace(str(answers), answers_name)) from None
        held: list[str] = []
        if scored.failed:
            shown = ", ".join(scored.failed[:LISTED_AT_MOST])
            problems.append(
                f"--rejudge: judging failed for {len(scored.failed)} question(s): {shown}"
            )
        for judge in judges:
            theirs = _bundled_labels(members, judge, answers.parent)
            ours = _labels(scored.report.run_dir / SCORES, judge)
            line, holds = _compare(judge, theirs, ours, min_agreement)
            (held if holds else problems).append(line)
    return problems, held


def rejudge_check(dataset: Path, config: Path | None, min_agreement: float) -> Check:
    """The check `verify` runs after its own when --rejudge is given."""

    def check(
        members: Mapping[str, bytes], record: dict[str, Any], summary: RunSummary
    ) -> tuple[list[str], list[str]]:
        return rejudge(members, record, summary, dataset, config, min_agreement)

    return check
