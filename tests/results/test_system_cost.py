"""A memory system's own model calls are summed over the run, shown, and priced."""

from __future__ import annotations

from lme_bench.backends.protocol import Usage
from lme_bench.config.settings import PriceSettings, Settings
from lme_bench.ingest.question import IngestOutcome
from lme_bench.report.cost import system_markdown
from lme_bench.results.cost import run_cost, system_usage


def test_the_memory_systems_calls_are_summed_shown_and_priced() -> None:
    settings = Settings(models={"memory": "openai:gpt-4o-mini"})
    outcomes = [
        IngestOutcome("q1", "m1", 0, 1.0, system_usage=Usage(3, 1000, 200, 5, 40)),
        IngestOutcome("q2", "m2", 0, 1.0, system_usage=Usage(2, 500, 100, 1, 8, 1, 2)),
    ]
    usage = system_usage(outcomes, settings)
    assert usage == {
        "backend": "embedded",
        "model": "openai:gpt-4o-mini",
        "model_calls": 5,
        "input_tokens": 1500,
        "output_tokens": 300,
        "embedding_calls": 6,
        "embedded_texts": 48,
        "capped_replies": 1,
        "timeouts": 2,
    }
    shown = system_markdown(usage)
    assert "5 model calls with openai:gpt-4o-mini (1,500 input, 300 output tokens)" in shown
    assert "1 replies cut by the output cap, 2 timed-out attempts" in shown
    prices = {"openai:gpt-4o-mini": PriceSettings(input_per_mtok=1.0, output_per_mtok=10.0)}
    cost = run_cost(
        agent_model=None,
        memory_system=usage,
        records=[],
        hypotheses=[],
        scores=[],
        questions=2,
        correct=None,
        prices=prices,
    )
    assert cost is not None and cost["memory_model"] == 1500 / 1e6 + 300 / 1e6 * 10
    assert cost["total"] == cost["memory_model"] and cost["memory_system"].startswith("counted")
    assert system_usage(outcomes[:0], settings) is None
