from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, replace
from pathlib import Path

import pytest

from lme_bench.dataset.errors import DatasetError
from lme_bench.dataset.models import Instance
from lme_bench.dataset.shards import LoadedQuestions, prepare_dataset, select_questions
from lme_bench.dataset.views import make_view, session_keys
from tests.factories import make_question


def test_view_orders_sessions_by_date_with_opaque_keys_and_no_gold() -> None:
    instance = Instance.model_validate(make_question())
    view, keys = make_view(instance)
    assert [s.key for s in view.sessions] == ["s000", "s001"]
    assert [s.date for s in view.sessions] == ["2023/05/01 (Mon) 09:15", "2023/05/20 (Sat) 10:00"]
    assert keys.position("s000") == 1 and keys.position("s001") == 0
    dumped = json.dumps(asdict(view))
    for gold in ("has_answer", "answer_4be1b6b4", "sharegpt_Ab3dE9x_0", 'golden retriever"'):
        assert gold not in dumped
    assert "answer" not in {f for f in view.__dataclass_fields__}
    assert view.question == "What breed is my dog?"
    assert session_keys(instance) == keys


def test_loaded_questions_are_shared_within_a_byte_budget(
    write_dataset: Callable[..., Path], tmp_path: Path
) -> None:
    ids = ["aa11bb22", "bb22cc33", "cc33dd44"]
    refs = prepare_dataset(write_dataset([make_question(q) for q in ids]), tmp_path).questions
    size = max(Path(r.shard).stat().st_size for r in refs)
    loaded = LoadedQuestions(budget=2 * size)
    first = [loaded.get(r.shard, r.content_sha256) for r in refs[:2]]
    assert [i.question_id for i in first] == ids[:2]
    assert loaded.get(refs[0].shard, refs[0].content_sha256) is first[0]  # parsed once
    loaded.get(refs[2].shard, refs[2].content_sha256)  # over budget: the oldest use goes
    assert loaded.get(refs[1].shard, refs[1].content_sha256) is not first[1]
    assert loaded.get(refs[0].shard, refs[0].content_sha256) == first[0]
    other = loaded.get(refs[0].shard, "another content hash")  # a key of its own
    assert other == first[0] and other is not loaded.get(refs[0].shard, refs[0].content_sha256)


def test_prepare_splits_once_and_reuses(write_dataset: Callable[..., Path], tmp_path: Path) -> None:
    path = write_dataset([make_question(), make_question("bb22cc33_abs")])
    cache = tmp_path / "cache"
    first = prepare_dataset(path, cache)
    assert [r.question_id for r in first.questions] == ["aa11bb22", "bb22cc33_abs"]
    assert first.questions[1].is_abstention and first.questions[0].n_turns == 6
    assert first.questions[0].load() == Instance.model_validate(make_question())
    shard = Path(first.questions[0].shard)
    stamp = shard.stat().st_mtime_ns
    again = prepare_dataset(path, cache)
    assert again == first and shard.stat().st_mtime_ns == stamp
    assert [r.question_id for r in select_questions(first, ["bb22cc33_abs"])] == ["bb22cc33_abs"]
    assert len(select_questions(first, limit=1)) == 1
    with pytest.raises(DatasetError, match=r"unknown question id.*nope"):
        select_questions(first, ["nope"])


def test_failed_split_leaves_no_folders(write_dataset: Callable[..., Path], tmp_path: Path) -> None:
    path = write_dataset([make_question(), make_question("x", question_type="bogus")])
    cache = tmp_path / "results" / ".cache" / "datasets"
    with pytest.raises(DatasetError, match="question_type"):
        prepare_dataset(path, cache)
    assert not (tmp_path / "results").exists()


def test_known_release_is_recognised_by_its_bytes(tmp_path: Path) -> None:
    from lme_bench.dataset.known import KNOWN_RELEASES, describe_release

    sha = next(iter(KNOWN_RELEASES))
    assert "cleaned" in describe_release(sha, tmp_path / "x.json", tmp_path / "s.json")
    assert "unrecognised" in describe_release("0" * 64, tmp_path / "x.json", tmp_path / "s.json")


def test_a_longmemeval_question_is_its_own_build(
    write_dataset: Callable[..., Path], tmp_path: Path
) -> None:
    path = write_dataset([make_question("q1"), make_question("q2")])
    refs = prepare_dataset(path, tmp_path).questions
    assert [(r.build_id, r.build) for r in refs] == [("q1", "q1"), ("q2", "q2")]
    index = json.loads(next(tmp_path.glob("*/index.json")).read_text())
    for row in index["questions"]:  # a split made before builds reads as one build a question
        del row["build_id"], row["build_sha256"]
    (next(tmp_path.glob("*/index.json"))).write_text(json.dumps(index))
    assert [r.build for r in prepare_dataset(path, tmp_path).questions] == ["q1", "q2"]


def test_a_shared_build_is_named_by_its_id_and_content(
    write_dataset: Callable[..., Path], tmp_path: Path
) -> None:
    [ref] = prepare_dataset(write_dataset([make_question("q1")]), tmp_path).questions
    shared = replace(ref, build_id="conv-26", build_sha256="ab" * 32)
    changed = replace(shared, build_sha256="cd" * 32)
    assert shared.build.startswith("conv-26@") and shared.build != changed.build
