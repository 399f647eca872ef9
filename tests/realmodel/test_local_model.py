"""The whole pipeline through a real model: `lme-bench run configs/local.toml` as
docs/local-models.md runs it, against llama.cpp's server (only its port overridden), with
context-only and agentic ingestion, then answer and judge. What is checked is completion and
bookkeeping: every stage done for every question, every table and figure written. Not the
answers: a 135M model's are mostly wrong."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from tests.faults.runs import ROOT, cli_env, finish, start_run

pytestmark = [pytest.mark.realmodel, pytest.mark.slow, pytest.mark.timeout(1500)]

CONFIG = ROOT / "configs" / "local.toml"
RUN_TIMEOUT_S = 1200.0  # a few minutes on 2 cores; a run stuck on the model fails, not hangs
MODEL = "local:smollm2-135m"


def _turns(*texts: str) -> list[dict[str, Any]]:
    return [
        {"role": "user" if i % 2 == 0 else "assistant", "content": text}
        for i, text in enumerate(texts)
    ]


# Two questions, two short sessions each: a few hundred prompt tokens per call.
QUESTIONS = [
    {
        "question_id": "real0001",
        "question_type": "single-session-user",
        "question": "What is the name of my dog?",
        "answer": "Max",
        "question_date": "2023/06/02 (Fri) 18:00",
        "haystack_session_ids": ["real0001_filler", "answer_real0001"],
        "haystack_dates": ["2023/05/20 (Sat) 10:00", "2023/05/28 (Sun) 09:15"],
        "haystack_sessions": [
            _turns(
                "How long should I boil an egg for a soft yolk?",
                "About six minutes in boiling water.",
            ),
            _turns(
                "I just adopted a puppy. His name is Max.",
                "Congratulations! How old is Max?",
                "He is ten weeks old and chews everything.",
                "Chew toys and short training sessions help.",
            ),
        ],
        "answer_session_ids": ["answer_real0001"],
    },
    {
        "question_id": "real0002",
        "question_type": "knowledge-update",
        "question": "Which city do I live in now?",
        "answer": "Lisbon",
        "question_date": "2023/07/10 (Mon) 20:00",
        "haystack_session_ids": ["answer_real0002_a", "answer_real0002_b"],
        "haystack_dates": ["2023/04/03 (Mon) 08:30", "2023/06/21 (Wed) 19:45"],
        "haystack_sessions": [
            _turns(
                "I live in Porto and want a weekend hike nearby.",
                "The Peneda-Geres park is a good day trip from Porto.",
            ),
            _turns(
                "I moved to Lisbon last week. Any tips for the tram?",
                "Buy a rechargeable Viva Viagem card for trams and buses.",
            ),
        ],
        "answer_session_ids": ["answer_real0002_a", "answer_real0002_b"],
    },
]
TABLES = ("ingest", "retrieval", "hypotheses", "scores")
FILES = ("summary.md", "summary.json", "report.html", "manifest.json", "hypotheses.jsonl")


def _rows(run_dir: Path, table: str) -> list[dict[str, Any]]:
    return pq.read_table(run_dir / f"{table}.parquet").to_pylist()


@pytest.mark.parametrize("mode", ["context-only", "agentic"])
def test_a_run_through_a_real_model_completes_every_stage(
    mode: str, model_server: str, tmp_path: Path
) -> None:
    dataset = tmp_path / "questions.json"
    dataset.write_text(json.dumps(QUESTIONS), encoding="utf-8")
    env = cli_env(
        tmp_path / "prefect", LME_PROVIDERS__LOCAL__BASE_URL=model_server, LME_INGEST__MODE=mode
    )
    results = tmp_path / "results"
    run = start_run(CONFIG, results, mode, env, "--dataset", str(dataset))
    ended = finish(run, timeout=RUN_TIMEOUT_S)
    assert ended.code == 0, ended.tail()

    run_dir = results / mode
    for name in (*(f"{t}.parquet" for t in TABLES), *FILES):
        assert (run_dir / name).is_file(), name
    ids = {q["question_id"] for q in QUESTIONS}

    sessions = {(r["question_id"], r["session_index"]): r for r in _rows(run_dir, "ingest")}
    assert sessions.keys() == {(q, i) for q in ids for i in (0, 1)}
    for row in sessions.values():
        assert (row["mode"], row["status"], row["error"]) == (mode, "ok", None), row
        assert row["llm_calls"] >= 1 and row["input_tokens"] > 0, row
        # the memory holds what was written; a small model may leave its context document as
        # the first session wrote it, which memory health flags: exactly when no later session
        # stored a context of its own
        unchanged = sessions[(row["question_id"], 1)]["context_chars"] == 0
        assert row["ingest_health"] == ("context-unchanged" if unchanged else "ok"), row
    # the context-writing call names put_context, so even this model writes one for each question
    for question_id in ids:
        rows = [r for (q, _), r in sessions.items() if q == question_id]
        assert any(dict(r["memory_calls"]).get("put_context") for r in rows), rows

    assert {r["question_id"] for r in _rows(run_dir, "retrieval")} == ids
    answers = _rows(run_dir, "hypotheses")
    assert {r["question_id"] for r in answers} == ids
    for row in answers:
        assert (row["status"], row["qa_model"]) == ("ok", MODEL), row
        assert row["llm_calls"] >= 1 and row["output_tokens"] > 0, row
    judged = [r for r in _rows(run_dir, "scores") if r["judge"] == MODEL]
    assert {r["question_id"] for r in judged} == ids
    assert all(r["status"] == "ok" and r["llm_calls"] >= 1 for r in judged), judged

    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["incomplete"] == {"failed": 0, "question_ids": []}
    assert summary["ingestion"]["sessions"] == 4
    assert summary["qa"]["judges"][MODEL]["overall"]["n"] == len(ids)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["models"]["agent"] == manifest["models"]["judge"] == MODEL
    page = (run_dir / "report.html").read_text()
    assert all(question_id in page for question_id in ids)
