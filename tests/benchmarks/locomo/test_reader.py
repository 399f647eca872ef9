from __future__ import annotations

import json
import zipfile
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from lme_bench.builtin_benchmarks.locomo.errors import LocomoDataError
from lme_bench.builtin_benchmarks.locomo.reader import iter_samples, load_samples
from lme_bench.builtin_benchmarks.locomo.records import Sample
from tests.benchmarks.locomo.samples import conversation_file, edited, listed_sample, write_json


def _check_sample(sample: Sample, sample_id: str) -> None:
    conversation = sample.conversation
    assert conversation.conversation_id == sample_id
    assert (conversation.speaker_a, conversation.speaker_b) == ("Ada", "Ben")
    assert [s.number for s in conversation.sessions] == [1, 2]
    assert [s.date for s in conversation.sessions] == [
        datetime(2023, 5, 8, 13, 56),
        datetime(2023, 6, 19, 10, 4),
    ]
    assert conversation.sessions[0].date_time == "1:56 pm on 8 May, 2023"
    turns = conversation.turns()
    assert [t.dia_id for t in turns] == ["D1:1", "D1:2", "D2:1", "D2:2"]
    assert [t.speaker for t in turns] == ["Ada", "Ben", "Ada", "Ben"]
    assert (
        turns[1].text
        == "Lovely! Here is my garden. [shares a photo: a photo of tomatoes on a vine]"
    )
    assert turns[0].text == "I adopted a greyhound called Pip."
    assert [q.question_id for q in sample.questions] == [f"{sample_id}-q{i}" for i in range(5)]
    assert [q.index for q in sample.questions] == list(range(5))
    assert {q.conversation_id for q in sample.questions} == {sample_id}
    assert sample.questions[3].text == "What is Ada's dog called?"
    assert [g.category for g in sample.gold] == [1, 2, 3, 4, 5]
    assert [g.answer for g in sample.gold] == [
        "violin, clarinet",
        "2023",
        "Likely no; she has a dog",
        "Pip",
        None,
    ]
    assert sample.gold[4].adversarial_answer == "Pip"
    assert sample.gold[0].evidence == ("D2:2",) and sample.gold[4].evidence == ()
    assert sample.gold_for(f"{sample_id}-q1").answer == "2023"


def test_reads_the_list_layout(tmp_path: Path) -> None:
    path = write_json(
        tmp_path / "locomo10.json", [listed_sample("conv-7"), listed_sample("conv-9")]
    )
    samples = load_samples(path)
    assert [s.conversation.conversation_id for s in samples] == ["conv-7", "conv-9"]
    _check_sample(samples[0], "conv-7")


def test_reads_a_folder_of_conversation_files_in_number_order(tmp_path: Path) -> None:
    for name in ("30", "7"):
        write_json(tmp_path / f"{name}.json", conversation_file())
    samples = load_samples(tmp_path)
    assert [s.conversation.conversation_id for s in samples] == ["conv-7", "conv-30"]
    _check_sample(samples[0], "conv-7")


def test_reads_the_zip_and_one_conversation_file_alike(tmp_path: Path) -> None:
    archive = tmp_path / "locomo10.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        handle.writestr("data/dialogs/7.json", json.dumps(conversation_file()))
        handle.writestr("__MACOSX/data/dialogs/._7.json", "junk")
    (from_zip,) = load_samples(archive)
    (from_file,) = load_samples(write_json(tmp_path / "7.json", conversation_file()))
    _check_sample(from_zip, "conv-7")
    assert from_zip == from_file


def test_both_layouts_give_the_same_records(tmp_path: Path) -> None:
    (listed,) = load_samples(write_json(tmp_path / "all.json", [listed_sample("conv-7")]))
    (single,) = load_samples(write_json(tmp_path / "7.json", conversation_file()))
    assert listed == single


def test_a_conversation_file_keeps_its_own_sample_id_and_skips_empty_sessions(
    tmp_path: Path,
) -> None:
    raw = conversation_file()
    raw["sample_id"] = "talk-a"
    raw["session_3"] = []
    (sample,) = load_samples(write_json(tmp_path / "x.json", raw))
    assert sample.conversation.conversation_id == "talk-a"
    assert [s.number for s in sample.conversation.sessions] == [1, 2]


def test_streams_one_sample_at_a_time(tmp_path: Path) -> None:
    broken = listed_sample("conv-2")
    broken["qa"][0]["category"] = 9
    path = write_json(tmp_path / "l.json", [listed_sample("conv-1"), broken])
    samples = iter_samples(path)
    assert next(samples).conversation.conversation_id == "conv-1"
    with pytest.raises(LocomoDataError, match="conv-2"):
        next(samples)


