"""BEAM as a benchmark: one build per chat, read by lme_bench.benchmarks.beam.

The path is a chat folder (`chats/100K/1`, holding `chat.json` and
`probing_questions/probing_questions.json`), a tier folder (`chats/100K`), the `chats` folder
or a checkout holding it. A chat's batches are its sessions (in date order, ties in file
order) with their dates as ISO dates; the build id is the chat's `<tier>-<n>` (`100K-1`). A
question's type is its ability; BEAM questions carry no date.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from lme_bench.benchmarks.beam.chat import conversation_id_of, read_conversation
from lme_bench.benchmarks.beam.models import TIERS, BeamGold, Conversation
from lme_bench.benchmarks.beam.questions import read_probing_questions
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

CHAT_FILE = "chat.json"
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


def _chat_id(folder: Path) -> str:
    return conversation_id_of(folder / CHAT_FILE) or folder.name


def conversation_build(conversation: Conversation) -> Build:
    ordered = sorted(conversation.sessions, key=lambda s: (s.date, s.index))
    sessions = tuple(
        BuildSession(
            key=session_key(rank),
            date=session.date.isoformat(),
            turns=tuple(
                BuildTurn(index=i, role=t.role, content=t.text) for i, t in enumerate(session.turns)
            ),
        )
        for rank, session in enumerate(ordered)
    )
    return Build(build_id=conversation.conversation_id, sessions=sessions)


def question_gold(gold: BeamGold) -> Gold:
    sources = gold.extra.get("source_chat_ids")
    evidence = tuple(str(s) for s in sources) if isinstance(sources, list) else ()
    answers = (gold.reference_answer,) if gold.reference_answer is not None else gold.rubric
    return Gold(
        question_id=gold.question_id,
        answers=answers,
        evidence_ids=evidence,
        abstention=gold.ability == "abstention",
        native=gold,
    )


class Beam:
    """BEAM chats: `chat.json` and its probing questions, per chat folder."""

    name = "beam"
    scoring = Scoring(
        official_scorers=(
            "src/evaluation/run_evaluation.py (rubric items judged by an LLM)",
            "src/evaluation/compute_metrics.py (event ordering: Kendall tau-b)",
            "src/evaluation/report_results.py",
        ),
        headline=("mean over abilities", "score per ability"),
        module="lme_bench.benchmarks.beam.scoring",
    )

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
            conversation = read_conversation(folder / CHAT_FILE, _chat_id(folder))
            yield conversation_build(conversation)

    def questions(self, path: Path) -> Iterator[tuple[Question, Gold]]:
        for folder in self._folders(path):
            chat = _chat_id(folder)
            probing = read_probing_questions(folder / QUESTIONS_FILE, chat)
            for public in probing.questions:
                gold = probing.gold_for(public)
                question = Question(
                    question_id=public.question_id,
                    build_id=chat,
                    category=gold.ability,
                    question=public.question,
                )
                yield question, question_gold(gold)
