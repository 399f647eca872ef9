"""No gold label reaches any memory system: for each built-in backend that takes sessions as
they are, two sample questions are ingested and answered through the harness's own steps, and
everything handed over is recorded on the way in: every protocol call's arguments (titles,
session keys, dates, turns, queries) and every prompt the system's own model received."""

from __future__ import annotations

import asyncio
import importlib.util
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

import lme_bench.backends.registry as registry
import lme_bench.ingest.question as ingest_question_module
import lme_bench.qa.stage as qa_stage
from lme_bench.backends.protocol import MemorySystem
from lme_bench.config.settings import load_settings
from lme_bench.dataset.loader import iter_questions
from lme_bench.providers.accounted_chat import AccountedChatModel
from lme_bench.providers.fake import ScriptedChatModel
from lme_bench.providers.fake_policies import fake_policy
from lme_bench.run.steps import (
    answer_question,
    bundled_sample,
    ingest_question,
    plan_run,
    prepare_questions,
)

BACKENDS = {  # backend -> (its params, the fake policy of its own model, the module it needs)
    "mem0": ({"infer": True}, "mem0-extractor", "mem0"),
    "langgraph": ({"store": "sqlite", "extract": "langmem"}, "langmem-extractor", "langmem"),
    "graphiti": ({}, "graphiti-extractor", "graphiti_core"),
}


class Recorder:
    """Wraps a MemorySystem and keeps every argument it is handed."""

    def __init__(self, system: MemorySystem, log: list[Any]) -> None:
        self.system, self.log = system, log

    def __getattr__(self, name: str) -> Any:
        found = getattr(self.system, name)
        if name not in {"open_memory", "ingest_session", "search"}:
            return found

        async def recorded(*args: Any, **kwargs: Any) -> Any:
            shown = [asdict(a) if hasattr(a, "__dataclass_fields__") else a for a in args]
            self.log.append({"call": name, "args": shown, "kwargs": kwargs})
            return await found(*args, **kwargs)

        return recorded


@pytest.mark.slow
@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_nothing_gold_reaches_the_system_or_its_model(
    backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    params, policy, module = BACKENDS[backend]
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"the {backend} extra is not installed (make install-all)")
    model = ScriptedChatModel(script=[fake_policy(policy)])
    log: list[Any] = []
    opened = registry.open_system  # the stages' own, wrapped to record what they hand over

    def recording(settings: Any, scope: str = "") -> Any:
        return Recorder(opened(settings, scope), log)

    monkeypatch.setattr(
        "lme_bench.providers.memory_model.memory_chat_model",
        lambda settings: AccountedChatModel(inner=model),
    )
    monkeypatch.setattr(ingest_question_module, "open_system", recording)
    monkeypatch.setattr(qa_stage, "open_system", recording)
    settings = load_settings(
        None,
        **{
            "run.results_dir": str(tmp_path),
            "run.id": "leak",
            "memory.backend": backend,
            "memory.params": params,
            "models.memory": f"fake:{policy}",
            "models.qa": "fake:quote-memory",
            "models.judge": "none",
            "run.stages": ["ingest", "answer"],
        },
    )
    plan = plan_run(settings)
    _, refs = prepare_questions(plan, limit=2)
    for ref in refs:
        outcome = asyncio.run(ingest_question(ref, settings, plan.run_id))
        asyncio.run(answer_question(ref, outcome.memory_id, settings))

    assert {entry["call"] for entry in log} == {"open_memory", "ingest_session", "search"}
    assert model.calls, "the system's own model was never called"
    handed = json.dumps(log) + "\n".join(
        str(message.content) for call in model.calls for message in call.messages
    )
    chosen = {ref.question_id for ref in refs}
    instances = [q.instance for q in iter_questions(bundled_sample())]
    haystack = "\n".join(t.content for i in instances for s in i.haystack_sessions for t in s)
    assert "has_answer" not in handed and "_abs" not in handed and "answer_" not in handed
    for instance in instances:
        assert instance.question_id not in handed
        for session_id in instance.haystack_session_ids:
            assert f'"{session_id}"' not in handed
        if instance.question_id in chosen and instance.answer not in haystack:
            assert instance.answer not in handed, instance.question_id
