"""The optional scoring hooks of a benchmark: how the run judges its questions, the figures and
files it adds to a run's folder, what its judging adds to cache keys.

A benchmark class (lme_bench.benchmarks.protocol) may define any of these; the run reads them
through `scoring_of`, never by the benchmark's name. Each hook left out has a default:

- `judge_input(question) -> JudgeInput | None`: what the LLM judge is given for a question (a
  prompt of the run's prompt set and what stands for the correct answer). Default
  (`generic_judge_input`): the set's generic criterion ("does the response contain the correct
  answer") with the gold answer, or for a question whose answer is not in the history the
  abstention prompt with `NO_ANSWER_EXPLANATION`. None: no LLM verdict for the question.
- `own_judge`: a scorer of the benchmark's own that replaces the LLM verdict (BEAM's rubric
  judge, an exact-match or multiple-choice rule): an object meeting `OwnJudge`, or
  `"module:attribute"` naming one (imported when first needed, so a scorer may live in a
  package above this one). Its rows carry a `score`, no yes/no label, and stay out of the
  run's verdict accuracy (summary.json `qa`). Default: none, the LLM judge above.
- `score_answer(question, response) -> bool`: a rule of the benchmark's own that decides the
  verdict, calling no model (exact match, a multiple-choice letter): the judge stage writes one
  row for it (judge `rule:<name>`, kind `rule`) in place of the LLM judges and the fallback,
  and it counts in the run's accuracy as a judge's verdicts do. The cache key holds a digest
  of its source, so a changed rule scores again. Default: none.
- `judge_cache_part(question_type, prompt_sha256) -> Any`: what the judge stage's cache key
  holds for a question beyond the run's judge settings (LoCoMo: the prompt its category is
  judged with). An own judge's part is its `cache_part`. Default: nothing.
- `run_figures`: a function (or `"module:function"`) of `FiguresInput` that writes the
  benchmark's official files into the run folder and returns its figures (`RunFigures`):
  summary.json holds them under the benchmark's name, summary.md gets their section. Default:
  none (the run's accuracy and retrieval figures only).
- `longmemeval_averages: bool`: the retrieval averages are those LongMemEval's official
  printer prints (summary.json's note says so). Default: False.
- `official_check(files, summary, repo, dataset) -> (problems, held)`: `lme-bench verify
  --official-repo`: the benchmark's official scoring code, run unmodified from the checkout
  `repo` on a bundle's files (`files`: name -> bytes; `summary`: its RunSummary; `dataset`:
  the `--dataset` path or None), each of its figures beside summary.json's; the problems
  named, and what held in words. Default: none (verify says the benchmark has no such check).

A plug-in benchmark in one file defines them as methods and attributes of its class; any hook
may also be given as `"module:attribute"` (the built-ins' are: their scorers and figures live in
their own packages, lme_bench.builtin_benchmarks, above the judge and report layers).
"""

from __future__ import annotations

import functools
import hashlib
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from lme_bench.benchmarks.registry import (
    BUILT_IN,
    BenchmarkError,
    benchmark_class,
    load_benchmark,
    registered,
)
from lme_bench.plugins import import_module_or_file

DEFAULT_BENCHMARK = "longmemeval"
"""The benchmark of a question that names none (splits made before benchmarks had names)."""
GENERIC = "default"
"""The prompt set's generic criterion: does the response contain the correct answer."""
ABSTENTION = "abstention"
"""The prompt set's abstention prompt: a right response says the answer is not there."""
NO_ANSWER_EXPLANATION = (
    "The conversation does not say; a right response says the information is not available."
)


@dataclass(frozen=True, slots=True)
class JudgeInput:
    """What the LLM judge is given for one question."""

    prompt: str | None
    """`GENERIC`, `ABSTENTION`, or None: the prompt the set chooses by the question's type and
    id (LongMemEval's official choice)."""
    answer: str
    """What stands for the correct answer in the prompt."""
    abstains: bool | None = None
    """A right response says the answer is not there (the no-LLM fallback's rule); None: the
    fallback's own rule (`_abs` in the question id)."""


class JudgedQuestion(Protocol):
    """The scorer-side record of a question, as `judge_input` reads it."""

    @property
    def question_id(self) -> str: ...
    @property
    def question_type(self) -> str: ...
    @property
    def question(self) -> str: ...
    @property
    def answer(self) -> str: ...
    @property
    def is_abstention(self) -> bool: ...


def generic_judge_input(question: JudgedQuestion) -> JudgeInput:
    """The default: the generic criterion with the gold answer, or the abstention prompt."""
    if question.is_abstention:
        return JudgeInput(ABSTENTION, NO_ANSWER_EXPLANATION, abstains=True)
    return JudgeInput(GENERIC, question.answer, abstains=False)