def _error(tmp_path: Path, value: Any, name: str = "locomo10.json") -> LocomoDataError:
    path = tmp_path / name
    path.write_text(value if isinstance(value, str) else json.dumps(value), encoding="utf-8")
    with pytest.raises(LocomoDataError) as caught:
        load_samples(path)
    return caught.value


def _listed_with(change: Any) -> list[dict[str, Any]]:
    sample = edited(listed_sample("conv-3"))
    change(sample)
    return [sample]


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        (
            lambda s: s["conversation"]["session_1"][0].pop("speaker"),
            "conversation.session_1[0].speaker",
            "missing",
        ),
        (
            lambda s: s["conversation"]["session_2"][1].update(dia_id="D2:1"),
            "conversation.session_2[1].dia_id",
            "duplicate",
        ),
        (
            lambda s: s["conversation"]["session_2"][0].update(text=None),
            "conversation.session_2[0].text",
            "string",
        ),
        (
            lambda s: s["conversation"]["session_1"][1].update(blip_caption=3),
            "conversation.session_1[1].blip_caption",
            "string",
        ),
        (
            lambda s: s["conversation"].update(session_2_date_time="sometime in June"),
            "conversation.session_2_date_time",
            "unparsable date",
        ),
        (
            lambda s: s["conversation"].pop("session_1_date_time"),
            "conversation.session_1_date_time",
            "missing",
        ),
        (
            lambda s: s["conversation"].update(session_2="hello"),
            "conversation.session_2",
            "list of turns",
        ),
        (lambda s: s["conversation"].pop("speaker_b"), "conversation.speaker_b", "missing"),
        (lambda s: s["qa"][1].pop("answer"), "qa[1].answer", "needs an answer"),
        (lambda s: s["qa"][2].update(category=7), "qa[2].category", "category 1-5"),
        (lambda s: s["qa"][2].update(category="3"), "qa[2].category", "category 1-5"),
        (lambda s: s["qa"][3].update(evidence="D1:1"), "qa[3].evidence", "list"),
        (lambda s: s["qa"][3].update(evidence=["D1:1", 4]), "qa[3].evidence[1]", "string"),
        (lambda s: s["qa"][0].update(question=""), "qa[0].question", "empty"),
        (lambda s: s["qa"][0].update(answer=["a"]), "qa[0].answer", "string or a number"),
        (lambda s: s.pop("qa"), "qa", "list of questions"),
    ],
)
def test_bad_input_names_file_sample_and_field(
    tmp_path: Path, change: Any, field: str, words: str
) -> None:
    error = _error(tmp_path, _listed_with(change))
    assert error.path.endswith("locomo10.json") and error.sample_id == "conv-3"
    assert error.field == field
    assert words in error.problem
    assert str(error).startswith(f"{error.path}: sample 'conv-3': field {field}: ")
    assert not isinstance(error, KeyError)


def test_bad_files_and_samples_get_one_clear_error(tmp_path: Path) -> None:
    no_id = listed_sample()
    del no_id["sample_id"]
    assert _error(tmp_path, [no_id]).field == "[0].sample_id"
    assert _error(tmp_path, _listed_with(lambda s: s.pop("conversation"))).field == "conversation"
    assert "holds no samples" in str(_error(tmp_path, []))
    assert "empty" in str(_error(tmp_path, ""))
    assert "not JSON" in str(_error(tmp_path, "hello"))
    assert "invalid JSON" in str(_error(tmp_path, "[" + json.dumps(listed_sample())))
    assert "invalid JSON" in str(_error(tmp_path, '{"speaker_a": ', "5.json"))
    no_sessions = {"speaker_a": "A", "speaker_b": "B", "qa": []}
    assert "no session_N" in str(_error(tmp_path, no_sessions, "5.json"))
    assert "sample 'conv-5'" in str(_error(tmp_path, no_sessions, "5.json"))
    with pytest.raises(LocomoDataError, match="no such file"):
        load_samples(tmp_path / "missing.json")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(LocomoDataError, match=r"no \.json conversation files"):
        load_samples(empty)
    archive = tmp_path / "a.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        handle.writestr("readme.txt", "nothing")
    with pytest.raises(LocomoDataError, match=r"no \.json conversation files"):
        load_samples(archive)
    with zipfile.ZipFile(archive, "w") as handle:
        handle.writestr("d/9.json", "{oops")
    with pytest.raises(LocomoDataError, match=r"a\.zip!d/9\.json: invalid JSON"):
        load_samples(archive)
