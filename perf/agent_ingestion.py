"""LLM calls, tool calls and tokens of agent ingestion per session and per question, by mode,
on generated S-scale data with the fake note-taker model (no keys; tokens counted as words).

    python perf/agent_ingestion.py [--questions 5]

Also checks that prompt size grows linearly: a 2n-turn session against an n-turn one.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

import support  # noqa: F401  # this clone's lme_bench on the import path

from lme_bench.config.settings import load_settings
from lme_bench.dataset.generate import generate_dataset
from lme_bench.ingest.records import SessionRecord
from lme_bench.run.steps import bundled_sample, ingest_question, plan_run, prepare_questions


def run_mode(data: Path, mode: str, folder: Path) -> tuple[list[SessionRecord], float]:
    overrides = {
        "dataset.path": str(data),
        "run.results_dir": str(folder),
        "run.id": mode,
        "ingest.mode": mode,
    }
    if mode != "raw":
        overrides["models.agent"] = "fake:note-taker"
    settings = load_settings(None, **overrides)
    plan = plan_run(settings)
    _, refs = prepare_questions(plan)
    started = time.perf_counter()
    records = [
        r for ref in refs for r in asyncio.run(ingest_question(ref, settings, mode)).sessions
    ]
    return records, time.perf_counter() - started


def row(mode: str, records: list[SessionRecord], seconds: float) -> str:
    questions = len({r.question_id for r in records})
    turns = sum(r.turns for r in records)
    llm = sum(r.llm_calls for r in records)
    memory_calls = sum(sum(r.memory_calls.values()) for r in records)
    tokens_in = sum(r.input_tokens for r in records)
    tokens_out = sum(r.output_tokens for r in records)
    per_session_in = statistics.mean(r.input_tokens for r in records)
    return (
        f"| {mode} | {questions} | {len(records)} | {turns} | {llm / len(records):.2f} | "
        f"{llm / turns:.3f} | {llm / questions:.0f} | {memory_calls / len(records):.2f} | "
        f"{memory_calls / turns * 500:.0f} | {per_session_in:,.0f} | "
        f"{tokens_in / questions:,.0f} | {tokens_out / questions:,.0f} | {seconds:.1f} s |"
    )


def growth(folder: Path) -> list[str]:
    """Input tokens of one session of n and of 2n turns, per mode."""
    from lme_bench.dataset.models import Instance

    lines = []
    for mode in ("agentic", "context-only"):
        tokens = []
        for turns in (50, 100):
            question = json.loads(bundled_sample().read_text())[0]  # a sample question
            session = question["haystack_sessions"][0]
            while len(session) < turns:
                role = "user" if len(session) % 2 == 0 else "assistant"
                session.append(
                    {
                        "role": role,
                        "content": f"message {len(session)} about trail shoes and weekend plans",
                    }
                )
            path = folder / f"g{mode}{turns}.json"
            path.write_text(json.dumps([Instance.model_validate(question).model_dump()]))
            records, _ = run_mode(path, mode, folder / f"r{mode}{turns}")
            tokens.append(next(r.input_tokens for r in records if r.turns == turns))
        lines.append(f"| {mode} | {tokens[0]:,} | {tokens[1]:,} | {tokens[1] / tokens[0]:.2f} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="lme-agent-") as tmp:
        folder = Path(tmp)
        data = folder / "s.json"
        generate_dataset(data, n_questions=args.questions, scale="s", seed=0)
        print(
            "| mode | questions | sessions | turns | LLM calls/session | LLM calls/turn | "
            "LLM calls/question | memory calls/session | memory calls per 500 messages | "
            "input tokens/session | input tokens/question | output tokens/question | time |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for mode in ("raw", "context-only", "agentic"):
            records, seconds = run_mode(data, mode, folder / mode)
            print(row(mode, records, seconds))
        print("\n| mode | input tokens, 50-turn session | 100-turn session | ratio |")
        print("|---|---:|---:|---:|")
        for line in growth(folder):
            print(line)


if __name__ == "__main__":
    main()
