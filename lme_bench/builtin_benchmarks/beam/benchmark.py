"""BEAM as a benchmark: one build per chat, read by beam.

The path is a chat folder (`chats/100K/1`, holding `chat.json` and
`probing_questions/probing_questions.json`), a tier folder (`chats/100K`), the `chats` folder
or a checkout holding it. Where a chat folder also holds `chat_trunecated.json` (sic: a shorter
history, in ten of the 100K chats and sixteen of the 1M), that is the chat read: BEAM's own
question generation (src/beam/main.py) and answer generation
(src/answer_probing_questions/answer_generation.py) read it instead of `chat.json` where it
exists, so its questions were written against it. A chat's batches are its sessions (in date
order, ties in file order) with their dates as ISO dates; the build id is the chat's
`<tier>-<n>` (`100K-1`). A question's type is its ability; BEAM questions carry no date.
"""

from __future__ import annotations

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
from lme_bench.builtin_benchmarks.beam.chat import conversation_id_of, read_conversation
from lme_bench.builtin_benchmarks.beam.models import TIERS, BeamGold, Conversation
from lme_bench.builtin_benchmarks.beam.questions import read_probing_questions

CHAT_FILE = "chat.json"
TRUNCATED_CHAT_FILE = "chat_trunecated.json"  # BEAM's spelling
QUESTIONS_FILE = Path("probing_questions") / "probing_questions.json"
_PATTERNS = (CHAT_FILE, f"*/{CHAT_FILE}", f"*/*/{CHAT_FILE}", f"chats/*/*/{CHAT_FILE}")


def _chat_order(folder: Path) -> tuple[int, int, str]:
    tier = TIERS.index(folder.parent.name) if folder.parent.name in TIERS else len(TIERS)
    number = int(folder.name) if folder.name.isdigit() else 1 << 30
    return tier, number, str(folder)


def chat_folders(path: Path) -> list[Path]:
    """The chat folders under `path` (itself, its children, or a tier's chats), in tier and
    chat-number order; empty when there are none."""
    path = Path(path)
    if not path.is_dir():
        return []
    for pattern in _PATTERNS:
        found = [p.parent for p in path.glob(pattern) if p.is_file()]
        if found:
            return sorted(found, key=_chat_order)
    return []


def chat_file(folder: Path) -> Path:
    """The history the chat's questions were written against: `chat_trunecated.json` where
    the folder holds one, else `chat.json` (the rule of BEAM's own generation code)."""
    truncated = folder / TRUNCATED_CHAT_FILE
    return truncated if truncated.is_file() else folder / CHAT_FILE


def _chat_id(folder: Path) -> str:
    return conversation_id_of(folder / CHAT_FILE) or folder.name


def conversation_build(conversation: Conversation) -> Build:
    return conversation_layout(conversation)[0]


def conversation_layout(conversation: Conversation) -> tuple[Build, dict[str, tuple[str, int]]]:
    """The chat as a build, and where each message id ended up: (session key, turn index)."""
    ordered = sorted(conversation.sessions, key=lambda s: (s.date, s.index))
    sessions, positions = [], {}
    for rank, session in enumerate(ordered):
        key = session_key(rank)
        turns = []
        for i, t in enumerate(session.turns):
            turns.append(BuildTurn(index=i, role=t.role, content=t.text))
            if t.message_id is not None:
                positions[str(t.message_id)] = (key, i)
        sessions.append(BuildSession(key=key, date=session.date.isoformat(), turns=tuple(turns)))
    return Build(build_id=conversation.conversation_id, sessions=tuple(sessions)), positions


def source_ids(sources: Any) -> tuple[str, ...]:
    """The message ids a question names as its sources, in order, once each: a list of ids,
    or (contradictions, updates, temporal pairs) an object of such lists."""
    found: list[str] = []
    if isinstance(sources, dict):
        for value in sources.values():
            found += source_ids(value)
    elif isinstance(sources, list):
        for value in sources:
            found += source_ids(value)
    elif isinstance(sources, int | str) and not isinstance(sources, bool):
        found.append(str(sources))
    return tuple(dict.fromkeys(found))


def question_gold(gold: BeamGold, positions: dict[str, tuple[str, int]] | None = None) -> Gold:
    """The labels in the protocol's form; evidence at the turns its source message ids name
    (ids the chat does not hold stay in `evidence_ids` only)."""
    evidence = source_ids(gold.extra.get("source_chat_ids"))
    found = [positions[i] for i in evidence if i in positions] if positions else []
    answers = (gold.reference_answer,) if gold.reference_answer is not None else gold.rubric
    return Gold(
        question_id=gold.question_id,
        answers=answers,
        evidence_sessions=tuple(dict.fromkeys(key for key, _ in found)),
        evidence_turns=tuple(f"{key}:{i}" for key, i in found),
        evidence_ids=evidence,
        abstention=gold.ability == "abstention",
        native=gold,
    )


class Beam:
    """BEAM chats: `chat.json` (or `chat_trunecated.json`) and its probing questions, per
    chat folder."""

    name = "beam"
    scoring = Scoring(
        official_scorers=(
            "src/evaluation/run_evaluation.py (rubric items judged by an LLM)",
            "src/evaluation/compute_metrics.py (event ordering: Kendall tau-b)",
            "src/evaluation/report_results.py",
        ),
        headline=("mean over abilities", "score per ability"),
        module="lme_bench.builtin_benchmarks.beam.scoring",
    )
    # Scoring hooks (lme_bench.benchmarks.scoring_hooks): BEAM's rubric judge scores each answer
    # (no yes/no verdict); its figures per ability, with the answers file its evaluator reads.
    own_judge = "lme_bench.builtin_benchmarks.beam.judge_stage:RUBRIC_JUDGE"
    run_figures = "lme_bench.builtin_benchmarks.beam.report:run_figures"
    official_check = "lme_bench.builtin_benchmarks.beam.official_check:official_check"
    # Report hooks (lme_bench.benchmarks.report_hooks): its report, compare, history sections.
    report_hooks = "lme_bench.builtin_benchmarks.beam.report_hooks:HOOKS"
    # Its answers files for `lme-bench score` (lme_bench.benchmarks.answers).
    answers_formats = ("lme_bench.builtin_benchmarks.beam.answers:ANSWERS",)

    def detect(self, path: Path) -> bool:
        try:
            return bool(chat_folders(path))
        except OSError:
            return False

    def _folders(self, path: Path) -> list[Path]:
        folders = chat_folders(path)
        if not folders:
            raise BenchmarkDataError(
                path, "no BEAM chat folder (a folder holding chat.json) here or below"
            )
        return folders

    def validate(self, path: Path) -> None:
        for _ in self.builds(path):
            pass
        for _ in self.questions(path):
            pass

    def builds(self, path: Path) -> Iterator[Build]:
        for folder in self._folders(path):
            conversation = read_conversation(chat_file(folder), _chat_id(folder))
            yield conversation_build(conversation)

    def questions(self, path: Path) -> Iterator[tuple[Question, Gold]]:
        for folder in self._folders(path):
            chat = _chat_id(folder)
            _, positions = conversation_layout(read_conversation(chat_file(folder), chat))
            probing = read_probing_questions(folder / QUESTIONS_FILE, chat)
            for public in probing.questions:
                gold = probing.gold_for(public)
                question = Question(
                    question_id=public.question_id,
                    build_id=chat,
                    category=gold.ability,
                    question=public.question,
                )
                yield question, question_gold(gold, positions)
