"""A bundle's answers judged again for `verify --rejudge` (lme_bench.score.rejudge for yes/no
verdicts, lme_bench.score.rejudge_graded for a benchmark's own graded scores): the settings of
the bundle's judges, the bundle's answers files, each judged by the `score` path
(lme_bench.score.scoring.score_file: the run's judge code, its retries, `[limits] judge`, the
provider's limits), and the score rows of both sides."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from lme_bench.benchmarks.answers import ScoreInputError, run_files
from lme_bench.config.settings import Settings
from lme_bench.judge.family_requests import judge_request_shapes
from lme_bench.publish.errors import PublishError
from lme_bench.publish.figures import hooks_source
from lme_bench.results.qa_tables import ScoreRow
from lme_bench.results.readback import read_scores
from lme_bench.results.run_summary import RunSummary
from lme_bench.score.formats import known_formats
from lme_bench.score.scoring import STAGES, score_file

LISTED_AT_MOST = 20  # question ids named in a line
SCORES = "scores.parquet"  # the bundle's score rows, beside those judged again


def percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


class Paired(Protocol):
    """One judge's values again beside the bundle's (an agreement of verdicts or of scores)."""

    @property
    def fraction(self) -> float | None: ...

    def figures(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Comparison:
    """How the judges' values are taken from score rows, paired and named in a line."""

    values: Callable[[list[ScoreRow], str], Mapping[str, Any]]  # rows, judge -> id: value
    pair: Callable[[str, Mapping[str, Any], Mapping[str, Any]], Paired]
    verb: str  # what a judge did to a question: "judged", "scored"
    bar: str  # what --min-agreement bounds: "agreement", "equal scores"


def compare_judges(
    judges: list[str],
    theirs: list[ScoreRow],
    ours: list[ScoreRow],
    how: Comparison,
    min_agreement: float,
) -> tuple[list[str], list[str]]:
    """(problems, what holds): one line per judge. A question one side only holds, or a
    fraction below `min_agreement`, is a problem naming the judge and its figures."""
    problems: list[str] = []
    held: list[str] = []
    for name in judges:
        bundle, again = how.values(theirs, name), how.values(ours, name)
        found = how.pair(name, bundle, again)
        unpaired = sorted(set(bundle) ^ set(again))
        if unpaired:
            problems.append(
                f"--rejudge: judge {name}: {len(unpaired)} question(s) {how.verb} by one side"
                f" only ({', '.join(unpaired[:LISTED_AT_MOST])}); {found.figures()}"
            )
        elif (found.fraction or 0.0) < min_agreement:
            problems.append(
                f"--rejudge: judge {name}: {how.bar} below --min-agreement"
                f" {percent(min_agreement)}: {found.figures()}"
            )
        else:
            held.append(f"judged again by {name}: {found.figures()}")
    return problems, held


def rejudge_settings(given: Settings, judges: list[str]) -> Settings:
    """`given` (the --config, the environment) judging with the bundle's judges, once each,
    without the no-LLM fallback or a judge profile (neither is compared), with the stages of
    `score` (what a judge's check looks at before anything is sent)."""
    judge = given.judge.model_copy(
        update={
            "second_model": judges[1] if len(judges) > 1 else None,
            "repeats": 1,
            "fallback": False,
            "profile": None,
        }
    )
    models = given.models.model_copy(update={"judge": judges[0]})
    run = given.run.model_copy(update={"stages": STAGES})
    return given.model_copy(update={"judge": judge, "models": models, "run": run})


def _shape_problems(
    recorded: Mapping[str, Any], shapes: Mapping[str, Any], judges: list[str], what: str
) -> list[str]:
    problems = []
    for name in judges:
        if recorded.get(name) is not None and recorded[name] != shapes.get(name):
            problems.append(
                f"--rejudge: judge {name}: the bundle's request shape{what} is"
                f" {json.dumps(recorded[name], sort_keys=True)}; this lme-bench sends"
                f" {json.dumps(shapes.get(name), sort_keys=True)}"
            )
    return problems


def _recorded_judges(record: dict[str, Any]) -> dict[str, Any]:
    return {name: found or {} for name, found in (record.get("judges") or {}).items()}


def request_problems(record: dict[str, Any], settings: Settings, judges: list[str]) -> list[str]:
    """Where a judge set up here sends another yes/no request shape than the bundle records."""
    recorded = {name: found.get("request") for name, found in _recorded_judges(record).items()}
    return _shape_problems(recorded, judge_request_shapes(settings), judges, "")


def own_request_problems(
    record: dict[str, Any], benchmark: str, shapes: Mapping[str, Any] | None, judges: list[str]
) -> list[str]:
    """Where a judge set up here as `benchmark`'s own judge (sending `shapes`; None: a judge
    that does not say) sends another request than the bundle records it sent as that judge
    (BUNDLE.json `judges.<name>.own_judge_requests.<benchmark>`; a bundle made before these
    were recorded has none to compare)."""
    if shapes is None:
        return []
    recorded = {
        name: (found.get("own_judge_requests") or {}).get(benchmark)
        for name, found in _recorded_judges(record).items()
    }
    return _shape_problems(recorded, shapes, judges, f" for its {benchmark} questions")


def answers_files_of(members: Mapping[str, bytes], summary: RunSummary) -> list[str]:
    """The bundle's answers files in a format of its benchmark that `score` reads (the first
    such format's files: one, or one per part of the run)."""
    for known in known_formats(hooks_source(summary, members)):
        if known.benchmark == summary.benchmark:
            found = run_files(known.format, members)
            if found:
                return found
    return []


def first_rows(rows: list[ScoreRow], judge: str) -> list[ScoreRow]:
    """`judge`'s rows of each question's first judging (repeat 0)."""
    return [r for r in rows if r.judge == judge and r.repeat == 0]


def bundled_rows(members: Mapping[str, bytes], folder: Path) -> list[ScoreRow]:
    """The rows of the bundle's scores.parquet; one error naming it."""
    path = folder / SCORES
    path.write_bytes(members[SCORES])
    try:
        return read_scores(path)
    except Exception as exc:  # named as the bundle holds it, not by the scratch folder
        raise PublishError(f"{SCORES}: cannot be read: {exc}") from None


@dataclass
class JudgedAgain:
    """The rows of every answers file judged again, and the questions whose judging failed."""

    rows: list[ScoreRow] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)

    def failed_problem(self) -> list[str]:
        if not self.failed:
            return []
        shown = ", ".join(sorted(self.failed)[:LISTED_AT_MOST])
        return [f"--rejudge: judging failed for {len(self.failed)} question(s): {shown}"]


def judge_again(
    members: Mapping[str, bytes],
    names: list[str],
    dataset: Path,
    settings: Settings,
    folder: Path,
) -> JudgedAgain:
    """Each answers file `names` of the bundle judged by the `score` path, into a folder of
    its own under `folder`; a file `score` cannot read is a PublishError naming it as the
    bundle holds it."""
    again = JudgedAgain()
    for number, name in enumerate(names):
        place = folder / f"answers-{number}"
        answers = place / Path(name).name
        place.mkdir(parents=True)
        answers.write_bytes(members[name])
        try:
            scored = score_file(answers, dataset, settings, folder / f"rejudged-{number}")
        except ScoreInputError as exc:
            raise PublishError(str(exc).replace(str(answers), name)) from None
        again.failed += scored.failed
        scores = scored.report.run_dir / SCORES
        again.rows += read_scores(scores) if scores.is_file() else []
    return again
