"""A judge profile: one candidate judge measured against a reference judge, as a JSON file.

It records what was compared (the candidate's label and the request it was sent, the prompt
source and template hashes, the reference file's sha256 and judge model, the dataset's sha256,
the code version), the figures per type and overall, and every question's pair of labels, so a
run judged by the candidate can estimate the reference judge's accuracy with an interval that
also resamples the calibration (`[judge] profile`).
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from lme_bench.config.settings import ConfigError, Settings
from lme_bench.metrics.judge_agreement import Table
from lme_bench.results.atomic import write_text_atomically

PROFILE_KIND = "lme-bench judge profile"
PROFILE_VERSION = 1


class JudgeProfileError(ConfigError):
    """A judge profile that cannot be read or does not fit the run; names the file."""


def profile_file_name(candidate: str) -> str:
    """`judge-profile-<provider>_<model>.json`, with characters unsafe in a file name as `_`."""
    return "judge-profile-" + re.sub(r"[^A-Za-z0-9._-]+", "_", candidate) + ".json"


def write_profile(path: Path, profile: dict[str, Any]) -> None:
    write_text_atomically(path, json.dumps(profile, indent=2) + "\n")


def now_text() -> str:
    return datetime.now(UTC).isoformat()


def _need(data: Any, keys: tuple[str, ...], path: Path) -> Any:
    found = data
    for depth, key in enumerate(keys):
        if not isinstance(found, dict) or key not in found:
            raise JudgeProfileError(f"{path}: field {'.'.join(keys[: depth + 1])} is missing")
        found = found[key]
    return found


def load_profile(path: Path) -> tuple[dict[str, Any], str]:
    """The profile at `path` and the file's sha256; one error naming the file and the field."""
    path = Path(path).expanduser()
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise JudgeProfileError(f"[judge] profile: {path} not found") from None
    except OSError as exc:
        raise JudgeProfileError(f"[judge] profile: {path}: cannot read: {exc.strerror}") from None
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise JudgeProfileError(f"{path}: not valid JSON: {exc}") from None
    if not isinstance(data, dict) or data.get("kind") != PROFILE_KIND:
        raise JudgeProfileError(f"{path}: not an lme-bench judge profile (field kind)")
    if data.get("profile_version") != PROFILE_VERSION:
        raise JudgeProfileError(
            f"{path}: field profile_version: {data.get('profile_version')!r}, this lme-bench "
            f"reads {PROFILE_VERSION}"
        )
    if not isinstance(_need(data, ("candidate", "judge"), path), str):
        raise JudgeProfileError(f"{path}: field candidate.judge: expected text")
    for name in ("agreement", "kappa"):
        _need(data, ("figures", "overall", name), path)
    tables = _need(data, ("tables",), path)
    if not isinstance(tables, dict) or not tables:
        raise JudgeProfileError(f"{path}: field tables: expected a 2x2 table per question type")
    for question_type, counts in tables.items():
        try:
            Table.from_dict(counts)
        except (KeyError, TypeError, ValueError):
            raise JudgeProfileError(
                f"{path}: field tables.{question_type}: expected the four counts "
                "both_yes, reference_yes_candidate_no, reference_no_candidate_yes, both_no"
            ) from None
    return data, hashlib.sha256(raw).hexdigest()


def profile_tables(profile: dict[str, Any]) -> dict[str, Table]:
    return {t: Table.from_dict(c) for t, c in profile["tables"].items()}


def check_profile(settings: Settings) -> dict[str, Any] | None:
    """The profile `[judge] profile` names, checked against the run's judge (a ConfigError
    naming both when they differ); None when no profile is set."""
    path = settings.judge.profile
    if path is None:
        return None
    profile, _ = load_profile(path)
    candidate = profile["candidate"]["judge"]
    if settings.models.judge != candidate:
        raise JudgeProfileError(
            f"[judge] profile {path} calibrates the judge {candidate}, but the run's judge is "
            f"[models] judge = {settings.models.judge or 'none'}: calibrate that judge, or drop "
            "the profile"
        )
    return profile
