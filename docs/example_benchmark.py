"""A complete benchmark with a scoring rule of its own: multiple-choice questions about a
conversation, scored exactly (the response names the gold choice, by its letter or by its
text alone), as PersonaMem and MemBench score theirs. No model judges it.

Its file, `*.choices.json`:

    {"conversations": [{"id": "c1",
      "sessions": [{"date": "2024-03-01", "turns": [{"role": "user", "content": "…"}]}],
      "questions": [{"id": "c1-q1", "type": "preference", "question": "What do I drink?",
                     "choices": ["tea", "coffee"], "answer": "B"}]}]}

Name it in a config as `[dataset] benchmark = "docs/example_benchmark.py:Choices"`. Besides
the four methods every benchmark has, it defines two scoring hooks
(lme_bench/benchmarks/scoring_hooks.py): `score_answer` (the rule: one verdict a question) and
`run_figures` (its accuracy per type in summary.json under `choices`, a summary.md section and
an answers file in the run folder); and report hooks (lme_bench/benchmarks/report_hooks.py):
its accuracy leads the headline, a section of report.html, and a section of `lme-bench
compare` pairing each question's exact-match verdict of two runs. The run records where the
class was found (summary.json `benchmark_source`), so the report and compare code find these
hooks there. The run's other figures are as for any benchmark.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lme_bench.benchmarks.protocol import (
    BenchmarkDataError,
    Build,
    BuildSession,
    BuildTurn,
    Gold,
    Question,
    Scoring,
    session_key,
)
from lme_bench.benchmarks.report_hooks import (
    CompareRequest,
    CompareWords,
    ReportHooks,
    ReportTable,
    Section,
)
from lme_bench.benchmarks.scoring_hooks import FiguresInput, JudgedQuestion, RunFigures
from lme_bench.compare.load import CompareError, run_dir
from lme_bench.compare.official import OfficialPart
from lme_bench.compare.paired import Groups, MetricComparison, paired_delta, pooled

ANSWERS_FILE = "choices_answers.jsonl"
_OPTION = re.compile(r"\(([A-Z])\) ([^()]*?)(?= \([A-Z]\) |$)")


def with_choices(text: str, choices: list[str]) -> str:
    """The question as the reader sees it: its text, then `(A) …  (B) …`."""
    letters = string.ascii_uppercase[: len(choices)]
    options = " ".join(f"({letter}) {c}" for letter, c in zip(letters, choices, strict=True))
    return f"{text} {options}"


def chosen(question_text: str, response: str) -> str | None:
    """The letter a response picks: one it starts with (`(B)`, `B)`, `B.`, `B:` or `B` alone),
    else the one choice whose text alone it contains; None when it picks none or several."""
    options = {m.group(1): m.group(2).lower() for m in _OPTION.finditer(question_text)}
    found = re.match(r"\s*(?:\(([A-Z])\)|([A-Z])[).:](?:\s|$)|([A-Z])\s*$)", response)
    if found:
        letter = next(g for g in found.groups() if g)
        return letter if letter in options else None
    lowered = response.lower()
    named = [letter for letter, text in options.items() if text in lowered]
    return named[0] if len(named) == 1 else None


METRIC = "exact match of the chosen option (each question right or wrong)"


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def headline(section: Section) -> list[str]:
    """The leading part of the run's headline: its exact-match accuracy."""
    counts = f"{section['correct']}/{section['questions']}"
    return [f"multiple-choice accuracy {_percent(section['accuracy'])} ({counts})"]


def html_section(section: Section) -> ReportTable:
    """Its section of report.html: accuracy per question type, then overall."""
    rows = [
        [kind, str(c["questions"]), str(c["correct"]), _percent(c["accuracy"])]
        for kind, c in section["by_type"].items()
    ]
    rows.append(
        [
            "overall",
            str(section["questions"]),
            str(section["correct"]),
            _percent(section["accuracy"]),
        ]
    )
    words = f"Scored by exact match of the chosen option; each answer in {section['answers']}."
    return ReportTable(
        "Multiple choice (exact)", words, ["type", "questions", "right", "accuracy"], rows
    )


def _answers(results_dir: Path, run_id: str) -> dict[str, bool] | None:
    """Question id -> right, from the run's answers file; None when it has none."""
    path = run_dir(results_dir, run_id) / ANSWERS_FILE
    if not path.is_file():
        return None
    try:
        lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        return {line["question_id"]: bool(line["correct"]) for line in lines}
    except (ValueError, KeyError, TypeError) as exc:
        raise CompareError(f"{path} is not a multiple-choice answers file: {exc}") from exc


