"""The failed run's message: failures grouped by stage and cause with counts, and how many
question ids it leaves out."""

from __future__ import annotations

from lme_bench.run.failure_summary import failure_message

REFUSED = "OpenAIConnectionError: Connection error. (reader local:tiny at http://127.0.0.1:1/v1)"


def test_failures_group_by_stage_and_cause_most_common_first() -> None:
    ids = [f"q{n:02d}" for n in range(34)]
    errors = {q: f"StageFailed: {REFUSED} (at benchmark.py:{n} in answer_question)"
              for n, q in enumerate(ids[:30])}  # fmt: skip
    errors |= {q: "ValueError: bad reply; ValueError: bad reply" for q in ids[30:]}
    stages = dict.fromkeys(ids[:30], "answer") | dict.fromkeys(ids[30:], "judge")
    message = failure_message(ids, errors, stages)
    assert message.startswith(
        f"34 question(s) failed: answer \N{MULTIPLICATION SIGN} 30: {REFUSED}; "
        f"judge \N{MULTIPLICATION SIGN} 4: ValueError: bad reply; ids: q00, q01,"
    )
    assert message.endswith("q19 and 14 more (manifest.json's failed_question_ids lists them all)")


def test_causes_past_the_first_three_are_counted_and_all_ids_shown_when_few() -> None:
    ids = ["a", "b", "c", "d", "e"]
    errors = {q: f"RuntimeError: fault {q}" for q in ids}
    message = failure_message(ids, errors, dict.fromkeys(ids, "ingest"))
    assert "; 2 more cause(s) (2 question(s)); ids: a, b, c, d, e" in message
    assert message.endswith("ids: a, b, c, d, e")
