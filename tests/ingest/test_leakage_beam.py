"""No BEAM gold label reaches the embedded memory or its searches: BEAM chats are ingested,
searched, answered and judged with the rubric judge through the harness's own steps (judging,
which reads the gold, calls no memory system), and neither the stored memory nor any argument
handed to the memory system holds a reference answer, a rubric item, an ability, the ordering
tested, a question id or a chat id."""

from __future__ import annotations

import asyncio
import copy
import json
import sqlite3
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from lme_bench.backends.builtin_params import memory_path
from lme_bench.backends.configured import ConfiguredBackend
from lme_bench.builtin_benchmarks.beam.models import ABILITIES
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
from tests.benchmarks.beam.samples import QUESTIONS, write_chat, write_checkout, write_questions

GOLD = ("GOLDANSWER", "GOLDRUBRIC", "GOLDORDER")


def _marked_questions() -> dict[str, list[dict[str, Any]]]:
    """The sample's questions with gold no chat text holds, so any copy of one is a leak."""
    marked = copy.deepcopy(QUESTIONS)
    for ability, items in marked.items():
        for n, item in enumerate(items):
            for field in ("answer", "ideal_response", "expected_compliance"):
                if field in item:
                    item[field] = f"{GOLD[0]}{ability}{n}"
            item["rubric"] = [f"{GOLD[1]}{ability}{n}x{i}" for i in range(len(item["rubric"]))]
            if "ordering_tested" in item:
                item["ordering_tested"] = [f"{GOLD[2]}{n}x{i}" for i in range(2)]
    return marked


def test_no_beam_gold_reaches_the_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for number in (3, 4):
        write_chat(tmp_path, number=number)
        write_questions(tmp_path, number=number, data=_marked_questions())
    checkout = write_checkout(tmp_path)
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
            "dataset.path": str(tmp_path / "chats"),
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
    models = settings.models.model_copy(update={"judge": "fake:rubric-judge"})
    judge = settings.judge.model_copy(update={"beam_repo": checkout})
    judged = settings.model_copy(update={"models": models, "judge": judge})
    for ref, row in zip(refs, answered, strict=True):  # the gold reaches the judge only
        (score,) = asyncio.run(judge_question(ref, row, judge_panel(judged)))
        assert score.status == "ok" and score.score is not None
    assert len(handed) == before_judging  # judging never calls the memory system

    db = sqlite3.connect(memory_path(settings))
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    stored = memory_path(settings).read_bytes().decode("utf-8", errors="replace")
    calls = json.dumps(handed)
    assert "search" in calls
    for text in (stored, calls):
        assert not any(g in text for g in GOLD)
        assert not any(a in text for a in ABILITIES)
        assert "100K-3" not in text and "100K-4" not in text  # chat (build) ids
        assert not any(r.question_id in text for r in refs)
        assert "answer_" not in text and "has_answer" not in text
    assert "The basil sprouted today." in stored and "basil" in calls.lower()