def compare(request: CompareRequest) -> OfficialPart:
    """Each question's exact-match verdict in both runs, paired; per type and overall."""
    a = _answers(request.results_dir, request.run_a)
    b = _answers(request.results_dir, request.run_b)
    if a is None or b is None:
        missing = request.run_a if a is None else request.run_b
        note = f"not compared: run {missing!r} has no {ANSWERS_FILE}"
        return OfficialPart(request.benchmark, METRIC, [], note=note)
    types = _types(request.results_dir, request.run_a)
    groups: Groups = {}
    for question_id in sorted(a.keys() & b.keys()):
        pair = (float(a[question_id]), float(b[question_id]))
        groups.setdefault(types.get(question_id, "other"), []).append(pair)
    resamples, seed = request.resamples, request.seed
    rows = [
        MetricComparison(kind, paired_delta({kind: pairs}, pooled, resamples, seed))
        for kind, pairs in groups.items()
    ]
    rows.append(MetricComparison("overall", paired_delta(groups, pooled, resamples, seed)))
    return OfficialPart(request.benchmark, METRIC, rows)


def _types(results_dir: Path, run_id: str) -> dict[str, str]:
    """Question id -> type, as the run's scores record them."""
    import pyarrow.parquet as pq  # a dependency of lme-bench, needed only here

    path = run_dir(results_dir, run_id) / "scores.parquet"
    if not path.is_file():
        return {}
    rows = pq.read_table(path, columns=["question_id", "question_type"]).to_pylist()
    return {r["question_id"]: r["question_type"] for r in rows}


REPORT_HOOKS = ReportHooks(
    headline=headline,
    html_section=html_section,
    compare=compare,
    compare_words=CompareWords(
        title="Multiple choice (exact)",
        note="Paired per question; 95% intervals from {resamples} paired bootstrap resamples"
        " (seed {seed}).",
        y_label="accuracy",
        first_column="type",
    ),
)


class Choices:
    name = "choices"
    report_hooks = REPORT_HOOKS
    scoring = Scoring(
        official_scorers=("exact match of the chosen option",),
        headline=("accuracy", "accuracy per type"),
        module=__name__,
    )

    def detect(self, path: Path) -> bool:
        return Path(path).name.endswith(".choices.json")

    def _conversations(self, path: Path) -> list[dict[str, Any]]:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise BenchmarkDataError(path, f"not readable JSON ({error})") from None
        conversations = data.get("conversations") if isinstance(data, dict) else None
        if not isinstance(conversations, list) or not conversations:
            raise BenchmarkDataError(path, "no conversations", field="conversations")
        return conversations

    def validate(self, path: Path) -> None:
        list(self.builds(path))
        for question, gold in self.questions(path):
            if not gold.answers or f"({gold.answers[0]}) " not in question.question:
                raise BenchmarkDataError(path, "answer names no choice", item=question.question_id)

    def builds(self, path: Path) -> Iterator[Build]:
        for conversation in self._conversations(path):
            sessions = tuple(
                BuildSession(
                    session_key(rank),
                    session["date"],
                    tuple(
                        BuildTurn(i, turn["role"], turn["content"])
                        for i, turn in enumerate(session["turns"])
                    ),
                )
                for rank, session in enumerate(conversation["sessions"])
            )
            yield Build(conversation["id"], sessions)

    def questions(self, path: Path) -> Iterator[tuple[Question, Gold]]:
        for conversation in self._conversations(path):
            for item in conversation["questions"]:
                text = with_choices(item["question"], item["choices"])
                question = Question(item["id"], conversation["id"], item["type"], text)
                yield question, Gold(item["id"], answers=(item["answer"],))

    # ---- scoring hooks ----

    def score_answer(self, question: JudgedQuestion, response: str) -> bool:
        """Right when the response picks the gold letter, exactly."""
        return chosen(question.question, response) == question.answer

    def run_figures(self, given: FiguresInput) -> RunFigures | None:
        """Accuracy overall and per type from the rule's verdicts, and the answers file."""
        if given.verdicts is None:  # the judge stage did not run
            return None
        types = {r.question_id: r.question_type for r in given.refs}
        verdicts = {s.question_id: s.label for s in given.verdicts if s.question_id in types}
        by_type: dict[str, dict[str, Any]] = {}
        for question_id, question_type in types.items():
            counts = by_type.setdefault(question_type, {"questions": 0, "correct": 0})
            counts["questions"] += 1
            counts["correct"] += bool(verdicts.get(question_id))
        for counts in by_type.values():
            counts["accuracy"] = counts["correct"] / counts["questions"]
        correct = sum(bool(v) for v in verdicts.values())
        section = {
            "questions": len(types),
            "correct": correct,
            "accuracy": correct / len(types) if types else None,
            "by_type": by_type,
            "answers": ANSWERS_FILE,
        }
        answers = {h.question_id: h.hypothesis for h in given.hypotheses or []}
        lines = [
            {"question_id": q, "response": answers.get(q), "correct": bool(verdicts.get(q))}
            for q in types
        ]
        (given.run_dir / ANSWERS_FILE).write_text(
            "".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8"
        )
        markdown = f"\n## Multiple choice (exact)\n\n{correct} of {len(types)} right\n"
        return RunFigures(section, markdown)
