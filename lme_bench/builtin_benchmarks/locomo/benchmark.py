"""LoCoMo as a benchmark: one build per conversation, read by locomo.

Both speakers' turns are memory: each turn is a `"user"` turn with its speaker's name in
`speaker` and at the start of its text (`"Ada: I adopted a greyhound."`). Sessions come in
date order (ties in session-number order) under opaque keys; the build id is the sample id
(`conv-26`). A question's type is its category's name, as the released file numbers them:
1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

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
from lme_bench.builtin_benchmarks.detection import json_head, zip_json_head
from lme_bench.builtin_benchmarks.locomo.dates import parse_session_date
from lme_bench.builtin_benchmarks.locomo.errors import LocomoDataError
from lme_bench.builtin_benchmarks.locomo.reader import iter_samples
from lme_bench.builtin_benchmarks.locomo.records import ADVERSARIAL, Conversation, Sample
from lme_bench.builtin_benchmarks.locomo.records import Gold as LocomoGold

CATEGORY_NAMES = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
_MARKERS = (b'"speaker_a"', b'"sample_id"', b'"dia_id"')


@contextmanager
def _as_dataset_error() -> Iterator[None]:
    """The reader's error as the protocol's, with the same text."""
    try:
        yield
    except LocomoDataError as exc:
        item = f"sample {exc.sample_id!r}" if exc.sample_id is not None else None
        raise BenchmarkDataError(exc.path, exc.problem, item=item, field=exc.field) from None


def _samples(path: Path) -> Iterator[Sample]:
    with _as_dataset_error():
        yield from iter_samples(path)


def conversation_build(conversation: Conversation) -> tuple[Build, dict[int, str]]:
    """The conversation as a build, and its session numbers' keys (for the evidence)."""
    ordered = sorted(conversation.sessions, key=lambda s: (s.date, s.number))
    sessions, keys = [], {}
    for rank, session in enumerate(ordered):
        keys[session.number] = session_key(rank)
        turns = tuple(
            BuildTurn(index=i, role="user", content=f"{t.speaker}: {t.text}", speaker=t.speaker)
            for i, t in enumerate(session.turns)
        )
        sessions.append(BuildSession(key=keys[session.number], date=session.date_time, turns=turns))
    return Build(build_id=conversation.conversation_id, sessions=tuple(sessions)), keys


def _turn_positions(conversation: Conversation, keys: dict[int, str]) -> dict[str, tuple[str, int]]:
    """Dialog id -> (session key, turn index), from where each turn actually is."""
    return {
        turn.dia_id: (keys[session.number], i)
        for session in conversation.sessions
        for i, turn in enumerate(session.turns)
    }


def question_gold(gold: LocomoGold, positions: dict[str, tuple[str, int]]) -> Gold:
    """The labels in the protocol's form; dialog ids the conversation does not hold (a few
    are malformed in the released file) stay in `evidence_ids` only."""
    found = [positions[d] for d in gold.evidence if d in positions]
    sessions = list(dict.fromkeys(key for key, _ in found))
    answers = (gold.answer,) if gold.answer is not None else ()
    adversarial = gold.category == ADVERSARIAL
    return Gold(
        question_id=gold.question_id,
        answers=answers,
        evidence_sessions=tuple(sessions),
        evidence_turns=tuple(f"{key}:{i}" for key, i in found),
        evidence_ids=gold.evidence,
        abstention=adversarial,  # its answer is not in the conversation: saying so is right
        adversarial=adversarial,
        native=gold,
    )


class Locomo:
    """LoCoMo's `locomo10.json`, the repository's `data/locomo10.zip`, a folder of its
    per-conversation files, or one such file."""

    name = "locomo"
    scoring = Scoring(
        official_scorers=("task_eval/evaluation.py (eval_question_answering)",),
        headline=("F1 per category", "overall F1", "evidence recall"),
        module="lme_bench.builtin_benchmarks.locomo.scoring",
    )
    # Scoring hooks (lme_bench.benchmarks.scoring_hooks): an LLM verdict by category, beside
    # the official F1 and evidence recall its figures report with the official predictions file.
    judge_input = "lme_bench.builtin_benchmarks.locomo.judging:judge_input"
    judge_cache_part = "lme_bench.builtin_benchmarks.locomo.judging:judge_cache_part"
    run_figures = "lme_bench.builtin_benchmarks.locomo.report:run_figures"
    official_check = "lme_bench.builtin_benchmarks.locomo.official_check:official_check"
    # Report hooks (lme_bench.benchmarks.report_hooks): its report, compare, history sections.
    report_hooks = "lme_bench.builtin_benchmarks.locomo.report_hooks:HOOKS"
    # Its session dates (`1:56 pm on 8 May, 2023`), as memories and the reader get them.
    parse_session_date = staticmethod(parse_session_date)
    # Its answers files for `lme-bench score` (lme_bench.benchmarks.answers).
    answers_formats = ("lme_bench.builtin_benchmarks.locomo.answers:PREDICTIONS",)

    def detect(self, path: Path) -> bool:
        path = Path(path)
        if path.is_dir():
            if (path / "chat.json").is_file():  # a BEAM chat folder
                return False
            files = sorted(p for p in path.glob("*.json") if p.is_file())
            head = json_head(files[0]) if files else None
        else:
            head = zip_json_head(path) or json_head(path)
        return head is not None and any(marker in head for marker in _MARKERS)

    def validate(self, path: Path) -> None:
        for _ in _samples(path):
            pass

    def builds(self, path: Path) -> Iterator[Build]:
        for sample in _samples(path):
            yield conversation_build(sample.conversation)[0]

    def questions(self, path: Path) -> Iterator[tuple[Question, Gold]]:
        for sample in _samples(path):
            conversation = sample.conversation
            _, keys = conversation_build(conversation)
            positions = _turn_positions(conversation, keys)
            for question, gold in zip(sample.questions, sample.gold, strict=True):
                record = Question(
                    question_id=question.question_id,
                    build_id=conversation.conversation_id,
                    category=CATEGORY_NAMES[gold.category],
                    question=question.text,
                )
                yield record, question_gold(gold, positions)
