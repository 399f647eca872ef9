"""No request body sent to a model during ingestion holds a gold label: has_answer, original
session ids, answer_session_ids or the gold answer (real HTTP to a loopback fake provider)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from lme_bench.config.settings import ProviderSettings, load_settings
from lme_bench.dataset.loader import iter_questions
from lme_bench.run.steps import bundled_sample, ingest_question, plan_run, prepare_questions
from tests.providers.fake_openai_server import serve

NOTE = {
    "tool_calls": [
        ("add_entry", {"summary": "The user mentioned something."}),
        ("put_context", {"content": "Facts:\n- something"}),
    ]
}


@pytest.mark.slow
@pytest.mark.parametrize(("mode", "limit"), [("context-only", None), ("agentic", 6)])
def test_no_gold_label_reaches_the_agent_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str, limit: int | None
) -> None:
    monkeypatch.setenv("LEAK_TEST_KEY", "sk-canary-leak-test")
    with serve([NOTE]) as (url, fake):
        settings = load_settings(None, **{"run.results_dir": str(tmp_path), "run.id": "leak"})
        settings = settings.model_copy(
            update={
                "ingest": settings.ingest.model_copy(update={"mode": mode}),
                "models": settings.models.model_copy(update={"agent": "local:memory-agent"}),
                "providers": {"local": ProviderSettings(base_url=url, api_key_env="LEAK_TEST_KEY")},
            }
        )
        plan = plan_run(settings)
        _, refs = prepare_questions(plan, limit=limit)
        for ref in refs:
            asyncio.run(ingest_question(ref, settings, plan.run_id))
    assert len(fake.requests) >= len(refs)
    instances = {q.instance.question_id: q.instance for q in iter_questions(bundled_sample())}
    haystack = "\n".join(
        t.content for i in instances.values() for s in i.haystack_sessions for t in s
    )
    bodies = "\n".join(json.dumps(body, ensure_ascii=False) for body in fake.requests)
    assert "has_answer" not in bodies and "answer_session_ids" not in bodies
    for ref in refs:
        instance = instances[ref.question_id]
        for session_id in {*instance.haystack_session_ids, *instance.answer_session_ids}:
            assert session_id not in bodies, session_id
        if instance.answer not in haystack:
            assert instance.answer not in bodies, ref.question_id
    assert "sk-canary-leak-test" not in bodies  # the key travels in a header only
