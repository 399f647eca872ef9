"""No LoCoMo gold label reaches the embedded memory or its searches: a LoCoMo file is ingested,
searched, answered and judged through the harness's own steps (judging, which reads the gold,
calls no memory system), and neither the stored memory nor any argument handed to the memory
system holds an answer, an adversarial answer, an evidence dialog id, a category, a question id
or an evidence mark."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from lme_bench.backends.builtin_params import memory_path
from lme_bench.backends.configured import ConfiguredBackend
from lme_bench.config.settings import load_settings
from lme_bench.judge.panel import judge_panel
from lme_bench.run.steps import (
    answer_question,
    evaluate_question,
    ingest_question,
    judge_question,
    plan_run,
    prepare_questions,
    qa_panel,
)
from tests.benchmarks.locomo.samples import listed_sample, write_json

GOLD = ("GOLDANSWER", "GOLDADVERSARIAL")
CATEGORIES = ("multi-hop", "temporal", "open-domain", "single-hop", "adversarial")


def _marked_sample(sample_id: str) -> dict[str, Any]:
    """The sample with answers no conversation text holds, so any copy of one is a leak."""
    sample = listed_sample(sample_id)
    for n, item in enumerate(sample["qa"]):
        if "answer" in item:
            item["answer"] = f"{GOLD[0]}{n}"
        if "adversarial_answer" in item:
            item["adversarial_answer"] = f"{GOLD[1]}{n}"
    return sample


def test_no_locomo_gold_reaches_the_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = write_json(
        tmp_path / "locomo.json", [_marked_sample("conv-7"), _marked_sample("conv-8")]
    )
    handed: list[Any] = []

    class Recorder:
        def __init__(self, system: Any) -> None:
            self.system = system

        def __getattr__(self, name: str) -> Any:
            found = getattr(self.system, name)
            if name == "entries":  # the embedded store's entries and searches
                return Recorder(found)
            if not callable(found) or name.startswith("_"):
                return found

            def recorded(*args: Any, **kwargs: Any) -> Any:
                shown = [asdict(a) if hasattr(a, "__dataclass_fields__") else a for a in args]
                handed.append({"call": name, "args": repr(shown), "kwargs": repr(kwargs)})
                return found(*args, **kwargs)

            return recorded

    opened = ConfiguredBackend.open  # how every stage opens the run's memory system

    def recording(memory: ConfiguredBackend) -> Any:
        return Recorder(opened(memory))

    monkeypatch.setattr(ConfiguredBackend, "open", recording)
    settings = load_settings(
        None,
        **{
            "run.results_dir": str(tmp_path / "results"),
            "run.id": "leak",
            "dataset.path": str(data),
            "models.qa": "fake:quote-memory",
            "models.judge": "none",
            "run.stages": ["ingest", "retrieval", "answer"],
        },
    )
    plan = plan_run(settings)
    _, refs = prepare_questions(plan)
    assert len(refs) == 10 and len({r.build for r in refs}) == 2
    answered = []
    for ref in refs:
        outcome = asyncio.run(ingest_question(ref, settings, plan.run_id))
        asyncio.run(evaluate_question(ref, outcome, settings))
        row = asyncio.run(answer_question(ref, outcome.memory_id, qa_panel(settings)))
        assert row.status == "ok"
        assert not any(g in (row.hypothesis or "") for g in GOLD)  # the reader saw none
        answered.append(row)
    before_judging = len(handed)
    judged = settings.model_copy(
        update={"models": settings.models.model_copy(update={"judge": "fake:match-judge"})}
    )
    for ref, row in zip(refs, answered, strict=True):  # the gold reaches the judge only
        assert asyncio.run(judge_question(ref, row, judge_panel(judged)))
    assert len(handed) == before_judging  # judging never calls the memory system

    db = sqlite3.connect(memory_path(settings))
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    stored = memory_path(settings).read_bytes().decode("utf-8", errors="replace")
    calls = json.dumps(handed)
    assert "search" in calls
    for text in (stored, calls):
        assert not any(g in text for g in GOLD)
        assert "D1:" not in text and "D2:" not in text  # evidence dialog ids
        assert "answer_" not in text and "has_answer" not in text
        assert not any(c in text for c in CATEGORIES)
        assert not any(r.question_id in text for r in refs)
    for text in (stored, calls):  # both speakers' turns, by name
        assert "Ada: I adopted a greyhound called Pip." in text
        assert "Ben: I started violin and clarinet." in text
