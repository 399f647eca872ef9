from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from lme_bench.dataset.errors import DatasetError
from lme_bench.dataset.loader import iter_questions
from tests.factories import make_question


def test_accepts_sessions_alias_numeric_answer_and_repeated_session_ids(
    write_dataset: Callable[..., Path],
) -> None:
    q = make_question()
    q["sessions"] = q.pop("haystack_sessions")
    q["answer"] = 3
    q["haystack_session_ids"] = ["answer_4be1b6b4", "answer_4be1b6b4"]
    path = write_dataset([q, make_question("bb22cc33", answer=2.5)])
    loaded = list(iter_questions(path))
    assert [x.instance.answer for x in loaded] == ["3", "2.5"]
    assert loaded[0].instance.haystack_sessions[1][2].has_answer is True
    assert [x.index for x in loaded] == [0, 1]


def test_session_order_follows_dates_not_file_order(write_dataset: Callable[..., Path]) -> None:
    (loaded,) = iter_questions(write_dataset([make_question()]))
    assert loaded.instance.session_order() == [1, 0]


def test_content_hash_is_stable_and_changes_with_content(
    write_dataset: Callable[..., Path],
) -> None:
    a = next(iter(iter_questions(write_dataset([make_question()], "a.json"))))
    b = next(iter(iter_questions(write_dataset([make_question()], "b.json"))))
    c = next(iter(iter_questions(write_dataset([make_question(question="Dog breed?")], "c.json"))))
    assert a.content_sha256 == b.content_sha256 != c.content_sha256


def _error(path: Path) -> DatasetError:
    with pytest.raises(DatasetError) as caught:
        list(iter_questions(path))
    return caught.value


def _bad(index: int, field: str, **change: object) -> list[dict[str, object]]:
    question = make_question("cc33dd44")
    for key, value in change.items():
        if value is _DROP:
            del question[key]
        else:
            question[key] = value
    return [make_question(), question][: index + 1]


_DROP = object()


@pytest.mark.parametrize(
    ("questions", "field", "words"),
    [
        (_bad(1, "question", question=_DROP), "question", "required"),
        (_bad(1, "haystack_sessions", haystack_sessions=_DROP), "haystack_sessions", "required"),
        (_bad(1, "answer", answer=None), "answer", "string"),
        (_bad(1, "question_type", question_type="multi-hop"), "question_type", "multi-session"),
        (
            _bad(1, "haystack_dates[1]", haystack_dates=["2023/05/20 (Sat) 10:00", "May 1st"]),
            "haystack_dates[1]",
            "unparsable date",
        ),
        (_bad(1, "question_date", question_date="2023-13-01"), "question_date", "unparsable"),
        (
            _bad(
                1,
                "haystack_sessions[0][1].role",
                haystack_sessions=[
                    [{"role": "user", "content": "x"}, {"role": "bot", "content": "y"}],
                    [{"role": "user", "content": "z"}],
                ],
            ),
            "haystack_sessions[0][1].role",
            "'user' or 'assistant'",
        ),
        (
            _bad(1, "haystack_session_ids", haystack_session_ids="answer_1"),
            "haystack_session_ids",
            "list",
        ),
    ],
)
def test_bad_question_names_file_question_and_field(
    write_dataset: Callable[..., Path], questions: list[object], field: str, words: str
) -> None:
    path = write_dataset(questions)
    error = _error(path)
    text = str(error)
    assert str(path) in text
    assert "question #1 (question_id 'cc33dd44')" in text
    assert f"field {field}" in text
    assert words in text


def test_parallel_lists_of_different_lengths(write_dataset: Callable[..., Path]) -> None:
    question = make_question("cc33dd44", haystack_dates=["2023/05/20 (Sat) 10:00"])
    text = str(_error(write_dataset([question])))
    assert "question #0 (question_id 'cc33dd44')" in text
    assert "haystack_dates=1" in text and "haystack_sessions=2" in text


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        (b"", "empty"),
        (b"   \n", "empty"),
        (b"not json at all", "not a JSON array"),
        (b'{"question_id": "x"}', "a JSON object"),
        (b"[]", "no questions"),
        (b"[1, 2]", "question #0: expected a JSON object"),
        (json.dumps([make_question()]).encode()[:-40], "truncated"),
        (b'[{"question_id": "\xff\xfe"}]', "UTF-8"),
    ],
)
def test_bad_file_names_the_file(
    write_dataset: Callable[..., Path], raw: bytes, words: str
) -> None:
    path = write_dataset(None, raw=raw)
    text = str(_error(path))
    assert text.startswith(str(path))
    assert words in text


def test_duplicate_question_ids(write_dataset: Callable[..., Path]) -> None:
    text = str(_error(write_dataset([make_question(), make_question()])))
    assert "question #1 (question_id 'aa11bb22')" in text
    assert "duplicate question_id, first seen at question #0" in text


def test_missing_file(tmp_path: Path) -> None:
    assert "no such file" in str(_error(tmp_path / "nope.json"))


def test_streams_instead_of_loading_the_whole_file(write_dataset: Callable[..., Path]) -> None:
    # A bad question late in the file is only reached after earlier ones were yielded.
    path = write_dataset([make_question(), make_question("bb22cc33"), {"question_id": "zz"}])
    stream = iter_questions(path)
    assert next(stream).instance.question_id == "aa11bb22"
    assert next(stream).instance.question_id == "bb22cc33"
    with pytest.raises(DatasetError, match="question #2"):
        next(stream)
