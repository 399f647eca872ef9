"""`lme-bench score` on LoCoMo predictions in the official scorer's shape: scored with LoCoMo's
official F1 (builtin_benchmarks.locomo), written back in the official format; a question the
file words otherwise than the dataset, predictions under two keys, and predictions against a
LongMemEval dataset are each one error naming the place and the field."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from lme_bench.cli import main
from lme_bench.run.steps import bundled_sample
from tests.benchmarks.locomo.samples import listed_sample, write_json

PREDICTED = ["violin, clarinet", "2023", "Likely no", "Rex", "no information available"]


def _files(tmp_path: Path, key: str = "gpt-4o_prediction") -> tuple[Path, Path, dict[str, Any]]:
    sample = listed_sample()
    dataset = write_json(tmp_path / "locomo10.json", [sample])
    qa = [dict(item, **{key: p}) for item, p in zip(sample["qa"], PREDICTED, strict=True)]
    predictions = {"sample_id": sample["sample_id"], "qa": qa}
    return dataset, write_json(tmp_path / "predictions.json", [predictions]), predictions


def _score(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["score", *args, "--judge", "fake:yes"])
    return code, capsys.readouterr().err


def test_predictions_get_the_official_f1_and_are_written_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset, predictions, _ = _files(tmp_path)
    out = tmp_path / "scored"
    code, err = _score(capsys, str(predictions), "--dataset", str(dataset), "--out", str(out))
    assert code == 0, err
    figures = json.loads((out / "summary.json").read_text())["locomo"]
    f1 = {name: c["f1"] for name, c in figures["categories"].items()}
    assert f1 == {
        "multi-hop": 1.0,
        "temporal": 1.0,
        "open-domain": 1.0,  # the gold answer up to its first ';'
        "single-hop": 0.0,  # "Rex" shares no word with "Pip"
        "adversarial": 1.0,  # says the information is not there
    }
    assert figures["overall_f1"] == pytest.approx(0.8)
    (written,) = json.loads((out / "locomo_predictions.json").read_text())
    assert [item["prediction"] for item in written["qa"]] == PREDICTED
    assert json.loads((out / "summary.json").read_text())["answers_file"]["format"] == (
        "locomo-predictions"
    )


def test_a_question_left_out_is_counted_not_scored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset, predictions, raw = _files(tmp_path)
    raw["qa"] = raw["qa"][:4]
    write_json(predictions, [raw])
    out = tmp_path / "scored"
    code, _ = _score(capsys, str(predictions), "--dataset", str(dataset), "--out", str(out))
    assert code == 1
    summary = json.loads((out / "summary.json").read_text())
    assert summary["answers_file"]["missing_ids"] == ["conv-7-q4"]
    assert summary["locomo"]["questions"] == 4


def _edited(raw: dict[str, Any], change: str) -> list[dict[str, Any]]:
    edited = copy.deepcopy(raw)
    if change == "question":
        edited["qa"][1]["question"] = "When did Ben run a 5k?"
    else:
        edited["qa"][2]["other_prediction"] = "x"
    return [edited]


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (
            "question",
            "conv-7 qa[1]: field question: 'When did Ben run a 5k?' is not the"
            " dataset's question conv-7-q1",
        ),
        ("key", "predictions under several keys (gpt-4o_prediction, other_prediction)"),
    ],
)
def test_another_datasets_predictions_are_named(
    change: str, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset, predictions, raw = _files(tmp_path)
    write_json(predictions, _edited(raw, change))
    code, err = _score(capsys, str(predictions), "--dataset", str(dataset))
    assert code == 2
    assert err.startswith(f"lme-bench: error: {predictions}: {said}"), err


def test_locomo_predictions_against_a_longmemeval_dataset_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, predictions, _ = _files(tmp_path)
    code, err = _score(capsys, str(predictions), "--dataset", str(bundled_sample()))
    assert code == 2
    assert f"{predictions}: LoCoMo predictions (locomo), but {bundled_sample()} is a" in err
