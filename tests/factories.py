"""Builders of small, valid LongMemEval questions and result rows for tests."""

from __future__ import annotations

from typing import Any

from lme_bench.results.qa_tables import HypothesisRow


def make_question(question_id: str = "aa11bb22", **overrides: Any) -> dict[str, Any]:
    """A small valid LongMemEval question: one filler and one evidence session, unsorted dates."""
    question: dict[str, Any] = {
        "question_id": question_id,
        "question_type": "single-session-user",
        "question": "What breed is my dog?",
        "answer": "golden retriever",
        "question_date": "2023/05/30 (Tue) 23:40",
        "haystack_session_ids": ["sharegpt_Ab3dE9x_0", "answer_4be1b6b4"],
        "haystack_dates": ["2023/05/20 (Sat) 10:00", "2023/05/01 (Mon) 09:15"],
        "haystack_sessions": [
            [
                {"role": "user", "content": "How long should sourdough proof in the fridge?"},
                {"role": "assistant", "content": "Twelve to sixteen hours works well."},
            ],
            [
                {
                    "role": "user",
                    "content": "Any tips for a first week with a puppy?",
                    "has_answer": False,
                },
                {
                    "role": "assistant",
                    "content": "Crate training helps a lot.",
                    "has_answer": False,
                },
                {
                    "role": "user",
                    "content": "My golden retriever Max chews everything.",
                    "has_answer": True,
                },
                {
                    "role": "assistant",
                    "content": "Offer chew toys and praise.",
                    "has_answer": False,
                },
            ],
        ],
        "answer_session_ids": ["answer_4be1b6b4"],
    }
    question.update(overrides)
    return question


def hypothesis_row() -> HypothesisRow:
    """One answered question's row, as the answer stage hands it to the judge."""
    return HypothesisRow(
        question_id="q1",
        question_type="single-session-user",
        is_abstention=False,
        hypothesis="a golden retriever",
        strategy="single",
        qa_model="fake:quote-memory",
        prompt_version="v1",
        top_ke=10,
        top_kc=3,
    )


def run_summary_json(benchmark: str = "longmemeval", **parts: Any) -> dict[str, Any]:
    """A finished run's summary.json with every field a summary has, nothing measured; `parts`
    add or replace top-level fields (a benchmark's section under its name)."""
    empty = {"questions": 0, "overall": {}, "by_type": {}}
    summary: dict[str, Any] = {
        "note": "averages",
        "averaging": {"overall": "all", "with_user_evidence": "with user evidence"},
        "session": dict(empty),
        "turn": dict(empty),
        "benchmark": benchmark,
        "ingestion": {"questions": 0},
        "memory_health": {"checked": 0, "empty": 0, "question_ids": []},
        "memory": {"backend": "embedded"},
        "search_latency": {"n": 0},
        "cost": None,
        "run": {"dataset": {"path": "data.json", "sha256": "00" * 32}, "wall_seconds": 1},
        "incomplete": {"failed": 0, "question_ids": []},
        "headline": "no figures",
    }
    return summary | parts
