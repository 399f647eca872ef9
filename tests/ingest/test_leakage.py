"""No gold label reaches the memory system: no answer, has_answer, evidence or session ids."""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
from pathlib import Path

from lme_bench.backends.builtin_params import memory_path
from lme_bench.config.settings import load_settings
from lme_bench.dataset.loader import iter_questions
from lme_bench.ingest.titles import memory_titles
from lme_bench.run.steps import bundled_sample, ingest_question, plan_run, prepare_questions

ALLOWED_TAGS = {"session_key", "turn_index", "role", "session_date"}


def test_ingestion_stores_only_roles_contents_dates_and_opaque_keys(tmp_path: Path) -> None:
    settings = load_settings(None, **{"run.results_dir": str(tmp_path), "run.id": "leak"})
    plan = plan_run(settings)
    _, refs = prepare_questions(plan)
    for ref in refs:
        asyncio.run(ingest_question(ref, settings, plan.run_id))
    instances = {q.instance.question_id: q.instance for q in iter_questions(bundled_sample())}

    db = sqlite3.connect(memory_path(settings))
    titles = dict(db.execute("SELECT memory_id, title FROM memories"))
    question_of = memory_titles(list(instances), plan.run_id, settings.run.results_dir)
    assert sorted(titles.values()) == sorted(question_of)  # one memory per question
    for title in titles.values():
        assert re.fullmatch(r"lme-[0-9a-f]{40}", title), title  # no question id, no `_abs`
    rows = db.execute("SELECT memory_id, raw_entry, summary, tags FROM entries").fetchall()
    assert rows
    for memory_id, raw, summary, tags_json in rows:
        instance = instances[question_of[titles[memory_id]]]
        contents = {t.content for s in instance.haystack_sessions for t in s}
        assert raw in contents
        assert summary == raw or (summary.endswith("…") and raw.startswith(summary[:-1]))
        tags = json.loads(tags_json)
        assert set(tags) == ALLOWED_TAGS
        assert re.fullmatch(r"s\d{3}", tags["session_key"]) and tags["turn_index"].isdigit()
        assert tags["session_date"] in instance.haystack_dates
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()

    stored = memory_path(settings).read_bytes().decode("utf-8", errors="replace")
    haystack_text = "\n".join(
        t.content for i in instances.values() for s in i.haystack_sessions for t in s
    )
    assert "has_answer" not in stored and "_abs" not in stored
    for instance in instances.values():
        assert instance.question_id not in stored, instance.question_id
        for session_id in {*instance.haystack_session_ids, *instance.answer_session_ids}:
            assert session_id not in stored, session_id
        if instance.answer not in haystack_text:
            assert instance.answer not in stored, instance.question_id
