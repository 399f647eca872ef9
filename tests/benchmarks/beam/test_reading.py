"""Reading BEAM chats and probing questions into records; the public side carries no gold."""

from __future__ import annotations

import copy
import dataclasses
import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from lme_bench.benchmarks.protocol import BuildTurn
from lme_bench.builtin_benchmarks.beam.chat import iter_sessions, parse_anchor, read_conversation
from lme_bench.builtin_benchmarks.beam.errors import BeamFormatError
from lme_bench.builtin_benchmarks.beam.models import ABILITIES, ProbingQuestion, Turn
from lme_bench.builtin_benchmarks.beam.questions import read_probing_questions
from lme_bench.dataset.errors import DatasetError
from tests.benchmarks.beam.samples import CHAT, QUESTIONS, batch, write_chat, write_questions


def test_a_chat_becomes_sessions_in_order_with_dates_and_turns(tmp_path: Path) -> None:
    conversation = read_conversation(write_chat(tmp_path))
    assert conversation.conversation_id == "100K-3"
    assert [s.date for s in conversation.sessions] == [date(2024, 3, 15), date(2024, 4, 2)]
    first = conversation.sessions[0]
    assert [t.role for t in first.turns] == ["user", "assistant"] * 3
    assert first.turns[0] == Turn("user", "I am planning a herb garden on my balcony.", 100)
    assert first.turns[-1].text == "It grows fast."
    assert conversation.turn_count == 8


def test_the_10m_layout_of_plans_reads_as_one_conversation(tmp_path: Path) -> None:
    plans = [
        {"plan-0": CHAT},
        {"plan-1": [batch(3, "May-1-2024", [[("user", "Hi"), ("assistant", "Hello")]])]},
    ]
    conversation = read_conversation(write_chat(tmp_path, "10M", 1, plans))
    assert conversation.conversation_id == "10M-1"
    assert [s.index for s in conversation.sessions] == [0, 1, 2]
    assert conversation.sessions[-1].date == date(2024, 5, 1)


def test_sessions_stream_one_batch_at_a_time(tmp_path: Path) -> None:
    path = write_chat(tmp_path, data=[*CHAT, {"turns": "broken"}])
    sessions = iter_sessions(path)
    assert next(sessions).index == 0
    assert next(sessions).index == 1
    with pytest.raises(BeamFormatError, match="turns is a str"):
        next(sessions)


def test_a_batch_level_anchor_is_used_when_set(tmp_path: Path) -> None:
    data = copy.deepcopy(CHAT)
    data[1]["time_anchor"] = "June-30-2024"
    assert read_conversation(write_chat(tmp_path, data=data)).sessions[1].date == date(2024, 6, 30)


@pytest.mark.parametrize("text", ["March-15-2024", "Mar-15-2024", "2024-03-15"])
def test_time_anchors(text: str) -> None:
    assert parse_anchor(text) == date(2024, 3, 15)


def _chat_with(change: Any) -> list[dict[str, Any]]:
    data = copy.deepcopy(CHAT)
    change(data)
    return data


def _set(data: Any, path: tuple[Any, ...], value: Any) -> None:
    for key in path[:-1]:
        data = data[key]
    if value is _DELETE:
        del data[path[-1]]
    else:
        data[path[-1]] = value


_DELETE = object()
BAD_CHATS = [
    ((1, "turns", 0, 1, "role"), "system", "field batch[1].turns[0][1].role", "role 'system'"),
    ((0, "turns", 1, 2, "role"), _DELETE, "field batch[0].turns[1][2].role", "role missing"),
    ((0, "turns", 0, 0, "content"), 42, "field batch[0].turns[0][0].content", "content is a int"),
    (
        (0, "turns", 0, 0, "time_anchor"),
        "Someday",
        "field batch[0].turns[0][0].time_anchor",
        "unparsable time anchor 'Someday'",
    ),
    ((1, "turns", 0, 0, "time_anchor"), _DELETE, "field batch[1]", "no time anchor"),
    ((1, "turns"), _DELETE, "field batch[1].turns", "turns is missing"),
    ((0, "turns", 1), {"role": "user"}, "field batch[0].turns[1]", "expected a list of messages"),
]


@pytest.mark.parametrize(("where", "value", "field", "problem"), BAD_CHATS)
def test_a_bad_chat_names_file_chat_and_field(
    tmp_path: Path, where: tuple[Any, ...], value: Any, field: str, problem: str
) -> None:
    path = write_chat(tmp_path, data=_chat_with(lambda d: _set(d, where, value)))
    with pytest.raises(BeamFormatError) as caught:
        read_conversation(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: chat 100K-3: {field}: ")
    assert problem in message
    assert isinstance(caught.value, DatasetError)  # caught wherever dataset errors are


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "the file is empty"),
        ('{"turns": []}', "expected a JSON array of batches"),
        ("[]", "holds no batches"),
        (json.dumps(CHAT)[:300], "invalid JSON"),
        ('[{"plan-0": 3}]', "expected a batch"),
    ],
)
def test_a_chat_file_that_is_no_chat(tmp_path: Path, text: str, problem: str) -> None:
    path = write_chat(tmp_path, data=text)
    with pytest.raises(BeamFormatError, match=problem) as caught:
        read_conversation(path)
    assert str(caught.value).startswith(f"{path}: chat 100K-3")


def test_a_chat_outside_the_tier_folders_needs_its_id(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(CHAT))
    with pytest.raises(BeamFormatError, match="give its conversation id"):
        read_conversation(path)
    assert read_conversation(path, "mine").conversation_id == "mine"


