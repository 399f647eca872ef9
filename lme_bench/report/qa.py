"""summary.md's question-answering part: per judge, the official-rule accuracies with their
intervals (flagged on small samples, left out where they carry no spread)."""

from __future__ import annotations

from lme_bench.benchmarks.report_hooks import DEFAULT_BENCHMARK, QaWords, report_hooks_of
from lme_bench.dataset.models import QUESTION_TYPES
from lme_bench.providers.calls import calls_text
from lme_bench.report.judge_profile import successor_markdown
from lme_bench.report.labels import attribution, count, interval_text, percent
from lme_bench.results.qa_records import Figures, JudgeRecord, QaReport


def _rows(figures: Figures, types_judged: int, types: tuple[str, ...]) -> list[str]:
    own = bool(figures["per_type"]) and set(figures["per_type"]) <= set(types)
    every = len(types) if own else len(QUESTION_TYPES)
    task = "task-averaged" + (f" ({types_judged} of {every} types)" if types_judged < every else "")
    named = [
        *figures["per_type"].items(),
        (task, figures["task_averaged"]),
        ("overall", figures["overall"]),
        ("abstention", figures["abstention"]),
    ]
    lines = []
    for row_name, acc in named:
        shown = interval_text(acc["ci95"], acc["n"])
        counts = f"{count(acc['correct'])} / {count(acc['n'])}"
        lines.append(f"| {row_name} | {percent(acc['accuracy'])} | {counts} | {shown} |")
    return lines


_HEADER = ["| question type | accuracy | correct / judged | 95% interval |", "|---|---:|---:|---|"]


def _judge_table(name: str, judge: JudgeRecord, types: tuple[str, ...]) -> list[str]:
    if judge["kind"] != "llm":
        title = f"### No-LLM fallback (not comparable with LLM-judged figures): {name}"
    else:
        prompts = judge["prompts"]
        title = (
            f"### LLM judge {name}, prompts {judge['prompt_version']} ({prompts['description']})"
        )
    lines = [title, "", *_HEADER, *_rows(judge, judge["types_judged"], types), ""]
    if judge["not_judged"]:
        shown = ", ".join(judge["not_judged_ids"][:20])
        more = " …" if judge["not_judged"] > 20 else ""
        lines += [
            f"**Incomplete**: {judge['not_judged']} question(s) have no verdict and are left "
            f"out of every figure: {shown}{more}.",
            "",
        ]
    causes = ", ".join(
        f"{attribution(k)} {count(v)}" for k, v in sorted(judge["attribution"].items())
    )
    lines += [f"Attribution: {causes or 'none'}; {calls_text(judge)}.", ""]
    if judge["kind"] == "llm":
        readable = judge["readable_only"]
        lines += [
            f"Over readable verdicts only (left out: the {judge['unreadable']} replies holding no "
            "yes or no word, which the rule above reads as wrong unless they contain "
            '"yes"):',
            "",
            *_HEADER,
            *_rows(readable, len(readable["per_type"]), types),
            "",
        ]
    return lines


INTERVALS_NOTE = (
    "Intervals: 95%, stratified percentile bootstrap; flagged `small sample` under 30 questions, "
    "and `no spread` where every resample gives the same accuracy (all of a type right or all "
    "wrong, or one question), which says nothing about the uncertainty."
)


def _rule_line(words: QaWords) -> str:
    if words.rule is not None:
        return words.rule
    return (
        'A judge reply without "yes" is a wrong answer (the rule lme-bench reads every LLM'
        " judge's verdicts by); each question is judged once (repeat 0)."
    )


def _averages_note(words: QaWords) -> str:
    if words.averages is not None:
        return words.averages + " " + INTERVALS_NOTE
    return (
        "Task-averaged: the plain mean of the per-type accuracies; overall: the mean over all"
        f" judged questions; {words.abstaining} and again in the abstention row. " + INTERVALS_NOTE
    )


def qa_markdown(
    summary: QaReport, benchmark: str = DEFAULT_BENCHMARK, source: str | None = None
) -> str:
    """The QA section; `benchmark`'s report hooks (`source`: its `[dataset] benchmark`, when
    given by path) choose the notes (an official rule names its scripts), and a run without
    yes/no verdicts and without an official rule gets none."""
    words = report_hooks_of(benchmark, source).qa_words
    answers = summary["answers"]
    lines = [
        "## Question answering",
        "",
        f"{count(answers['answered'])} of {count(answers['questions'])} questions answered "
        f"({count(answers['failed'])} failed); {count(answers['llm_calls'])} QA model calls, "
        f"{calls_text(answers)}.",
        "",
    ]
    if not summary["judges"] and words.rule is None:
        return "\n".join(lines)
    lines += [_rule_line(words), ""]
    judged = {t for judge in summary["judges"].values() for t in judge["per_type"]}
    if words.types_note is not None and judged & set(words.types):
        lines += [words.types_note, ""]
    profiled = summary.get("judge_profile")
    for name, judge in summary["judges"].items():
        lines += _judge_table(name, judge, words.types)
        if profiled is not None and profiled["judge"] == name:
            lines += successor_markdown(profiled)
    for pair in summary["agreement"]:
        disputed = ", ".join(pair["disputed"]) or "none"
        lines.append(
            f"Judge agreement {pair['judges'][0]} vs {pair['judges'][1]}: "
            f"{percent(pair['agreement'])} over {pair['n']}; disputed: {disputed}."
        )
    lines.append(_averages_note(words))
    return "\n".join(lines) + "\n"
