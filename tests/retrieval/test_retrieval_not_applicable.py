"""Retrieval figures that mean something: where hits cannot be mapped to the haystack the rows
are not applicable with the reason, left out of every average and explained, never an ok row
with an empty ranking scored 0; rankings that do map (raw, agentic with turn tags) are scored."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from lme_bench.backends.protocol import Hit
from lme_bench.config.settings import load_settings
from lme_bench.dataset.models import Instance
from lme_bench.dataset.views import session_keys
from lme_bench.metrics.ranking_metrics import score_ranking
from lme_bench.report.run_report import headline
from lme_bench.report.summary import summary_markdown
from lme_bench.results.summary import summarize_retrieval
from lme_bench.results.tables import SCHEMA_VERSION
from lme_bench.retrieval.official_ids import (
    RetrievalRow,
    corpus_turn_ids,
    evaluate_retrieval,
    failed_rows,
)
from lme_bench.retrieval.provenance import (
    CONTEXT_ONLY,
    CONTEXT_ONLY_HIT,
    RankingProvenance,
    no_provenance_reason,
    unmapped_reason,
)
from lme_bench.run.steps import evaluate_question, ingest_question, plan_run, prepare_questions
from tests.factories import make_question
from tests.ingest.test_memory_health import AGENTIC, QA, ROOT, _run, _settings

INSTANCE = Instance.model_validate(make_question())
KEYS = session_keys(INSTANCE)  # the evidence session is the older one: s000


def _hit(text: str, session_key: str | None = None, turn_index: int | None = None) -> Hit:
    return Hit(text, 1.0, session_key=session_key, turn_index=turn_index, id=f"e-{text}")


def test_hits_that_name_no_session_are_not_applicable_and_named_ones_are_scored() -> None:
    notes = [_hit("Max the golden retriever chews"), _hit("sourdough proofs overnight")]
    rows = evaluate_retrieval(INSTANCE, KEYS, notes, requested=50, depth=2)
    assert [(r.granularity, r.status, r.reason) for r in rows] == [
        ("session", "not-applicable", unmapped_reason("session", "exact")),
        ("turn", "not-applicable", unmapped_reason("turn", "exact")),
    ]
    assert all(r.ranked_ids == [] and r.metrics == {} and r.depth == 2 for r in rows)
    # A session key without a turn index maps no turn of a system that claims turns.
    untagged_turn = [_hit("Max chews", session_key="s000")]
    rows = evaluate_retrieval(INSTANCE, KEYS, untagged_turn)
    assert {r.status for r in rows} == {"not-applicable"}

    tagged = [_hit("Max chews", session_key="s000", turn_index=2), *notes]
    rows = evaluate_retrieval(INSTANCE, KEYS, tagged)
    assert {r.status for r in rows} == {"ok"} and all(r.reason is None for r in rows)
    assert rows[1].ranked_ids == ["answer_4be1b6b4_3"]
    assert rows[1].metrics == score_ranking(["answer_4be1b6b4_3"], corpus_turn_ids(INSTANCE))


def test_no_hit_at_all_is_scored_zero_and_no_provenance_or_a_given_reason_is_not() -> None:
    rows = evaluate_retrieval(INSTANCE, KEYS, [])  # searched, found nothing: the system's miss
    assert {r.status for r in rows} == {"ok"} and rows[0].metrics["recall_any@5"] == 0.0

    rows = evaluate_retrieval(INSTANCE, KEYS, [], unmappable=CONTEXT_ONLY)
    assert [(r.status, r.reason) for r in rows] == [("not-applicable", CONTEXT_ONLY)] * 2

    none = RankingProvenance("none", "none")
    rows = evaluate_retrieval(INSTANCE, KEYS, [_hit("Max chews")], none)
    assert [r.reason for r in rows] == [
        no_provenance_reason("session"),
        no_provenance_reason("turn"),
    ]
    assert all(r.status == "not-applicable" and r.provenance == "none" for r in rows)

    # Text matched to turns: a hit that matches no user turn maps nothing.
    attributed = RankingProvenance("attributed", "attributed")
    rows = evaluate_retrieval(INSTANCE, KEYS, [_hit("quantum chromodynamics lecture")], attributed)
    assert {r.reason for r in rows} == {unmapped_reason("turn", "attributed")}
    rows = evaluate_retrieval(INSTANCE, KEYS, [_hit("golden retriever Max chews everything")],
                              attributed)  # fmt: skip
    assert {r.status for r in rows} == {"ok"} and rows[1].ranked_ids == ["answer_4be1b6b4_3"]


def _rows(question: str, value: float, status: str = "ok", reason: str | None = None) -> list[Any]:
    metrics = dict.fromkeys(("recall_any@5", "recall_all@5", "ndcg_any@5"), value)
    return [
        RetrievalRow(question, "single-session-user", False, g, [], metrics, 1,
                     status=status, reason=reason)
        for g in ("session", "turn")
    ]  # fmt: skip


def test_the_summary_leaves_not_applicable_rows_out_and_says_why() -> None:
    rows = [
        *_rows("q1", 1.0),
        *_rows("q2", 0.0, "not-applicable", CONTEXT_ONLY_HIT),
        *_rows("q3", 0.0, "not-applicable", CONTEXT_ONLY_HIT),
        *failed_rows("q4", "single-session-user", False, "server went away"),
    ]
    summary = summarize_retrieval(rows)
    part = summary["session"]
    assert part["overall"]["n"] == 1 and part["overall"]["recall_any@5"] == 1.0
    assert (part["scored"], part["not_applicable"], part["errors"]) == (1, 2, 1)
    assert part["not_applicable_reasons"] == {CONTEXT_ONLY_HIT: 2}
    text = summary_markdown(summary, "t")
    assert "4 questions (0 abstention, 0 non-abstention without evidence in user turns, " \
           "1 failed, 2 not applicable)." in text  # fmt: skip
    assert f"Not applicable (2 questions, left out of the averages): {CONTEXT_ONLY_HIT}." in text
    assert "| overall | 1 | 1.000 |" in text

    only = summarize_retrieval(_rows("q2", 0.0, "not-applicable", CONTEXT_ONLY))
    text = summary_markdown(only, "t")
    assert "| overall |" not in text and "0.000" not in text
    assert text.count("No figures: retrieval is not applicable to any question") == 2
    assert f"session retrieval not applicable ({CONTEXT_ONLY})" in headline(only)


def test_a_context_only_run_is_not_applicable_and_not_failed(tmp_path: Path) -> None:
    settings = _settings(tmp_path, **{"ingest.mode": "context-only", **QA})
    report, results = _run(settings, limit=3)
    assert results.retrieval and {(r.status, r.reason) for r in results.retrieval} == {
        ("not-applicable", CONTEXT_ONLY)
    }
    table = pq.read_table(report.run_dir / "retrieval.parquet")
    assert table.schema.metadata[b"lme_bench.schema_version"] == SCHEMA_VERSION.encode()
    for row in table.to_pylist():
        assert row["status"] == "not-applicable" and row["reason"] == CONTEXT_ONLY
        assert row["ranked_ids"] == [] and row["recall_any@5"] is None
    assert report.failed == [] and "Incomplete run" not in report.markdown
    for granularity in ("session", "turn"):
        part = report.summary[granularity]
        assert (part["scored"], part["not_applicable"]) == (0, 3)
    retrieval = report.markdown.split("## Ingestion")[0]
    assert "0.000" not in retrieval and "Not applicable (3 questions" in retrieval
    page = (report.run_dir / "report.html").read_text()
    assert "No figures: retrieval is not applicable to any question." in page
    assert page.count(f"retrieval not-applicable: {CONTEXT_ONLY}") == 3  # on each card
    assert "session retrieval not applicable" in headline(report.summary)


def test_a_context_as_the_only_hit_is_not_applicable_and_an_empty_memory_scores_zero(
    tmp_path: Path,
) -> None:
    context_only = _settings(tmp_path, **{"ingest.mode": "context-only"})
    plan = plan_run(context_only)
    _, refs = prepare_questions(plan, limit=1)
    outcome = asyncio.run(ingest_question(refs[0], context_only, plan.run_id))
    # The same memory searched in another mode's run: its context document is its only hit.
    agentic = load_settings(AGENTIC, **{"run.results_dir": str(tmp_path), "run.id": "h"})
    rows = asyncio.run(evaluate_question(refs[0], outcome, agentic))
    assert {(r.status, r.reason) for r in rows} == {("not-applicable", CONTEXT_ONLY_HIT)}

    prose = _settings(tmp_path / "prose", **{"models.agent": "fake:prose-only"})
    plan = plan_run(prose)
    empty = asyncio.run(ingest_question(refs[0], prose, plan.run_id))
    assert empty.ingest_health == "empty"
    rows = asyncio.run(evaluate_question(refs[0], empty, prose))
    assert {r.status for r in rows} == {"ok"} and all(r.depth == 0 for r in rows)
    assert all(r.metrics["recall_all@5"] == 0.0 for r in rows if not refs[0].is_abstention)


def test_raw_and_agentic_rankings_with_turn_tags_stay_scored(tmp_path: Path) -> None:
    raw, raw_results = _run(_settings(tmp_path / "raw", ROOT / "configs" / "full-fake.toml"), 6)
    agentic, agentic_results = _run(_settings(tmp_path / "agentic"), limit=2)
    for report, results in ((raw, raw_results), (agentic, agentic_results)):
        assert results.retrieval and {r.status for r in results.retrieval} == {"ok"}
        assert any(r.ranked_ids for r in results.retrieval)
        assert report.summary["session"]["not_applicable"] == 0
        assert "Not applicable" not in report.markdown
        assert report.summary["session"]["scored"] == len(results.outcomes)
