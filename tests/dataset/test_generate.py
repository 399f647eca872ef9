"""Tests for the LongMemEval-format scale generator."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from lme_bench.dataset import generate as gen
from lme_bench.dataset.generate import GenerationStats, default_source, generate_dataset

DATE_FMT = "%Y/%m/%d (%a) %H:%M"
FILLER_ID = re.compile(r"^(?:[0-9a-f]{8}_\d+|sharegpt_[A-Za-z0-9]{7}_\d+|ultrachat_\d{6})$")


def _session(texts: list[str], answer_turns: tuple[int, ...] = ()) -> list[dict[str, Any]]:
    return [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "content": text,
            "has_answer": i in answer_turns,
        }
        for i, text in enumerate(texts)
    ]


SOURCE: list[dict[str, Any]] = [
    {
        "question_id": "3f9a21c7",
        "question_type": "single-session-user",
        "question": "What breed is my dog?",
        "answer": "a beagle",
        "question_date": "2023/05/30 (Tue) 23:40",
        "haystack_session_ids": ["sharegpt_abcdefg_0", "answer_3f9a21c7_1", "ultrachat_123456"],
        "haystack_dates": [
            "2023/05/01 (Mon) 10:00",
            "2023/05/20 (Sat) 09:15",
            "2023/05/21 (Sun) 11:00",
        ],
        "haystack_sessions": [
            [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
            _session(["I just adopted a beagle named Max.", "Congratulations!"], (0,)),
            [{"role": "user", "content": "source filler"}],
        ],
        "answer_session_ids": ["answer_3f9a21c7_1"],
    },
    {
        "question_id": "gpt4_2655b836_abs",
        "question_type": "temporal-reasoning",
        "question": "How many days passed between my trip to Mars and my haircut?",
        "answer": "The information provided is not enough: you never mentioned a trip to Mars.",
        "question_date": "2023/04/10 (Mon) 08:00",
        "haystack_session_ids": ["answer_aa11_1", "e3b4d6a2_2", "answer_aa11_2"],
        "haystack_dates": [
            "2023/03/02 (Thu) 14:30",
            "2023/03/03 (Fri) 10:00",
            "2023/03/20 (Mon) 16:45",
        ],
        "haystack_sessions": [
            _session(["I got a haircut today.", "Nice!", "Thanks."], (0,)),
            [{"role": "user", "content": "another source filler"}],
            _session(["I went to the beach today.", "Sounds fun."], (0,)),
        ],
        "answer_session_ids": ["answer_aa11_1", "answer_aa11_2"],
    },
    {
        "question_id": "b1c2d3e4",
        "question_type": "knowledge-update",
        "question": "How many bikes do I own now?",
        "answer": 3,
        "question_date": "2023/11/05 (Sun) 19:20",
        # Not sorted by date, like the oracle file.
        "haystack_session_ids": ["answer_b1_1", "answer_b1_2"],
        "haystack_dates": ["2023/09/25 (Mon) 10:00", "2022/01/05 (Wed) 12:00"],
        "sessions": [  # the alternative key some loaders see
            _session(["I bought a third bike.", "Cool.", "Storage tips?", "Wall hooks."], (0,)),
            _session(["I have two bikes.", "Great."], (0,)),
        ],
        "answer_session_ids": ["answer_b1_1", "answer_b1_2"],
    },
]


def _source_sessions(src: dict[str, Any]) -> list[list[dict[str, Any]]]:
    sessions: list[list[dict[str, Any]]] = src.get("haystack_sessions") or src["sessions"]
    return sessions


@pytest.fixture(scope="module")
def source_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("source") / "source.json"
    path.write_text(json.dumps(SOURCE), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def s_run(
    tmp_path_factory: pytest.TempPathFactory, source_file: Path
) -> tuple[Path, GenerationStats, list[dict[str, Any]]]:
    out = tmp_path_factory.mktemp("s_out") / "s.json"
    stats = generate_dataset(out, n_questions=5, scale="s", seed=7, source=source_file)
    with out.open(encoding="utf-8") as fh:
        data = json.load(fh)
    return out, stats, data


def _parse(date: str) -> datetime:
    when = datetime.strptime(date, DATE_FMT)
    weekday = date.split("(")[1][:3]
    assert when.strftime("%a") == weekday, f"wrong weekday in {date!r}"
    return when


def test_output_is_array_with_parallel_lists(
    s_run: tuple[Path, GenerationStats, list[dict[str, Any]]],
) -> None:
    _, _, data = s_run
    assert isinstance(data, list)
    assert len(data) == 5
    for q in data:
        assert set(q) == {
            "question_id",
            "question_type",
            "question",
            "answer",
            "question_date",
            "haystack_session_ids",
            "haystack_dates",
            "haystack_sessions",
            "answer_session_ids",
        }
        n = len(q["haystack_session_ids"])
        assert len(q["haystack_dates"]) == n
        assert len(q["haystack_sessions"]) == n


def test_s_scale_sizes(s_run: tuple[Path, GenerationStats, list[dict[str, Any]]]) -> None:
    _, _, data = s_run
    turns_per_question = []
    for q in data:
        assert 38 <= len(q["haystack_sessions"]) <= 62
        turns_per_question.append(sum(len(s) for s in q["haystack_sessions"]))
    mean_turns = sum(turns_per_question) / len(turns_per_question)
    assert 400 <= mean_turns <= 600


def test_stats_match_file(s_run: tuple[Path, GenerationStats, list[dict[str, Any]]]) -> None:
    out, stats, data = s_run
    assert stats.questions == 5
    assert stats.sessions == sum(len(q["haystack_sessions"]) for q in data)
    assert stats.turns == sum(len(s) for q in data for s in q["haystack_sessions"])
    assert stats.bytes == out.stat().st_size
    assert stats.seconds > 0
    # The streamed file is exactly what json.dumps would write for the whole list.
    assert out.read_text(encoding="utf-8") == json.dumps(data)


def test_question_fields_and_evidence_preserved(
    s_run: tuple[Path, GenerationStats, list[dict[str, Any]]],
) -> None:
    _, _, data = s_run
    for i, q in enumerate(data):
        src = SOURCE[i % len(SOURCE)]
        for key in ("question_type", "question", "answer", "question_date", "answer_session_ids"):
            assert q[key] == src[key]
        src_sessions = dict(zip(src["haystack_session_ids"], _source_sessions(src), strict=True))
        src_dates = dict(zip(src["haystack_session_ids"], src["haystack_dates"], strict=True))
        ids = q["haystack_session_ids"]
        assert set(q["answer_session_ids"]) <= set(ids)
        for sid in src["answer_session_ids"]:
            pos = ids.index(sid)
            assert q["haystack_sessions"][pos] == src_sessions[sid]
            assert q["haystack_dates"][pos] == src_dates[sid]
        # Only evidence sessions carry has_answer; source fillers are dropped.
        for sid, session in zip(ids, q["haystack_sessions"], strict=True):
            has_flags = any("has_answer" in turn for turn in session)
            assert has_flags == (sid in src["answer_session_ids"])
        assert "sharegpt_abcdefg_0" not in ids
        assert "e3b4d6a2_2" not in ids


def test_dates_sorted_valid_and_in_the_year_before(
    s_run: tuple[Path, GenerationStats, list[dict[str, Any]]],
) -> None:
    _, _, data = s_run
    for q in data:
        asked = _parse(q["question_date"])
        dates = [_parse(d) for d in q["haystack_dates"]]
        assert dates == sorted(dates)
        for sid, when in zip(q["haystack_session_ids"], dates, strict=True):
            if sid not in q["answer_session_ids"]:
                assert asked - timedelta(days=366) <= when < asked


def test_question_ids(s_run: tuple[Path, GenerationStats, list[dict[str, Any]]]) -> None:
    _, _, data = s_run
    ids = [q["question_id"] for q in data]
    assert len(set(ids)) == len(ids)
    assert ids == [
        "3f9a21c7_g0000",
        "gpt4_2655b836_g0001_abs",
        "b1c2d3e4_g0002",
        "3f9a21c7_g0003",
        "gpt4_2655b836_g0004_abs",
    ]
    for q in data:
        assert q["question_id"].count("_abs") == (1 if q["question_id"].endswith("_abs") else 0)


def test_filler_sessions(s_run: tuple[Path, GenerationStats, list[dict[str, Any]]]) -> None:
    _, _, data = s_run
    contents: list[str] = []
    kinds: set[str] = set()
    for q in data:
        ids = q["haystack_session_ids"]
        assert len(set(ids)) == len(ids)
        for sid, session in zip(ids, q["haystack_sessions"], strict=True):
            if sid in q["answer_session_ids"]:
                continue
            assert FILLER_ID.match(sid), sid
            assert "answer" not in sid
            kinds.add(sid.split("_")[0] if sid.startswith(("sharegpt_", "ultrachat_")) else "hex")
            assert session and len(session) % 2 == 0
            for j, turn in enumerate(session):
                assert set(turn) == {"role", "content"}
                assert turn["role"] == ("user" if j % 2 == 0 else "assistant")
                words = len(turn["content"].split())
                if turn["role"] == "user":
                    assert 10 <= words <= 60, turn["content"]
                else:
                    assert 30 <= words <= 150, turn["content"]
                contents.append(turn["content"])
    assert kinds == {"hex", "sharegpt", "ultrachat"}
    # Varied text: nearly all turns distinct and a large vocabulary.
    assert len(set(contents)) > 0.99 * len(contents)
    vocab = {w.strip(".,?!:;").lower() for c in contents for w in c.split()}
    assert len(vocab) > 1000


def test_m_scale(tmp_path: Path, source_file: Path) -> None:
    out = tmp_path / "m.json"
    stats = generate_dataset(out, n_questions=1, scale="m", source=source_file)
    with out.open(encoding="utf-8") as fh:
        data = json.load(fh)
    assert len(data) == 1
    assert 450 <= len(data[0]["haystack_sessions"]) <= 550
    assert stats.sessions == len(data[0]["haystack_sessions"])


def test_deterministic(tmp_path: Path, source_file: Path) -> None:
    a, b, c = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"
    generate_dataset(a, n_questions=3, scale="s", seed=1, source=source_file)
    generate_dataset(b, n_questions=3, scale="s", seed=1, source=source_file)
    generate_dataset(c, n_questions=3, scale="s", seed=2, source=source_file)
    assert a.read_bytes() == b.read_bytes()
    assert a.read_bytes() != c.read_bytes()


def test_prefix_stable(tmp_path: Path, source_file: Path) -> None:
    """Question i does not depend on how many questions are generated."""
    short, long = tmp_path / "short.json", tmp_path / "long.json"
    generate_dataset(short, n_questions=2, scale="s", seed=3, source=source_file)
    generate_dataset(long, n_questions=4, scale="s", seed=3, source=source_file)
    assert json.loads(long.read_text())[:2] == json.loads(short.read_text())


def test_no_temp_file_left(tmp_path: Path, source_file: Path) -> None:
    out_dir = tmp_path / "out"
    out = out_dir / "data.json"
    generate_dataset(out, n_questions=2, scale="s", source=source_file)
    assert [p.name for p in out_dir.iterdir()] == ["data.json"]


def test_error_leaves_no_partial_file(
    tmp_path: Path, source_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "data.json"
    out.write_text("previous", encoding="utf-8")
    real_build = gen._build_question

    def failing_build(*args: Any) -> Any:
        if args[1] == 2:
            raise RuntimeError("boom")
        return real_build(*args)

    monkeypatch.setattr(gen, "_build_question", failing_build)
    with pytest.raises(RuntimeError, match="boom"):
        generate_dataset(out, n_questions=4, scale="s", source=source_file)
    assert [p.name for p in tmp_path.iterdir()] == ["data.json"]
    assert out.read_text(encoding="utf-8") == "previous"


def test_missing_source(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        generate_dataset(
            tmp_path / "x.json", n_questions=1, scale="s", source=tmp_path / "missing.json"
        )
    assert list(tmp_path.iterdir()) == []


def test_invalid_arguments(tmp_path: Path, source_file: Path) -> None:
    with pytest.raises(ValueError):
        generate_dataset(tmp_path / "x.json", n_questions=1, scale="l", source=source_file)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        generate_dataset(tmp_path / "x.json", n_questions=-1, scale="s", source=source_file)
    bad = tmp_path / "bad.json"
    broken = dict(SOURCE[0], answer_session_ids=["answer_not_there"])
    bad.write_text(json.dumps([broken]), encoding="utf-8")
    with pytest.raises(ValueError, match="answer_not_there"):
        generate_dataset(tmp_path / "x.json", n_questions=1, scale="s", source=bad)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.json"]


def test_zero_questions(tmp_path: Path, source_file: Path) -> None:
    out = tmp_path / "empty.json"
    stats = generate_dataset(out, n_questions=0, scale="s", source=source_file)
    assert out.read_text(encoding="utf-8") == "[]"
    assert (stats.questions, stats.sessions, stats.turns) == (0, 0, 0)


@pytest.mark.skipif(not default_source().is_file(), reason="bundled sample not written yet")
def test_default_source(tmp_path: Path) -> None:
    with default_source().open("r", encoding="utf-8") as fh:
        sample = json.load(fh)
    out = tmp_path / "default.json"
    n = len(sample) + 1
    stats = generate_dataset(out, n_questions=n, scale="s")
    with out.open(encoding="utf-8") as fh:
        data = json.load(fh)
    assert len(data) == n == stats.questions
    ids = [q["question_id"] for q in data]
    assert len(set(ids)) == n
    for i, q in enumerate(data):
        src = sample[i % len(sample)]
        assert q["question"] == src["question"]
        assert q["answer"] == src["answer"]
        assert q["question_id"].endswith("_abs") == src["question_id"].endswith("_abs")
        assert q["question_id"].startswith(src["question_id"].removesuffix("_abs") + "_g")
        assert set(q["answer_session_ids"]) <= set(q["haystack_session_ids"])
        dates = [_parse(d) for d in q["haystack_dates"]]
        assert dates == sorted(dates)
        assert 38 <= len(q["haystack_sessions"]) <= 62
