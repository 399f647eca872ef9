"""LongMemEval as a benchmark: one build per question, read by the existing streaming loader.

A build is a question's haystack as the leak-safe view gives it (sessions in date order under
opaque keys, turns with role and content only). Its id is made from that content alone
(`lme-` and the first 20 hex digits of its digest), so neither the question id nor its `_abs`
suffix enters it; two questions with the same haystack share one build.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from lme_bench.benchmarks.protocol import (
    Build,
    BuildSession,
    BuildTurn,
    Gold,
    Question,
    Scoring,
)
from lme_bench.benchmarks.scoring_hooks import JudgedQuestion, JudgeInput
from lme_bench.builtin_benchmarks.detection import json_head
from lme_bench.dataset.loader import iter_questions
from lme_bench.dataset.models import Instance
from lme_bench.dataset.views import make_view

_ID_HEX = 20


def haystack_build(instance: Instance) -> Build:
    """The question's haystack as a build (nothing of its labels or ids in it)."""
    view, _ = make_view(instance)
    sessions = tuple(
        BuildSession(
            key=s.key,
            date=s.date,
            turns=tuple(
                BuildTurn(index=i, role=t.role, content=t.content) for i, t in enumerate(s.turns)
            ),
        )
        for s in view.sessions
    )
    digest = Build(build_id="", sessions=sessions).content_digest
    return Build(build_id=f"lme-{digest[:_ID_HEX]}", sessions=sessions)


def question_gold(instance: Instance) -> Gold:
    """Answer, evidence (sessions and `has_answer` turns by opaque key) and the `_abs` flag."""
    _, keys = make_view(instance)
    evidence = set(instance.answer_session_ids)
    sessions, turns = [], []
    for key, position in keys.positions.items():
        if instance.haystack_session_ids[position] not in evidence:
            continue
        sessions.append(key)
        haystack = instance.haystack_sessions[position]
        turns += [f"{key}:{i}" for i, turn in enumerate(haystack) if turn.has_answer]
    return Gold(
        question_id=instance.question_id,
        answers=(instance.answer,),
        evidence_sessions=tuple(sessions),
        evidence_turns=tuple(turns),
        evidence_ids=tuple(instance.answer_session_ids),
        abstention=instance.is_abstention,
    )


class LongMemEval:
    """LongMemEval oracle / S / M files (a JSON array of questions with haystacks)."""

    name = "longmemeval"
    scoring = Scoring(
        official_scorers=(
            "src/evaluation/evaluate_qa.py (judge gpt-4o-2024-08-06)",
            "src/retrieval/eval_utils.py (recall_any/recall_all/ndcg_any@k)",
        ),
        headline=(
            "overall accuracy",
            "task-averaged accuracy",
            "abstention accuracy",
            "per-type accuracy",
        ),
        module="lme_bench.metrics",
    )
    # Scoring hooks (lme_bench.benchmarks.scoring_hooks): the official judge prompt by type and
    # id, the official printer's retrieval averages, the official hypotheses and eval files.
    run_figures = "lme_bench.results.qa_scores:longmemeval_files"
    official_check = "lme_bench.builtin_benchmarks.longmemeval.official_printer:official_check"
    longmemeval_averages = True
    longmemeval_format = True  # its files are read by LongMemEval's own loader, not split
    # Its answers files for `lme-bench score` (lme_bench.benchmarks.answers).
    answers_formats = (
        "lme_bench.builtin_benchmarks.longmemeval.rankings:RETRIEVAL_LOG",
        "lme_bench.builtin_benchmarks.longmemeval.hypotheses:HYPOTHESES_FORMAT",
    )

    def judge_input(self, question: JudgedQuestion) -> JudgeInput:
        """The official script's prompt for the question's type and id, the gold answer."""
        return JudgeInput(None, question.answer)

    # Report hooks (lme_bench.benchmarks.report_hooks): its report, compare, history sections.
    report_hooks = "lme_bench.builtin_benchmarks.longmemeval.report_hooks:HOOKS"

    def detect(self, path: Path) -> bool:
        head = json_head(path)
        return (
            head is not None
            and head.startswith(b"[")
            and b'"question_id"' in head
            and (b'"haystack_session' in head or b'"sessions"' in head)
        )

    def validate(self, path: Path) -> None:
        for _ in iter_questions(path):
            pass

    def builds(self, path: Path) -> Iterator[Build]:
        seen: set[str] = set()
        for loaded in iter_questions(path):
            build = haystack_build(loaded.instance)
            if build.build_id not in seen:
                seen.add(build.build_id)
                yield build

    def questions(self, path: Path) -> Iterator[tuple[Question, Gold]]:
        for loaded in iter_questions(path):
            instance = loaded.instance
            question = Question(
                question_id=instance.question_id,
                build_id=haystack_build(instance).build_id,
                category=instance.question_type,
                question=instance.question,
                question_date=instance.question_date,
            )
            yield question, question_gold(instance)
