"""BEAM's official scoring beside lme-bench's, on generated answers to the real questions.

    BEAM_REPO=/path/to/BEAM python perf/official_beam_check.py [--variants N] [--tiers ...]

The official functions run from the checkout, unmodified, in this process: each one needed is
compiled from `src/evaluation/compute_metrics.py`, `run_evaluation.py` and `report_results.py`
on its own, with what it refers to supplied (scipy's `kendalltau`, `json`, `re`, the prompt
strings parsed from `src/prompts.py`, a recording stand-in for pandas, no embedding models to
load), since importing the modules whole would need packages lme-bench does not install
(rouge_score, json_repair, openai clients) and downloads NLTK data at import. Four
comparisons, each counted equal / different:
1. event ordering's arithmetic: `event_ordering_score(align_type="llm")` against
   lme-bench's alignment and `ordering_score`, for generated response lines (reordered,
   dropped, decorated, blank, repeated and unrelated lines) to every real event-ordering
   question, one stand-in model deciding "same event" for both (its questions compared too);
   and Kendall tau-b against scipy's on random tied rankings;
2. the report: `report_llms_accuracies` on generated evaluation files of every chat against
   lme-bench's `aggregate`;
3. the LLM-judged scores: every official `evaluate_<ability>` against lme-bench's `BeamJudge`
   (the scripted fake model), same scripted judge replies chosen by a hash of each prompt,
   for generated answers to every real question; the prompts sent are compared as well;
4. end to end: lme-bench's answers file (`write_official_answers`) for every chat through the
   official `run_evaluation` and `report_llms_accuracies`, against `BeamJudge` and `aggregate`.
Without BEAM_REPO the check explains itself and skips (exit 0). Exit 1 on any difference.
Nothing of the checkout is copied into this repository.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import builtins
import contextlib
import hashlib
import io
import json
import math
import os
import random
import re
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from langchain_core.messages import BaseMessage
from scipy.stats import kendalltau
from support import ROOT  # noqa: F401  (puts this clone on the import path)

from lme_bench.builtin_benchmarks.beam.export import write_official_answers
from lme_bench.builtin_benchmarks.beam.judge import BeamJudge
from lme_bench.builtin_benchmarks.beam.models import BeamGold, ProbingSet
from lme_bench.builtin_benchmarks.beam.official_check import official_report
from lme_bench.builtin_benchmarks.beam.prompts import BeamPrompts, load_beam_prompts
from lme_bench.builtin_benchmarks.beam.questions import read_probing_questions
from lme_bench.builtin_benchmarks.beam.scoring import (
    QuestionScore,
    aggregate,
    align,
    kendall_tau_b,
    ordering_score,
    response_lines,
)
from lme_bench.providers.fake import ScriptedChatModel
from lme_bench.providers.retry import RetryPolicy

METRIC_FUNCTIONS = (
    "extract_facts",
    "llm_equivalence",
    "align_with_llm",
    "event_ordering_score",
    "parse_json_response",
    "evaluate_abstention",
    "evaluate_contradiction_resolution",
    "evaluate_event_ordering",
    "evaluate_information_extraction",
    "evaluate_instruction_following",
    "evaluate_knowledge_update",
    "evaluate_multi_session_reasoning",
    "evaluate_preference_following",
    "evaluate_summarization",
    "evaluate_temporal_reasoning",
)
PROMPT_NAMES = ("unified_llm_judge_base_prompt", "break_paragraph_to_facts_detailed_prompt")
# Judge replies (chosen by a hash of the prompt): plain, partial, fenced, wrapped in words,
# an integer and a numeric string; every one the official parser reads without json_repair.
JUDGE_REPLIES = (
    '{"score": 1.0, "reason": "complies"}',
    '{"score": 0.5, "reason": "partly"}',
    '{"score": 0.0, "reason": "missing"}',
    '```json\n{"score": 1.0, "reason": "fenced"}\n```',
    'Here is my verdict: {"score": 0.5, "reason": "wrapped"} as asked.',
    '{"score": 1, "reason": "an integer"}',
    '{"score": "1", "reason": "a numeric string"}',
    '{"score": 0.0, "reason": "no"}',
)
FACTS_REPLY = "1. a fact\n2. another fact"
A, B = "\x00FIRST\x00", "\x00SECOND\x00"


def stub(name: str) -> Callable[..., Any]:
    def missing(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"{name} is not installed here; the check avoids needing it")

    return missing


def compile_functions(path: Path, names: Sequence[str], namespace: dict[str, Any]) -> None:
    tree = ast.parse(path.read_bytes(), filename=str(path))
    nodes = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in names]
    found = {n.name for n in nodes}
    if set(names) - found:
        raise SystemExit(f"{path}: missing {sorted(set(names) - found)}")
    body: list[ast.stmt] = list(nodes)
    exec(compile(ast.Module(body=body, type_ignores=[]), str(path), "exec"), namespace)


def prompt_strings(path: Path) -> dict[str, str]:
    tree = ast.parse(path.read_bytes(), filename=str(path))
    out: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id in PROMPT_NAMES:
                    out[target.id] = ast.literal_eval(node.value)
    return out


def official_namespace(repo: Path) -> dict[str, Any]:
    namespace: dict[str, Any] = {
        "__builtins__": builtins,
        "json": json,
        "re": re,
        "List": list,
        "Tuple": tuple,
        "kendalltau": kendalltau,
        "repair_json": stub("json_repair"),
        **prompt_strings(repo / "src" / "prompts.py"),
    }
    compile_functions(
        repo / "src" / "evaluation" / "compute_metrics.py", METRIC_FUNCTIONS, namespace
    )
    return namespace


class Snippets:
    """Reads (first, second) back out of an equivalence request, by the official message
    built around two sentinels."""

    def __init__(self, prompts: BeamPrompts) -> None:
        user = prompts.equivalence(A, B)[-1][1]
        self.prefix, rest = user.split(A)
        self.middle, self.suffix = rest.split(B)

    def read(self, user: str) -> tuple[str, str]:
        inner = user[len(self.prefix) : len(user) - len(self.suffix)]
        first, second = inner.split(self.middle, 1)
        return first, second


def same_event(item: str, line: str) -> bool:
    """The stand-in model's rule: the rubric item's words appear in the line."""
    return bool(item.strip()) and item.strip().lower() in line.lower()


def judge_reply(prompt: str) -> str:
    return JUDGE_REPLIES[int(hashlib.sha256(prompt.encode()).hexdigest(), 16) % len(JUDGE_REPLIES)]


class OfficialModel:
    """The model object the official evaluators call: `.invoke(str | [dict]) -> .content`."""

    def __init__(self, snippets: Snippets, facts_marker: str) -> None:
        self.snippets = snippets
        self.facts_marker = facts_marker
        self.rubric_prompts: list[str] = []
        self.pairs: list[tuple[str, str]] = []
        self.fact_calls = 0

    def invoke(self, request: Any) -> SimpleNamespace:
        if isinstance(request, list):
            first, second = self.snippets.read(request[-1]["content"])
            self.pairs.append((first, second))
            return SimpleNamespace(content="YES" if same_event(first, second) else "No.")
        if self.facts_marker in request:
            self.fact_calls += 1
            return SimpleNamespace(content=FACTS_REPLY)
        self.rubric_prompts.append(request)
        return SimpleNamespace(content=judge_reply(request))


def ours_reply(snippets: Snippets, sent: list[tuple[str, str]]) -> Callable[..., str]:
    def reply(messages: list[BaseMessage]) -> str:
        text = str(messages[-1].content)
        if len(messages) > 1:
            first, second = snippets.read(text)
            sent.append(("pair", f"{first}\x00{second}"))
            return "YES" if same_event(first, second) else "No."
        sent.append(("rubric", text))
        return judge_reply(text)

    return reply


def response_variants(rubric: Sequence[str], rng: random.Random, count: int) -> list[str]:
    """Answers to an ordering question: reordered, cut, decorated, with blank, repeated and
    unrelated lines."""
    out = ["\n".join(rubric), "\n".join(reversed(rubric)), ""]
    while len(out) < count:
        items = list(rubric)
        rng.shuffle(items)
        items = items[: rng.randint(0, len(items))]
        lines: list[str] = []
        for n, item in enumerate(items, 1):
            lines.append(rng.choice([item, f"{n}. {item}", f"- {item.upper()}.", f"{n}) {item}"]))
            if rng.random() < 0.2:
                lines.append("")
            if rng.random() < 0.1:
                lines.append(lines[-1])
        for _ in range(rng.randint(0, 2)):
            lines.insert(rng.randint(0, len(lines)), f"An unrelated point {rng.randint(1, 9)}")
        out.append("\n".join(lines))
    return out[:count]


def same_number(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


def check_ordering(
    golds: list[BeamGold], ns: dict[str, Any], snippets: Snippets, variants: int, seed: int
) -> Counter[str]:
    counts: Counter[str] = Counter()
    rng = random.Random(seed)
    fields = ("precision", "recall", "f1", "tau_norm", "final_score")
    for gold in (g for g in golds if g.ability == "event_ordering"):
        for response in response_variants(gold.rubric, rng, variants):
            model = OfficialModel(snippets, "\x00no facts here\x00")
            official = ns["event_ordering_score"](
                reference_list=list(gold.rubric),
                system_list=response.split("\n"),
                align_type="llm",
                llm=model,
            )
            asked: list[tuple[str, str]] = []

            def decide(item: str, line: str, asked: list[tuple[str, str]] = asked) -> bool:
                asked.append((item, line))
                return same_event(item, line)

            ours = ordering_score(gold.rubric, align(gold.rubric, response_lines(response), decide))
            equal = all(same_number(official[f], getattr(ours, f)) for f in fields)
            counts["ordering equal" if equal else "ordering different"] += 1
            counts["(of which tau_norm NaN)"] += math.isnan(ours.tau_norm)
            counts["(of which F1 below 1)"] += ours.f1 < 1
            counts["asked same pairs" if asked == model.pairs else "asked different pairs"] += 1
    for _ in range(2000):
        n = rng.randint(2, 9)
        x = [rng.randint(1, 4) for _ in range(n)]
        y = [rng.randint(1, 4) for _ in range(n)]
        theirs = float(kendalltau(x, y, variant="b", method="auto")[0])
        counts[
            "tau-b equal" if same_number(theirs, kendall_tau_b(x, y)) else "tau-b different"
        ] += 1
    return counts


def check_report(repo: Path, sets: dict[str, list[BeamGold]], seed: int) -> Counter[str]:
    """Generated evaluation files for every chat of each tier, reported both ways."""
    counts: Counter[str] = Counter()
    rng = random.Random(seed)
    report = official_report(repo)
    tiers = sorted({chat.split("-")[0] for chat in sets})
    for tier in tiers:
        chats = sorted(
            (c for c in sets if c.startswith(f"{tier}-")), key=lambda c: int(c.split("-")[1])
        )
        with tempfile.TemporaryDirectory() as tmp:
            rows: list[QuestionScore] = []
            for chat in chats:
                folder = Path(tmp) / chat.split("-")[1]
                folder.mkdir()
                by_ability: dict[str, list[dict[str, float]]] = {}
                for gold in sorted(sets[chat], key=lambda g: (g.ability, g.index)):
                    value = rng.choice([0.0, 0.5, 1.0, rng.random(), 1 / 3])
                    key = "tau_norm" if gold.ability == "event_ordering" else "llm_judge_score"
                    by_ability.setdefault(gold.ability, []).append({key: value})
                    rows.append(QuestionScore(chat, gold.ability, value))
                (folder / "evaluation-results-x.json").write_text(json.dumps(by_ability))
            official = report(tmp, "evaluation-results-x.json")
            ours = aggregate(rows).per_ability
            for ability, value in official.items():
                counts[
                    "ability mean equal" if ours[ability] == value else "ability mean different"
                ] += 1
    return counts


def check_judged(
    golds: list[BeamGold],
    questions: dict[str, str],
    ns: dict[str, Any],
    prompts: BeamPrompts,
    snippets: Snippets,
    seed: int,
) -> Counter[str]:
    counts: Counter[str] = Counter()
    rng = random.Random(seed)
    facts_marker = ns["break_paragraph_to_facts_detailed_prompt"].split("<question>")[0][-200:]
    for gold in golds:
        response = answer_for(gold, rng)
        official_model = OfficialModel(snippets, facts_marker)
        evaluate = ns[f"evaluate_{gold.ability}"]
        official = evaluate(
            rubric=list(gold.rubric),
            llm_response=response,
            probing_question=questions[gold.question_id],
            model=official_model,
        )
        sent: list[tuple[str, str]] = []
        model = ScriptedChatModel(script=[ours_reply(snippets, sent)])
        judge = BeamJudge(model, prompts, RetryPolicy(attempts=1))
        ours = asyncio.run(judge.score(gold, response))
        equal = ours.status == "ok" and same_number(
            official["llm_judge_score"], ours.llm_judge_score or 0.0
        )
        if gold.ability == "event_ordering" and ours.ordering is not None:
            for f in ("precision", "recall", "f1", "tau_norm", "final_score"):
                equal = equal and same_number(official[f], getattr(ours.ordering, f))
        counts["judged equal" if equal else "judged different"] += 1
        their_prompts = Counter(official_model.rubric_prompts)
        our_prompts = Counter(text for kind, text in sent if kind == "rubric")
        counts["prompts same" if their_prompts == our_prompts else "prompts different"] += 1
        their_pairs = [f"{a}\x00{b}" for a, b in official_model.pairs]
        our_pairs = [text for kind, text in sent if kind == "pair"]
        counts["pairs same" if their_pairs == our_pairs else "pairs different"] += 1
        counts["official fact-extraction calls (discarded)"] += official_model.fact_calls
    return counts


def answer_for(gold: BeamGold, rng: random.Random) -> str:
    if gold.ability == "event_ordering":
        return response_variants(gold.rubric, rng, 4)[rng.randint(0, 3)]
    if rng.random() < 0.3:
        return "I do not know."
    return gold.reference_answer or " ".join(gold.rubric)


def check_end_to_end(
    repo: Path,
    probings: dict[str, ProbingSet],
    ns: dict[str, Any],
    prompts: BeamPrompts,
    snippets: Snippets,
    seed: int,
) -> Counter[str]:
    """lme-bench's answers file through the official `run_evaluation` and report, against
    BeamJudge and `aggregate`, tier by tier."""
    counts: Counter[str] = Counter()
    rng = random.Random(seed)
    facts_marker = ns["break_paragraph_to_facts_detailed_prompt"].split("<question>")[0][-200:]
    run_ns: dict[str, Any] = {**ns, "initialize_models": lambda: None}
    compile_functions(
        repo / "src" / "evaluation" / "run_evaluation.py", ["get_rubric", "run_evaluation"], run_ns
    )
    report = official_report(repo)
    for tier in sorted({chat.split("-")[0] for chat in probings}):
        chats = sorted(
            (c for c in probings if c.startswith(f"{tier}-")), key=lambda c: int(c.split("-")[1])
        )
        rows: list[QuestionScore] = []
        with tempfile.TemporaryDirectory() as tmp:
            for chat in chats:
                probing = probings[chat]
                number = chat.split("-")[1]
                answers = {
                    q.question_id: answer_for(probing.gold_for(q), rng) for q in probing.questions
                }
                answers_path = Path(tmp) / "answers" / number / "answers.json"
                write_official_answers(answers_path, probing, answers)
                folder = Path(tmp) / "evaluations" / number
                folder.mkdir(parents=True)
                with contextlib.redirect_stdout(io.StringIO()):  # its progress lines
                    run_ns["run_evaluation"](
                        probing_questions_address=str(
                            repo
                            / "chats"
                            / tier
                            / number
                            / "probing_questions"
                            / "probing_questions.json"
                        ),
                        answers_directory=str(answers_path),
                        output_address=str(folder / "evaluation-results-answers.json"),
                        model=OfficialModel(snippets, facts_marker),
                    )
                model = ScriptedChatModel(script=[ours_reply(snippets, [])])
                judge = BeamJudge(model, prompts, RetryPolicy(attempts=1))
                for question in probing.questions:
                    result = asyncio.run(
                        judge.score(probing.gold_for(question), answers[question.question_id])
                    )
                    score = result.question_score()
                    if score is None:
                        raise SystemExit(f"{question.question_id}: {result.error}")
                    rows.append(score)
            official = report(str(Path(tmp) / "evaluations"), "evaluation-results-answers.json")
        ours = aggregate(rows).per_ability
        for ability, value in official.items():
            counts[
                "end-to-end mean equal" if ours[ability] == value else "end-to-end mean different"
            ] += 1
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", type=int, default=20, help="answers per ordering question")
    parser.add_argument("--tiers", nargs="*", default=["100K", "500K", "1M", "10M"])
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    repo_text = os.environ.get("BEAM_REPO")
    if not repo_text:
        print("skipped: set BEAM_REPO to a BEAM checkout (src/ and chats/)")
        return 0
    repo = Path(repo_text).expanduser()
    prompts = load_beam_prompts(repo)
    snippets = Snippets(prompts)
    ns = official_namespace(repo)
    sets: dict[str, list[BeamGold]] = {}
    probings: dict[str, ProbingSet] = {}
    questions: dict[str, str] = {}
    for tier in args.tiers:
        for path in sorted(
            (repo / "chats" / tier).glob("*/probing_questions/probing_questions.json")
        ):
            probing = read_probing_questions(path)
            sets[probing.conversation_id] = list(probing.gold.values())
            probings[probing.conversation_id] = probing
            questions.update({q.question_id: q.question for q in probing.questions})
    golds = [g for chat in sets.values() for g in chat]
    print(f"{len(sets)} chats, {len(golds)} probing questions read from {repo}")
    results = [
        (
            "event ordering arithmetic",
            check_ordering(golds, ns, snippets, args.variants, args.seed),
        ),
        ("report (per-ability means)", check_report(repo, sets, args.seed)),
        ("LLM-judged scores", check_judged(golds, questions, ns, prompts, snippets, args.seed)),
        (
            "answers file through run_evaluation and the report",
            check_end_to_end(repo, probings, ns, prompts, snippets, args.seed),
        ),
    ]
    different = 0
    for title, counts in results:
        print(f"{title}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
        different += sum(v for k, v in counts.items() if "different" in k)
    print("all equal" if not different else f"{different} differences")
    return 1 if different else 0


if __name__ == "__main__":
    sys.exit(main())
