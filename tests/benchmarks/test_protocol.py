"""Every built-in benchmark keeps the protocol: it recognises its own files and no other's,
streams builds of dated sessions under opaque keys, and questions naming those builds with
their gold apart."""

from __future__ import annotations

from pathlib import Path

import pytest

from lme_bench.benchmarks.protocol import (
    Benchmark,
    Build,
    Gold,
    PublicQuestion,
    Question,
    Scoring,
    session_key,
)
from lme_bench.benchmarks.registry import BUILT_IN, load_benchmark
from tests.benchmarks.datasets import DATASETS
from tests.benchmarks.locomo.samples import listed_sample, write_json


@pytest.mark.parametrize("name", BUILT_IN)
def test_each_built_in_is_a_benchmark_with_a_scoring_descriptor(name: str) -> None:
    benchmark = load_benchmark(name)
    assert isinstance(benchmark, Benchmark)
    assert benchmark.name == name
    assert isinstance(benchmark.scoring, Scoring)
    assert benchmark.scoring.official_scorers and benchmark.scoring.headline
    __import__(benchmark.scoring.module)  # the scoring functions' module exists


@pytest.mark.parametrize("dataset", DATASETS)
def test_each_format_is_recognised_by_its_benchmark_alone(dataset: str, tmp_path: Path) -> None:
    owner, write = DATASETS[dataset]
    path = write(tmp_path)
    claimed = [name for name in BUILT_IN if load_benchmark(name).detect(path)]
    assert claimed == [owner]


@pytest.mark.parametrize("dataset", DATASETS)
def test_builds_and_questions_keep_the_protocol(dataset: str, tmp_path: Path) -> None:
    owner, write = DATASETS[dataset]
    path = write(tmp_path)
    benchmark = load_benchmark(owner)
    benchmark.validate(path)
    builds = list(benchmark.builds(path))
    assert builds and all(isinstance(build, Build) for build in builds)
    assert len({b.build_id for b in builds}) == len(builds)
    for build in builds:
        assert [s.key for s in build.sessions] == [
            session_key(r) for r in range(len(build.sessions))
        ]
        for session in build.sessions:
            assert session.date and session.turns
            assert [t.index for t in session.turns] == list(range(len(session.turns)))
            assert {t.role for t in session.turns} <= {"user", "assistant"}
    pairs = list(benchmark.questions(path))
    assert pairs
    ids = [question.question_id for question, _ in pairs]
    assert len(set(ids)) == len(ids)
    build_ids = {b.build_id for b in builds}
    for question, gold in pairs:
        assert isinstance(question, Question) and isinstance(gold, Gold)
        assert gold.question_id == question.question_id
        assert question.build_id in build_ids
        assert question.category and question.question
        keys = {s.key for b in builds if b.build_id == question.build_id for s in b.sessions}
        assert set(gold.evidence_sessions) <= keys
        assert {turn.partition(":")[0] for turn in gold.evidence_turns} <= keys
        assert question.public() == PublicQuestion(question.question, question.question_date)


def test_longmemeval_sessions_and_questions_follow_the_file(tmp_path: Path) -> None:
    path = DATASETS["longmemeval"][1](tmp_path)
    benchmark = load_benchmark("longmemeval")
    pairs = list(benchmark.questions(path))
    assert len(pairs) == 34 and len({q.build_id for q, _ in pairs}) == 34  # one per question
    question, gold = pairs[0]
    assert (question.category, question.question_date) == (
        "knowledge-update",
        "2023/05/25 (Thu) 19:30",
    )
    assert gold.answers == ("Austin",)
    assert gold.evidence_ids == ("answer_1814bc65_1", "answer_1814bc65_2")
    assert gold.evidence_sessions == ("s003", "s009")  # the sessions at those positions by date
    assert all(g.abstention == q.question_id.endswith("_abs") for q, g in pairs)


def test_locomo_speakers_are_both_memory_and_categories_have_names(tmp_path: Path) -> None:
    path = DATASETS["locomo-list"][1](tmp_path)
    benchmark = load_benchmark("locomo")
    build = next(iter(benchmark.builds(path)))
    first = build.sessions[0].turns[0]
    assert (first.role, first.speaker, first.content) == (
        "user",
        "Ada",
        "Ada: I adopted a greyhound called Pip.",
    )
    assert [s.date for s in build.sessions] == [
        "1:56 pm on 8 May, 2023",
        "10:04 am on 19 June, 2023",
    ]
    pairs = [p for p in benchmark.questions(path) if p[0].build_id == "conv-7"]
    assert [q.category for q, _ in pairs] == [
        "multi-hop",
        "temporal",
        "open-domain",
        "single-hop",
        "adversarial",
    ]
    _, dog = pairs[3]
    assert (dog.answers, dog.evidence_ids, dog.evidence_turns) == (("Pip",), ("D1:1",), ("s000:0",))
    _, adversarial = pairs[4]
    assert adversarial.adversarial and adversarial.abstention and adversarial.answers == ()


def test_locomo_sessions_come_in_date_order_whatever_their_numbers(tmp_path: Path) -> None:
    path = write_json(tmp_path / "l.json", [listed_sample_swapped()])
    build = next(iter(load_benchmark("locomo").builds(path)))
    assert [s.date for s in build.sessions] == [
        "1:56 pm on 8 May, 2023",
        "10:04 am on 19 June, 2023",
    ]
    assert build.sessions[0].turns[0].content.startswith("Ada: Pip and I ran")


def listed_sample_swapped() -> dict[str, object]:
    """Session 2 dated before session 1."""
    sample = listed_sample()
    conversation = sample["conversation"]
    assert isinstance(conversation, dict)
    conversation["session_1_date_time"], conversation["session_2_date_time"] = (
        conversation["session_2_date_time"],
        conversation["session_1_date_time"],
    )
    return sample


def test_beam_chats_are_builds_with_their_abilities_as_categories(tmp_path: Path) -> None:
    path = DATASETS["beam-checkout"][1](tmp_path)
    benchmark = load_benchmark("beam")
    builds = list(benchmark.builds(path))
    assert [b.build_id for b in builds] == ["100K-1", "100K-2"]
    assert [s.date for s in builds[0].sessions] == ["2024-03-15", "2024-04-02"]
    categories = {q.category for q, g in benchmark.questions(path) if q.build_id == "100K-1"}
    assert {"abstention", "event_ordering", "information_extraction"} <= categories
    abstaining = [g for q, g in benchmark.questions(path) if q.category == "abstention"]
    assert abstaining and all(g.abstention for g in abstaining)
