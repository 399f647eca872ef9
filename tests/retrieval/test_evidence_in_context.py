"""Whether what the reader saw held an evidence turn is only said where it can be known: not in
context-only ingestion, whose reader sees a context document that maps to no turn."""

from __future__ import annotations

from pathlib import Path

from lme_bench.dataset.loader import iter_questions
from lme_bench.metrics.ranking_metrics import is_evidence
from lme_bench.retrieval.official_ids import corpus_turn_ids
from lme_bench.run.steps import bundled_sample
from tests.ingest.test_memory_health import AGENTIC, QA, _run, _settings


def test_context_only_answers_leave_evidence_in_context_unknown(tmp_path: Path) -> None:
    settings = _settings(tmp_path / "c", AGENTIC, **QA, **{"ingest.mode": "context-only"})
    _, results = _run(settings, limit=4)
    assert results.hypotheses and all(h.status == "ok" for h in results.hypotheses)
    assert all(h.evidence_in_context is None for h in results.hypotheses)
    attributions = {s.attribution for s in results.scores}
    assert not attributions & {"evidence-not-retrieved", "retrieved-not-answered"}


def test_raw_answers_still_say_whether_evidence_was_shown(tmp_path: Path) -> None:
    settings = _settings(tmp_path / "r", None, **QA, **{"ingest.mode": "raw"})
    _, results = _run(settings, limit=6)
    instances = {q.instance.question_id: q.instance for q in iter_questions(bundled_sample())}
    for row in results.hypotheses:
        instance = instances[row.question_id]
        evidence = any(is_evidence(t) for t in corpus_turn_ids(instance))
        knowable = evidence and not instance.is_abstention
        assert (row.evidence_in_context is not None) == knowable, row.question_id
    assert {True, False} <= {h.evidence_in_context for h in results.hypotheses}
