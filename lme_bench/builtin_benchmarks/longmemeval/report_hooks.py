"""LongMemEval's report hooks (lme_bench.benchmarks.report_hooks): summary.md's QA part names
the official scripts whose rule and averages its figures follow. Its figures are the run's own
accuracy and retrieval tables: no section of its own."""

from __future__ import annotations

from lme_bench.benchmarks.report_hooks import QaWords, ReportHooks
from lme_bench.dataset.models import QUESTION_TYPES

HOOKS = ReportHooks(
    qa_words=QaWords(
        rule=(
            "Figures by the official rule (evaluate_qa.py / print_qa_metrics.py): a judge reply "
            'without "yes" is a wrong answer; each question is judged once (repeat 0).'
        ),
        averages=(
            "Task-averaged: the plain mean of the per-type accuracies (the official printer needs"
            " all six types); overall: the mean over all judged questions; `_abs` questions count"
            " inside their base type and again in the abstention row."
        ),
        types=tuple(QUESTION_TYPES),
    )
)
