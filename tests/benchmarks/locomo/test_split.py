"""Preparing a LoCoMo file for a run: a file per conversation and per question, public view and
gold labels apart, each question naming its conversation's build."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lme_bench.benchmarks.split import splitter_for
from lme_bench.dataset.shards import PreparedDataset, prepare_dataset
from lme_bench.dataset.views import make_view
from tests.benchmarks.locomo.samples import listed_sample, write_json


def prepare(path: Path, cache: Path, name: str | None = None) -> PreparedDataset:
    """As a run prepares its dataset (lme_bench.run.steps.prepare_questions)."""
    return prepare_dataset(path, cache, *splitter_for(name, path))


@pytest.fixture
def locomo_file(tmp_path: Path) -> Path:
    return write_json(tmp_path / "data.json", [listed_sample("conv-7"), listed_sample("conv-9")])


def test_questions_name_their_conversation_build(locomo_file: Path, tmp_path: Path) -> None:
    refs = prepare(locomo_file, tmp_path / "cache").questions
    assert [r.question_id for r in refs[:2]] == ["conv-7-q0", "conv-7-q1"]
    assert {r.build_id for r in refs} == {"conv-7", "conv-9"}
    first = [r for r in refs if r.build_id == "conv-7"]
    assert len({r.build for r in first}) == 1
    assert first[0].build.startswith("conv-7@")
    assert {r.benchmark for r in refs} == {"locomo"}
    assert [r.question_type for r in first] == [
        "multi-hop",
        "temporal",
        "open-domain",
        "single-hop",
        "adversarial",
    ]
    assert [r.is_abstention for r in first] == [False, False, False, False, True]
    assert len(list(Path(refs[0].build_shard).parent.iterdir())) == 2  # one file per build


def test_public_files_hold_the_question_alone(locomo_file: Path, tmp_path: Path) -> None:
    refs = prepare(locomo_file, tmp_path / "cache").questions
    public = json.loads(Path(refs[0].shard).read_text())
    assert public == {"question": "What instruments does Ben play?", "question_date": None}
    gold_file = Path(refs[0].shard).parent.parent / "g" / Path(refs[0].shard).name
    assert json.loads(gold_file.read_text())["evidence_ids"] == ["D2:2"]


def test_the_view_holds_both_speakers_and_no_gold(locomo_file: Path, tmp_path: Path) -> None:
    ref = prepare(locomo_file, tmp_path / "cache").questions[0]
    view, _ = make_view(ref.load())
    turns = [t.content for s in view.sessions for t in s.turns]
    assert turns[0] == "Ada: I adopted a greyhound called Pip."
    assert turns[-1] == "Ben: I started violin and clarinet."
    assert [s.date for s in view.sessions] == ["2023/05/08 (Mon) 13:56", "2023/06/19 (Mon) 10:04"]
    assert view.question_date == "2023/06/19 (Mon) 10:04"  # no date of its own: the last session's
    shown = json.dumps([view.question, view.question_date, [s.key for s in view.sessions]])
    assert "answer" not in shown and "D2" not in shown and "violin, clarinet" not in shown


def test_the_scorer_record_marks_the_evidence_turns(locomo_file: Path, tmp_path: Path) -> None:
    ref = prepare(locomo_file, tmp_path / "cache").questions[0]
    record = ref.load()
    assert record.answer == "violin, clarinet"
    assert record.haystack_session_ids == ["s000", "answer_s001"]
    marks = [[bool(t.has_answer) for t in s] for s in record.haystack_sessions]
    assert marks == [[False, False], [False, True]]


def test_a_named_benchmark_wins_and_a_rerun_reuses_the_split(
    locomo_file: Path, tmp_path: Path
) -> None:
    first = prepare(locomo_file, tmp_path / "cache", "locomo")
    again = prepare(locomo_file, tmp_path / "cache")
    assert first.questions == again.questions


def test_a_longmemeval_file_splits_as_before(tmp_path: Path) -> None:
    from lme_bench.run.steps import bundled_sample

    assert splitter_for(None, bundled_sample()) == (None, "")
    refs = prepare(bundled_sample(), tmp_path / "cache").questions
    assert {r.benchmark for r in refs} == {"longmemeval"} and not any(r.build_shard for r in refs)
    assert all(r.build == r.question_id for r in refs)


def test_a_beam_folder_is_split_by_name(tmp_path: Path) -> None:
    split, kind = splitter_for("beam", tmp_path)
    assert split is not None and kind == "beam"  # tests/benchmarks/beam/test_split.py
