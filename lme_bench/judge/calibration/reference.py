"""The reference verdicts a candidate judge is measured against: an official eval-results file
(`<hyp_file>.eval-results-gpt-4o`, one JSON object a line) or an lme-bench run folder judged by
the official judge (its scores.parquet and hypotheses.parquet)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lme_bench.common.json_lines import json_object_lines
from lme_bench.config.settings import OFFICIAL_JUDGE, ConfigError
from lme_bench.results.qa_scores import first_verdicts
from lme_bench.results.readback import read_hypotheses, read_scores

UNKNOWN_MODEL = "unknown (plain labels name no model)"


class CalibrationInputError(ConfigError):
    """A reference file, run folder or dataset that cannot be used; names the place."""


@dataclass(frozen=True, slots=True)
class ReferenceVerdict:
    question_id: str
    hypothesis: str
    label: bool
    place: str  # where the reference holds it, for errors: "<file>: line 12"


@dataclass(frozen=True, slots=True)
class Reference:
    path: Path
    kind: str  # "eval-results" or "run"
    sha256: str  # of the eval-results file, or of the run's scores.parquet
    judge_model: str  # the model that gave the labels, as the reference names it
    prompt_version: str | None  # a run's judge prompts; eval-results files do not say
    verdicts: list[ReferenceVerdict]


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _label(item: dict[str, Any], place: str) -> tuple[bool, str | None]:
    if "autoeval_label" not in item:
        raise CalibrationInputError(f"{place}: field autoeval_label is missing")
    value = item["autoeval_label"]
    if isinstance(value, bool):
        return value, None
    if not isinstance(value, dict):
        raise CalibrationInputError(
            f"{place}: field autoeval_label: expected {{'model': ..., 'label': true|false}} or "
            f"a bool, got {type(value).__name__}"
        )
    label = value.get("label")
    if not isinstance(label, bool):
        raise CalibrationInputError(
            f"{place}: field autoeval_label.label: expected true or false, got {label!r}"
        )
    model = value.get("model")
    return label, model if isinstance(model, str) and model else None


def _field(item: dict[str, Any], name: str, place: str) -> str:
    value = item.get(name)
    if name not in item:
        raise CalibrationInputError(f"{place}: field {name} is missing")
    if not isinstance(value, str) or (name == "question_id" and not value):
        raise CalibrationInputError(f"{place}: field {name}: expected text, got {value!r}")
    return value


def read_eval_results(path: Path) -> Reference:
    """Every line of an official eval-results file; one error naming the line and the field."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CalibrationInputError(f"{path}: cannot read the reference file: {exc}") from None
    verdicts: list[ReferenceVerdict] = []
    models: set[str] = set()
    seen: dict[str, int] = {}
    for number, place, item in json_object_lines(path, text, CalibrationInputError):
        question_id = _field(item, "question_id", place)
        if question_id in seen:
            raise CalibrationInputError(
                f"{place}: field question_id: {question_id!r} already on line {seen[question_id]}"
            )
        seen[question_id] = number
        hypothesis = _field(item, "hypothesis", place)
        label, model = _label(item, place)
        models.add(model or UNKNOWN_MODEL)
        verdicts.append(ReferenceVerdict(question_id, hypothesis, label, place))
    if not verdicts:
        raise CalibrationInputError(f"{path}: the reference file holds no verdicts")
    return Reference(path, "eval-results", _sha256(path), ", ".join(sorted(models)), None, verdicts)


def read_run_folder(run_dir: Path) -> Reference:
    """The official judge's first verdicts in a run folder, with the run's hypotheses."""
    scores_path, hypotheses_path = run_dir / "scores.parquet", run_dir / "hypotheses.parquet"
    for needed in (scores_path, hypotheses_path):
        if not needed.is_file():
            raise CalibrationInputError(f"{run_dir}: {needed.name} is missing (no judged run here)")
    scores = [s for s in read_scores(scores_path) if s.judge == OFFICIAL_JUDGE]
    if not scores:
        judges = sorted({s.judge for s in read_scores(scores_path)}) or ["none"]
        raise CalibrationInputError(
            f"{scores_path}: no verdicts of the official judge {OFFICIAL_JUDGE} (judges found: "
            f"{', '.join(judges)})"
        )
    hypotheses = {h.question_id: h.hypothesis for h in read_hypotheses(hypotheses_path)}
    verdicts = []
    versions = sorted({s.prompt_version for s in scores})
    for question_id, score in sorted(first_verdicts(scores).items()):
        if score.label is None:
            continue  # the official judge's call failed: nothing to compare with
        hypothesis = hypotheses.get(question_id)
        if hypothesis is None:
            raise CalibrationInputError(
                f"{hypotheses_path}: question {question_id}: field hypothesis is missing"
            )
        verdicts.append(
            ReferenceVerdict(
                question_id, hypothesis, score.label, f"{scores_path}: question {question_id}"
            )
        )
    if not verdicts:
        raise CalibrationInputError(f"{scores_path}: the official judge gave no verdict")
    return Reference(
        run_dir,
        "run",
        _sha256(scores_path),
        OFFICIAL_JUDGE.split(":", 1)[1],
        ", ".join(versions),
        verdicts,
    )


def read_reference(path: Path) -> Reference:
    """A run folder, or an eval-results file."""
    path = Path(path).expanduser()
    if path.is_dir():
        return read_run_folder(path)
    if not path.exists():
        raise CalibrationInputError(f"{path}: no such reference file or run folder")
    return read_eval_results(path)
