"""What a run will cost before it runs: model calls, tokens, money and wall time per stage.

Nothing is called. Calls follow from the pipeline's shape (agentic ingestion: one call per
message and one at each session's end, with our tools or the memory system's own;
context-only: one per session; answering: 1 to 3 per question by strategy; judging: one per
judge and repeat). Input sizes are the real prompts the stages would send, built with the same
text builders from each question's own turns, where what cannot be known before the run (the
agent's context document, the hypothesis) is a stated stand-in size. Tokens: the fake models'
count (whitespace words) for fake models, else one token per 4 characters (no tokenizer is
fetched at run time). Wall time: calls times latency over the calls in flight the limits allow,
never less than the longest question's calls in a row; the stages are summed, an upper bound,
as they overlap in a run.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable

from lme_bench.agent.prompts import (
    build_prompts,
    context_only_text,
    observe_text,
    session_end_text,
)
from lme_bench.agent.tool_prompts import tool_observe_text, tool_prompts, tool_session_end_text
from lme_bench.config.settings import Settings
from lme_bench.dataset.models import Instance
from lme_bench.dataset.views import session_key
from lme_bench.ingest.fingerprint import writes_with_own_tools
from lme_bench.judge.judge_input import benchmark_scoring, prompted_input, rendered
from lme_bench.judge.prompts import PromptSet, judge_prompts
from lme_bench.providers.factory import parse_model
from lme_bench.providers.registry import provider_for
from lme_bench.qa.reader import load_qa_prompts
from lme_bench.reference_memory.tool_results import default_prompts
from lme_bench.results.estimates import Estimate, StageEstimate

CONTEXT_CHARS = 2_000  # the agent's context document, while a run has not written one
HYPOTHESIS_CHARS = 300  # an answer
ENTRY_SUMMARY_CHARS = 300  # an entry the memory agent writes
# Output tokens of a call, stated: a tool call with an entry summary, a context document, an
# answer, a query plan, a verdict ("yes" / "no"), a BEAM rubric score (JSON with its reason).
OUTPUT_CHARS = {"observe": 240, "context": CONTEXT_CHARS, "answer": 320, "plan": 160, "judge": 3}
OUTPUT_CHARS["rubric"] = 200
Call = tuple[tuple[str, ...], str]  # (the prompt's text in parts, kind of output)


ASSUMPTIONS = (
    f"Assumed: a {CONTEXT_CHARS:,}-character context document, {HYPOTHESIS_CHARS}-character "
    "answers; tokens are whitespace words for fake models, else 4 characters a token; wall time "
    "is calls times latency over the calls the limits allow in flight, stages summed (an upper "
    "bound: they overlap)."
)


def _counter(model: str, settings: Settings) -> tuple[str, bool]:
    spec = parse_model("estimate", model, settings)
    return spec.label, provider_for(spec.kind).tokens_are_words


def tokens(text: str, fake: bool) -> int:
    return len(text.split()) if fake else math.ceil(len(text) / 4)


@functools.lru_cache(maxsize=256)  # the parts every call repeats: system prompt, stand-ins
def _words(part: str) -> int:
    return len(part.split())


def prompt_tokens(parts: tuple[str, ...], fake: bool) -> int:
    """`tokens` of the parts joined, each part's words counted once however often it recurs:
    a word that runs across two parts counts once."""
    if not fake:
        return math.ceil(sum(map(len, parts)) / 4)
    total, word_open = 0, False
    for part in parts:
        if part:
            total += _words(part) - (word_open and not part[0].isspace())
            word_open = not part[-1].isspace()
    return total


def _stand_in(chars: int) -> str:
    return ("remembered " * (chars // 11 + 1))[:chars]


@functools.cache
def _output_tokens(output: str, fake: bool) -> int:
    return tokens(_stand_in(OUTPUT_CHARS[output]), fake)


def _add(stage: StageEstimate, calls: Iterable[Call], fake: bool) -> None:
    count = 0
    for parts, output in calls:
        count += 1
        stage.input_tokens += prompt_tokens(parts, fake)
        stage.output_tokens += _output_tokens(output, fake)
    stage.calls += count
    stage.longest_question_calls = max(stage.longest_question_calls, count)


def _own_tools_calls(instance: Instance, settings: Settings, system: str) -> Iterable[Call]:
    """Agentic ingestion with the memory system's own tools: as many calls as with ours (no
    context document; the calls so far and their results are left out of the prompts)."""
    window_size = settings.ingest.window_messages
    for rank, position in enumerate(instance.session_order()):
        turns = [(t.role, t.content) for t in instance.haystack_sessions[position]]
        date, key = instance.haystack_dates[position], session_key(rank)
        for index, (role, content) in enumerate(turns):
            window = turns[max(0, index - window_size) : index] if window_size else []
            text = tool_observe_text(
                session_key=key,
                session_date=date,
                turn_number=index + 1,
                turns=len(turns),
                role=role,
                content=content,
                window=window,
                history=[],
                results=[],
            )
            yield (system, text), "observe"
        yield (system, tool_session_end_text(key, date, [], [])), "observe"


def _ingest_calls(instance: Instance, settings: Settings, system: str) -> Iterable[Call]:
    if writes_with_own_tools(settings):
        yield from _own_tools_calls(instance, settings, system)
        return
    context = _stand_in(CONTEXT_CHARS)
    ingest = settings.ingest
    for position in instance.session_order():
        turns = [(t.role, t.content) for t in instance.haystack_sessions[position]]
        date = instance.haystack_dates[position]
        if ingest.mode == "context-only":
            yield (system, context_only_text(date, context, turns)), "context"
            continue
        for index, (role, content) in enumerate(turns):
            window = turns[max(0, index - ingest.window_messages) : index]
            due = (index + 1) % ingest.context_every == 0 and index + 1 < len(turns)
            text = observe_text(
                session_date=date,
                turn_number=index + 1,
                turns=len(turns),
                role=role,
                content=content,
                context=context,
                window=window if ingest.window_messages else [],
                context_due=due,
            )
            yield (system, text), "context" if due else "observe"
        yield (system, session_end_text(date, context)), "context"


def _memory_chars(instance: Instance, settings: Settings) -> int:
    """What the reader is shown: top_ke entries (verbatim turns in raw ingestion, the agent's
    summaries otherwise) and, with an agent, context snapshots, within the reader's budget."""
    qa = settings.qa
    if settings.ingest.mode == "raw":
        turns = [t.content for s in instance.haystack_sessions for t in s if t.content.strip()]
        per_entry = sum(map(len, turns)) / len(turns) if turns else 0.0
        contexts = 0
    else:
        per_entry, contexts = ENTRY_SUMMARY_CHARS, CONTEXT_CHARS * min(qa.top_kc, 2)
    return min(qa.max_context_chars, int(qa.top_ke * (per_entry + 40)) + contexts)