def test_probing_questions_split_into_public_questions_and_gold(tmp_path: Path) -> None:
    probing = read_probing_questions(write_questions(tmp_path))
    assert probing.conversation_id == "100K-3"
    assert len(probing.questions) == 5 == len(probing.gold)
    texts = {q.question: probing.gold_for(q) for q in probing.questions}
    ordering = texts["In which order did I bring up the garden topics?"]
    assert ordering.ability == "event_ordering"
    assert ordering.rubric == ("Planning the garden", "Choosing basil", "Basil sprouting")
    assert ordering.ordering_tested[0] == "1st: Planning"
    assert ordering.extra == {"source_chat_ids": [100, 102, 200]}
    assert texts["What soil brand did I buy?"].reference_answer.startswith("There is no")  # type: ignore[union-attr]
    assert texts["Show me a watering schedule."].reference_answer == "A table."
    where = texts["Where is my garden?"]
    assert (where.ability, where.index, where.reference_answer) == (
        "information_extraction",
        1,
        "On the balcony",
    )


def test_the_public_side_carries_no_gold(tmp_path: Path) -> None:
    probing = read_probing_questions(write_questions(tmp_path))
    assert [f.name for f in dataclasses.fields(ProbingQuestion)] == [
        "conversation_id",
        "key",
        "question",
    ]
    # a message's id (what questions name as evidence) stays on the reader's side: a build's
    # turns, all the memory gets, hold index, role, text and speaker only
    assert [f.name for f in dataclasses.fields(Turn)] == ["role", "text", "message_id"]
    built = [f.name for f in dataclasses.fields(BuildTurn)]
    assert built == ["index", "role", "content", "speaker"]
    public = repr(probing.questions)  # (answers may well occur in the chat itself)
    for items in QUESTIONS.values():
        for raw in items:
            for name, value in raw.items():
                if name == "question":
                    continue
                for text in value if isinstance(value, list) else [value]:
                    if isinstance(text, str):  # (numbers such as chat ids occur in any text)
                        assert text not in public, (name, text)
    for question in probing.questions:
        assert not any(ability in question.question_id for ability in ABILITIES)
    chat = repr(read_conversation(write_chat(tmp_path)))
    assert "main_question" not in chat and "'1,0'" not in chat  # generation metadata dropped
    # the order of the public questions does not follow the abilities either
    keys = [q.key for q in probing.questions]
    assert keys == sorted(keys)


def test_keys_are_stable_distinct_and_made_from_public_text_only(tmp_path: Path) -> None:
    first = read_probing_questions(write_questions(tmp_path))
    again = read_probing_questions(write_questions(tmp_path))
    assert [q.question_id for q in first.questions] == [q.question_id for q in again.questions]
    moved = copy.deepcopy(QUESTIONS)  # the same question under another ability
    moved["abstention"].append(moved["information_extraction"].pop())
    moved_keys = {
        q.key for q in read_probing_questions(write_questions(tmp_path, data=moved)).questions
    }
    assert moved_keys == {q.key for q in first.questions}
    twice = copy.deepcopy(QUESTIONS)
    twice["abstention"].append(copy.deepcopy(twice["abstention"][0]))
    keys = [q.key for q in read_probing_questions(write_questions(tmp_path, data=twice)).questions]
    assert len(set(keys)) == len(keys) == 6
    assert sum(key.endswith("-2") for key in keys) == 1


def _questions_with(ability: str, index: int, field: str, value: Any) -> dict[str, Any]:
    data = copy.deepcopy(QUESTIONS)
    if value is _DELETE:
        del data[ability][index][field]
    else:
        data[ability][index][field] = value
    return data


BAD_QUESTIONS = [
    ("information_extraction", 1, "rubric", "['a', 'b']", "field rubric", "rubric is a string"),
    ("information_extraction", 0, "rubric", [], "field rubric", "rubric is empty"),
    ("abstention", 0, "rubric", _DELETE, "field rubric", "rubric is missing"),
    ("abstention", 0, "rubric", ["fine", 3], "field rubric[1]", "expected non-empty text"),
    ("event_ordering", 0, "question", _DELETE, "field question", "missing or empty"),
    ("event_ordering", 0, "answer", ["a"], "field answer", "expected text, got list"),
    ("abstention", 0, "ideal_response", 1, "field ideal_response", "expected text, got int"),
]


@pytest.mark.parametrize(("ability", "index", "field", "value", "named", "problem"), BAD_QUESTIONS)
def test_a_bad_question_names_file_chat_question_and_field(
    tmp_path: Path, ability: str, index: int, field: str, value: Any, named: str, problem: str
) -> None:
    path = write_questions(tmp_path, data=_questions_with(ability, index, field, value))
    with pytest.raises(BeamFormatError) as caught:
        read_probing_questions(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: chat 100K-3: question {ability}[{index}]: {named}: ")
    assert problem in message


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ({"memory_magic": []}, "unknown ability 'memory_magic'"),
        ({"abstention": {}}, "expected a list of questions"),
        ({"abstention": ["text"]}, "expected a question object"),
        ([], "expected an object of abilities"),
        ({}, "no probing questions"),
        ("{", "invalid JSON at line 1"),
    ],
)
def test_a_probing_file_that_is_not_one(tmp_path: Path, data: Any, problem: str) -> None:
    path = write_questions(tmp_path, data=data)
    with pytest.raises(BeamFormatError, match=problem) as caught:
        read_probing_questions(path)
    assert str(caught.value).startswith(f"{path}: chat 100K-3")


def test_a_missing_probing_file(tmp_path: Path) -> None:
    path = tmp_path / "chats" / "1M" / "9" / "probing_questions" / "probing_questions.json"
    with pytest.raises(BeamFormatError, match="no such file"):
        read_probing_questions(path)
