"""The run's judges, built once per run and handed to the judge stage (lme_bench.judge.stage):
the LLM judges ([models] judge, [judge] second_model) with their model specs, and each
benchmark's own scorer made ready for the run (BEAM's rubric judges), so no question builds a
judge, a model client or a prompt set of its own.

A panel pickles as the settings it was built from, and is built again where it is unpickled:
its model clients and limiters belong to the process that made them.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from lme_bench.benchmarks.scoring_hooks import BenchmarkScoring, OwnJudge
from lme_bench.common.limits import provider_limiter
from lme_bench.config.settings import Settings
from lme_bench.judge.family_requests import judge_request
from lme_bench.judge.judge_input import benchmark_scoring
from lme_bench.judge.prompts import PromptSet, judge_prompts
from lme_bench.judge.runner import LlmJudge
from lme_bench.providers.factory import ModelSpec, parse_model, retry_policy


def judge_model_specs(settings: Settings) -> list[ModelSpec]:
    """The LLM judges' specs: [models] judge, then [judge] second_model, those set."""
    texts = (settings.models.judge, settings.judge.second_model)
    return [parse_model("judge", text, settings) for text in texts if text]


def llm_judge(spec: ModelSpec, prompts: PromptSet, settings: Settings) -> LlmJudge:
    """The judge of `spec`: its call sends the official request body where the model takes it,
    else the nearest body its family accepts (lme_bench.judge.request_shapes)."""
    policy = retry_policy(spec, settings.models)
    limiter = provider_limiter(settings, spec.provider)
    return LlmJudge(spec.label, judge_request(spec, settings), prompts, policy, limiter)


@dataclass(frozen=True)
class JudgePanel:
    """Everything the judge stage needs of the run, built once (`judge_panel`)."""

    settings: Settings
    specs: tuple[ModelSpec, ...]
    llm: tuple[LlmJudge, ...]  # in the order of `specs`
    prompts: PromptSet
    _own: dict[str, OwnJudge] = field(default_factory=dict, repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def repeats(self) -> int:
        return self.settings.judge.repeats

    @property
    def fallback(self) -> bool:
        return self.settings.judge.fallback

    def scoring(self, benchmark: str) -> BenchmarkScoring:
        """The scoring hooks of the benchmark a question comes from."""
        return benchmark_scoring(benchmark, self.settings)

    def own_judge(self, benchmark: str, hook: OwnJudge) -> OwnJudge:
        """The benchmark's own scorer made ready for this run, once: what its optional
        `for_run(settings)` returns (its judges built), else the hook itself."""
        with self._lock:
            found = self._own.get(benchmark)
            if found is None:
                prepare = getattr(hook, "for_run", None)
                found = prepare(self.settings) if prepare is not None else hook
                self._own[benchmark] = found
            return found

    def __reduce__(self) -> tuple[Any, ...]:
        return (judge_panel, (self.settings,))


def judge_panel(settings: Settings) -> JudgePanel:
    """The run's judges; a run without an LLM judge has none (the fallback and the
    benchmarks' own rules still score)."""
    prompts = judge_prompts(settings.judge)
    specs = tuple(judge_model_specs(settings))
    judges = tuple(llm_judge(spec, prompts, settings) for spec in specs)
    return JudgePanel(settings, specs, judges, prompts)
