"""LLM calls, tokens and latency per question for each QA strategy, with the fake model at a
simulated latency, over raw-ingested memories of the bundled sample.

    python perf/qa_strategies.py [--latency 0.2]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time

import support  # noqa: F401  # this clone's lme_bench on the import path
from langchain_core.messages import AIMessage, BaseMessage

from lme_bench.backends.entry_system import open_entry_store
from lme_bench.config.settings import QaSettings, load_settings
from lme_bench.dataset.views import make_view
from lme_bench.providers.calls import CallAccount, CountedModel
from lme_bench.providers.fake import ScriptedChatModel
from lme_bench.providers.fake_policies import quote_memory
from lme_bench.qa.reader import load_qa_prompts
from lme_bench.qa.strategies import Answerer
from lme_bench.run.steps import ingest_question, plan_run, prepare_questions


def stand_in(messages: list[BaseMessage]) -> AIMessage:
    text = str(messages[-1].content)
    if "reply exactly SUFFICIENT" in text:
        return AIMessage(content="REFINE: dates of the events mentioned")
    if "You write search queries" in text:
        return AIMessage(content="plans and dates\nplaces visited\nthings bought")
    if "Numbered memory entries" in text:
        return AIMessage(content="0, 2, 1")
    return quote_memory(messages)


async def run(strategy: str, rerank: bool, latency: float, settings: object, items: list) -> str:
    qa = QaSettings(strategy=strategy, rerank=rerank)  # type: ignore[arg-type]
    backend = open_entry_store(settings)  # type: ignore[arg-type]
    calls, tokens_in, tokens_out, seconds = [], [], [], []
    for view, memory_id in items:
        account = CallAccount()
        model = CountedModel(
            ScriptedChatModel(script=[stand_in], latency_s=latency), account=account
        )
        started = time.perf_counter()
        await Answerer(backend, model, load_qa_prompts(), qa).answer(view, memory_id)
        seconds.append(time.perf_counter() - started)
        calls.append(account.calls)
        tokens_in.append(account.input_tokens)
        tokens_out.append(account.output_tokens)
    await backend.close()
    name = strategy + (" + rerank" if rerank else "")
    return (
        f"| {name} | {statistics.mean(calls):.2f} | {statistics.mean(tokens_in):,.0f} | "
        f"{statistics.mean(tokens_out):,.0f} | {statistics.median(seconds):.3f} s | "
        f"{max(seconds):.3f} s |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per model call")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="lme-qa-") as tmp:
        settings = load_settings(None, **{"run.results_dir": tmp, "run.id": "qa"})
        plan = plan_run(settings)
        _, refs = prepare_questions(plan)
        items = []
        for ref in refs:
            outcome = asyncio.run(ingest_question(ref, settings, plan.run_id))
            items.append((make_view(ref.load())[0], outcome.memory_id))
        print(f"{len(items)} questions, {args.latency:.2f} s per model call\n")
        print(
            "| strategy | LLM calls/question | input tokens/question | output tokens/question "
            "| latency p50 | latency max |\n|---|---:|---:|---:|---:|---:|"
        )
        for strategy, rerank in (
            ("single", False),
            ("two-pass", False),
            ("multi-query", False),
            ("multi-query", True),
        ):
            print(asyncio.run(run(strategy, rerank, args.latency, settings, items)))


if __name__ == "__main__":
    main()
