"""A BEAM folder split for a run: one build per chat, questions asked on the chat's last
session date, the gold (a BeamGold) kept apart and read back whole by the scorer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lme_bench.benchmarks.protocol import BenchmarkDataError
from lme_bench.benchmarks.split import splitter_for
from lme_bench.builtin_benchmarks.beam.questions import read_probing_questions
from lme_bench.builtin_benchmarks.beam.stored import beam_gold, stored_beam_gold
from lme_bench.dataset.shards import QuestionRef, folder_sha256, prepare_dataset
from tests.benchmarks.beam.samples import QUESTIONS, write_chat, write_questions


def _prepare(root: Path) -> list[QuestionRef]:
    split, kind = splitter_for(None, root / "chats")
    assert kind == "beam"
    return prepare_dataset(root / "chats", root / "cache", split, kind).questions


def test_each_chat_is_one_build_and_its_questions_come_back_in_the_stages_shape(
    tmp_path: Path,
) -> None:
    for number in (3, 4):
        write_chat(tmp_path, number=number)
        write_questions(tmp_path, number=number)
    refs = _prepare(tmp_path)
    per_chat = sum(len(v) for v in QUESTIONS.values())
    assert len(refs) == 2 * per_chat and {r.benchmark for r in refs} == {"beam"}
    assert len({r.build for r in refs}) == 2 and {r.build_id for r in refs} == {"100K-3", "100K-4"}
    record = refs[0].load()
    assert record.question_date == record.haystack_dates[-1] == "2024/04/02 (Tue) 00:00"
    assert len(record.haystack_sessions) == 2 and record.haystack_sessions[0][0].role == "user"
    public = json.loads(Path(refs[0].shard).read_text())
    assert public == {"question": record.question, "question_date": None}


def test_the_gold_round_trips_to_the_readers_beamgold(tmp_path: Path) -> None:
    write_chat(tmp_path)
    questions = write_questions(tmp_path)
    refs = _prepare(tmp_path)
    read = read_probing_questions(questions, "100K-3").gold
    assert {r.question_id: stored_beam_gold(r.shard) for r in refs} == read
    shard = next(r.shard for r in refs if r.question_type == "event_ordering")
    ordering = stored_beam_gold(shard)
    assert ordering.rubric == ("Planning the garden", "Choosing basil", "Basil sprouting")
    assert ordering.ordering_tested[0] == "1st: Planning"
    assert ordering.extra == {"source_chat_ids": [100, 102, 200]}


def test_a_gold_row_without_a_known_ability_is_one_error_naming_it() -> None:
    row = {"question_id": "c:q", "conversation_id": "c", "ability": "guessing", "index": 0}
    with pytest.raises(BenchmarkDataError, match=r"g/1\.json: field ability: unknown BEAM"):
        beam_gold({**row, "rubric": ["x"]}, "g/1.json")


def test_the_folder_digest_follows_the_files(tmp_path: Path) -> None:
    write_chat(tmp_path)
    path = write_questions(tmp_path)
    before = folder_sha256(tmp_path / "chats")
    (tmp_path / "chats" / ".DS_Store").write_bytes(b"ignored")
    assert folder_sha256(tmp_path / "chats") == before
    path.write_text(path.read_text().replace("balcony", "terrace"))
    assert folder_sha256(tmp_path / "chats") != before


def test_source_message_ids_become_evidence_turns_and_sessions(tmp_path: Path) -> None:
    write_chat(tmp_path)
    write_questions(tmp_path)
    ordering = next(r for r in _prepare(tmp_path) if r.question_type == "event_ordering")
    record = ordering.load()
    marked = [
        (s, i)
        for s, turns in enumerate(record.haystack_sessions)
        for i, t in enumerate(turns)
        if t.has_answer
    ]
    assert marked == [(0, 0), (0, 2), (1, 0)]  # messages 100 and 102 of batch 1, 200 of batch 2
    assert [record.haystack_sessions[s][i].content for s, i in marked] == [
        "I am planning a herb garden on my balcony.",
        "Basil or mint first?",
        "The basil sprouted today.",
    ]
    assert len(record.answer_session_ids) == 2


def test_source_ids_are_read_from_lists_and_objects_of_lists() -> None:
    from lme_bench.builtin_benchmarks.beam.benchmark import source_ids

    assert source_ids([4, 60, 4]) == ("4", "60")
    assert source_ids({"first_statement": [58], "second_statement": [24, 58]}) == ("58", "24")
    assert source_ids(None) == ()