class OwnJudge(Protocol):
    """A benchmark's own scorer, called by the judge stage instead of the LLM verdict. The run's
    objects it is handed (settings, question refs, answer rows) are the judge stage's own.

    It may also have `for_run(settings)`, returning the scorer to use for the whole run (with
    its models and prompts built): the judge stage calls it once per run, before the run's
    first question of the benchmark, rather than have each question build them; and
    `prompts_setting`, the setting naming where it reads its prompts from (`"[judge]
    beam_repo"`), for `verify --rejudge` to name when they differ from a bundle's; and
    `request_shapes(settings)`, each LLM judge's request as it sends it ("provider:model" -> a
    record of the form of lme_bench.judge.request_shapes.RequestShape.record: family,
    endpoint, body without the messages).

    A run records its `cache_part` in manifest.json (`prompts.own_judge.<benchmark>`), so
    `verify --rejudge` judges a bundle again only with a judge whose part is the same, and its
    `request_shapes` (`models.own_judge_requests.<benchmark>`), which `verify --rejudge`
    compares with what the judge set up there sends. The questions of a benchmark with an own
    judge are not sent the LLM judge's yes/no request: `models.judge_requests` records that
    request only for a run with questions of another benchmark."""

    async def score(self, ref: Any, hypothesis: Any, settings: Any) -> list[Any]:
        """The question's score rows (lme_bench.results.qa_tables.ScoreRow, `score` set)."""
        ...

    def check(self, settings: Any) -> None:
        """At plan time: raise a ConfigError naming the setting the scorer cannot work
        without."""
        ...

    def cache_part(self, settings: Any) -> Any:
        """What the judge's cache key holds for it (JSON-able)."""
        ...

    def estimated_calls(
        self, question: Any, hypothesis: str, settings: Any
    ) -> list[tuple[tuple[str, ...], str]]:
        """Its model calls for one question and repeat, for the estimate: (prompt text in
        parts, the kind of output: "judge", "rubric"); none for a rule calling no model."""
        ...


@dataclass(frozen=True, slots=True)
class FiguresInput:
    """What a benchmark's `run_figures` is given when the run folder is written."""

    run_dir: Path
    refs: Sequence[Any]
    """The run's questions of this benchmark (lme_bench.dataset.shards.QuestionRef)."""
    retrieval: Sequence[Any]
    """The retrieval rows (this run's, else those recorded)."""
    hypotheses: Sequence[Any] | None
    """This run's answer rows; None when the answer stage did not run (read them back)."""
    scores: Sequence[Any] | None
    """This run's score rows; None when the judge stage did not run (read them back)."""
    verdicts: Sequence[Any] | None
    """This run's rows counted in its verdict accuracy (no own judge's); None as `scores`."""
    qa: dict[str, Any] | None
    """summary.json's `qa` (the LLM judges' accuracy), where the judge ran."""
    settings: Any
    """The run's settings (lme_bench.config.settings.Settings)."""


@dataclass(frozen=True, slots=True)
class RunFigures:
    """A benchmark's figures for summary.json (under its name; None: no section) and its
    section of summary.md."""

    section: dict[str, Any] | None
    markdown: str = ""


@dataclass(frozen=True, slots=True)
class BenchmarkScoring:
    """A benchmark's hooks, looked up once, each with its default filled in."""

    name: str
    judge_input: Callable[[JudgedQuestion], JudgeInput | None]
    own_judge: OwnJudge | None
    score_answer: Callable[[JudgedQuestion, str], bool] | None
    judge_cache_part: Callable[[str, Callable[[str], str]], Any] | None
    run_figures: Callable[[FiguresInput], RunFigures | None] | None
    longmemeval_averages: bool
    official_check: Callable[..., tuple[list[str], str]] | None = None


def resolved_hook(value: Any) -> Any:
    """A hook given as `"module:attribute"`, imported; anything else as it is."""
    if not isinstance(value, str):
        return value
    module_name, _, attribute = value.rpartition(":")
    return getattr(import_module_or_file(module_name, prefix="lme_bench_hook_"), attribute)


def _benchmark(name: str, configured: str | None) -> Any:
    """The benchmark whose `name` a question carries: the configured one when its name is
    that, else a built-in or registered one; None for a name none of them has."""
    if configured and configured != name:
        try:
            cls = benchmark_class(configured)
        except BenchmarkError:
            cls = None
        if cls is not None and cls.name == name:
            return cls()
    if name in BUILT_IN or name in registered():
        return load_benchmark(name)
    return None


@functools.lru_cache(maxsize=32)
def scoring_of(name: str, configured: str | None = None) -> BenchmarkScoring:
    """The scoring hooks of the benchmark named `name` (`[dataset] benchmark` = `configured`
    finds a plug-in's class); the defaults for one not found."""
    benchmark = _benchmark(name, configured)
    hook = functools.partial(getattr, benchmark)
    return BenchmarkScoring(
        name=name,
        judge_input=resolved_hook(hook("judge_input", generic_judge_input)),
        own_judge=resolved_hook(hook("own_judge", None)),
        score_answer=resolved_hook(hook("score_answer", None)),
        judge_cache_part=resolved_hook(hook("judge_cache_part", None)),
        run_figures=resolved_hook(hook("run_figures", None)),
        longmemeval_averages=bool(hook("longmemeval_averages", False)),
        official_check=resolved_hook(hook("official_check", None)),
    )


def rule_digest(rule: Callable[..., Any]) -> str:
    """sha256 of a rule's source (its qualified name where the source cannot be read)."""
    try:
        text = inspect.getsource(rule)
    except (OSError, TypeError):
        text = getattr(rule, "__qualname__", repr(rule))
    return hashlib.sha256(text.encode()).hexdigest()