def _answer_calls(instance: Instance, settings: Settings) -> Iterable[Call]:
    qa, prompts = settings.qa, load_qa_prompts(settings.qa.prompts_dir).texts
    memory = _stand_in(_memory_chars(instance, settings))
    if qa.strategy == "two-pass":
        half = memory[: qa.max_context_chars // 2]
        yield (prompts["refine"], instance.question, half), "plan"
    elif qa.strategy == "multi-query":
        yield (prompts["queries"], instance.question), "plan"
    if qa.rerank:
        yield (instance.question, memory), "plan"
    yield (prompts["reader"], instance.question, instance.question_date, memory), "answer"


def _judge_calls(
    instance: Instance, prompts: PromptSet, hypothesis: str, settings: Settings
) -> list[Call]:
    """One judge's calls for one question (a repeat each), as its benchmark judges it: its own
    scorer's calls, else one verdict with the judge input it builds (none: no verdict)."""
    benchmark = getattr(instance, "benchmark", "")  # a LongMemEval record names none
    scoring = benchmark_scoring(benchmark, settings)
    if scoring.own_judge is not None:
        return list(scoring.own_judge.estimated_calls(instance, hypothesis, settings))
    if scoring.score_answer is not None:  # a rule of its own: no model called
        return []
    given = prompted_input(benchmark, instance, prompts, settings)
    if given is None:
        return []
    prompt = rendered(prompts, given, instance)
    return [((prompt.render(instance.question, given.answer, hypothesis),), "judge")]


def _limit(settings: Settings, stage: str, provider: str) -> tuple[int, float | None]:
    """Calls in flight and requests per minute the limits allow."""
    in_flight = settings.limits.for_stage(stage)
    limit = settings.limits.providers.get(provider)
    if limit and limit.concurrency:
        in_flight = min(in_flight, limit.concurrency)
    return in_flight, limit.rpm if limit else None


def _finish(stage: StageEstimate, settings: Settings, latency_s: float, step: str) -> None:
    in_flight, rpm = _limit(settings, step, stage.model.split(":", 1)[0])
    wall = max(stage.calls * latency_s / in_flight, stage.longest_question_calls * latency_s)
    stage.wall_s = max(wall, stage.calls / rpm * 60) if rpm else wall
    price = settings.prices.get(stage.model)
    if price is not None:
        stage.cost = (
            stage.input_tokens * price.input_per_mtok + stage.output_tokens * price.output_per_mtok
        ) / 1e6


def calls_models(settings: Settings) -> bool:
    """Whether any stage of the run calls a model (else there is nothing to estimate)."""
    stages, models = settings.stages, settings.models
    agent = "ingest" in stages and settings.ingest.mode != "raw" and bool(models.agent)
    judge = "judge" in stages and bool(models.judge or settings.judge.second_model)
    return agent or ("answer" in stages and bool(models.qa)) or judge


def estimate_run(
    instances: Iterable[Instance],
    settings: Settings,
    latency_s: float = 2.0,
    builds: Iterable[str] | None = None,
) -> Estimate:
    """Per stage that calls a model: calls, tokens, cost from `[prices]`, wall time.
    `builds`: each instance's memory build (`QuestionRef.build`), in the same order; a build
    asked by several questions is ingested, so counted, once. Unset: one build per question."""
    plan: list[tuple[str, StageEstimate, bool]] = []
    system = ""
    if "ingest" in settings.stages and settings.ingest.mode != "raw" and settings.models.agent:
        label, fake = _counter(settings.models.agent, settings)
        plan.append(("ingest", StageEstimate("ingest", label), fake))
        if writes_with_own_tools(settings):
            system = tool_prompts().system
        else:
            system = build_prompts(default_prompts("chat"), settings.ingest.mode).system
    if "answer" in settings.stages and settings.models.qa:
        label, fake = _counter(settings.models.qa, settings)
        plan.append(("answer", StageEstimate("answer", label), fake))
    judges = [m for m in (settings.models.judge, settings.judge.second_model) if m]
    if "judge" in settings.stages:
        for model in judges:
            label, fake = _counter(model, settings)
            plan.append(("judge", StageEstimate("judge", label), fake))
    prompts = judge_prompts(settings.judge) if judges and "judge" in settings.stages else None
    hypothesis = _stand_in(HYPOTHESIS_CHARS)
    count = 0
    build_of = iter(builds) if builds is not None else None
    ingested: set[str] = set()
    for instance in instances:
        count += 1
        build = next(build_of) if build_of is not None else instance.question_id
        first_asker = build not in ingested
        ingested.add(build)
        for step, stage, fake in plan:
            if step == "ingest":
                if first_asker:
                    _add(stage, _ingest_calls(instance, settings, system), fake)
            elif step == "answer":
                _add(stage, _answer_calls(instance, settings), fake)
            elif prompts is not None:
                calls = _judge_calls(instance, prompts, hypothesis, settings)
                _add(stage, calls * settings.judge.repeats, fake)
    found = Estimate(count, latency_s, assumptions=ASSUMPTIONS, builds=len(ingested))
    for step, stage, _ in plan:
        _finish(stage, settings, latency_s, step)
        found.stages.append(stage)
    return found
