"""The catalogue of bad inputs: each case writes its inputs and says what the error must name.

A case's `build` gets a fresh folder and monkeypatch and returns its `lme-bench run` arguments
(the runner puts `--results-dir` and `--run-id` first, so a case's own flags win). Datasets
start from valid LongMemEval questions (tests/factories.py) and break one thing.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from lme_bench.dataset.models import MAX_TURN_CHARS
from tests.factories import make_question

Build = Callable[[Path, pytest.MonkeyPatch], list[str]]
PLAIN_CONFIG = '[memory]\nbackend = "embedded"\n[ingest]\nmode = "raw"\n'


@dataclass(frozen=True)
class Case:
    name: str
    build: Build
    expect: tuple[str, ...]  # every one must be in the error (place, field, problem)
    place: str | None  # the file (in the case's folder) the error must name, if any
    leaves_dataset_cache: bool = False  # a complete, reusable split of a valid file is fine


def _config(folder: Path, text: str = PLAIN_CONFIG, name: str = "run.toml") -> Path:
    path = folder / name
    path.write_text(text)
    return path


def _dataset(folder: Path, questions: Any = None, raw: bytes | None = None) -> Path:
    path = folder / "data.json"
    path.write_bytes(raw if raw is not None else json.dumps(questions).encode())
    return path


def _second_broken(**change: Any) -> list[dict[str, Any]]:
    """A valid question #0, then question #1 ('cc33dd44') with `change` applied (None drops)."""
    broken = make_question("cc33dd44")
    for key, value in change.items():
        if value is None:
            del broken[key]
        else:
            broken[key] = value
    return [make_question(), broken]


def _with_turn(session: int, turn: int, **change: Any) -> list[dict[str, Any]]:
    broken = make_question("cc33dd44")
    broken["haystack_sessions"][session][turn].update(change)
    return [make_question(), broken]


def dataset_case(
    name: str, expect: tuple[str, ...], questions: Any = None, raw: bytes | None = None
) -> Case:
    def build(folder: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
        data = _dataset(folder, questions, raw)
        return [str(_config(folder)), "--dataset", str(data)]

    return Case(name, build, expect, "data.json")


def config_case(
    name: str,
    text: str,
    expect: tuple[str, ...],
    env: dict[str, str | None] | None = None,
    place: str | None = "run.toml",
) -> Case:
    def build(folder: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
        for key, value in (env or {}).items():
            if value is None:
                monkeypatch.delenv(key, raising=False)
            else:
                monkeypatch.setenv(key, value)
        data = _dataset(folder, [make_question()])
        return [str(_config(folder, PLAIN_CONFIG + text)), "--dataset", str(data)]

    return Case(name, build, expect, place)


Q1 = "question #1 (question_id 'cc33dd44')"
VALID = json.dumps([make_question(), make_question("cc33dd44")]).encode()
# 1 MiB in one turn: a broken export, not a conversation (see MAX_TURN_CHARS for why it is an
# error rather than accepted); odd inputs the official files do hold are in test_accepted.py.
_huge = "x" * (1 << 20)

DATASET_CASES = [
    dataset_case("truncated-json", ("truncated JSON", "after question #0"), raw=VALID[:-60]),
    dataset_case(
        "top-level-object",
        ("top level is a JSON object", "expected an array"),
        {"questions": [make_question()]},
    ),
    dataset_case(
        "missing-question-field",
        (Q1, "field question", "Field required"),
        _second_broken(question=None),
    ),
    dataset_case(
        "question-id-is-a-list",
        ("question #1", "field question_id", "valid string"),
        _second_broken(question_id=["cc33dd44"]),
    ),
    dataset_case(
        "unknown-question-type",
        (Q1, "field question_type", "'multi-session'"),
        _second_broken(question_type="multi-hop"),
    ),
    dataset_case(
        "dates-and-sessions-differ-in-length",
        (Q1, "field haystack_dates", "haystack_dates=1", "haystack_sessions=2"),
        _second_broken(haystack_dates=["2023/05/01 (Mon) 09:15"]),
    ),
    dataset_case(
        "no-sessions-at-all",
        (Q1, "field haystack_sessions", "no sessions"),
        _second_broken(haystack_sessions=[], haystack_dates=[], haystack_session_ids=[]),
    ),
    dataset_case(
        "unknown-role",
        (Q1, "field haystack_sessions[1][2].role", "'user' or 'assistant'"),
        _with_turn(1, 2, role="system"),
    ),
    dataset_case(
        "unparsable-date",
        (Q1, "field haystack_dates[1]", "unparsable date 'May 1st'"),
        _second_broken(haystack_dates=["2023/05/20 (Sat) 10:00", "May 1st"]),
    ),
    dataset_case(
        "duplicate-question-ids",
        ("question #1 (question_id 'aa11bb22')", "duplicate question_id", "question #0"),
        [make_question(), make_question()],
    ),
    dataset_case(
        "one-mebibyte-turn",
        (Q1, "field haystack_sessions[1][0].content", "1,048,576 characters", "limit"),
        _with_turn(1, 0, content=_huge),
    ),
    dataset_case(
        "not-utf8",
        ("not UTF-8", "at byte", "question #0"),
        raw=VALID.replace(b"golden", b"g\xff\xfeolden", 1),
    ),
    dataset_case("empty-file", ("the file is empty",), raw=b""),
    dataset_case("empty-array", ("holds no questions",), raw=b"[]"),
    dataset_case("trailing-garbage", ("invalid JSON", "after question #1"), raw=VALID + b"\n{oops"),
]


def _missing_dataset(folder: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    return [str(_config(folder)), "--dataset", str(folder / "absent.json")]


def _dataset_is_a_folder(folder: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    (folder / "data").mkdir()
    return [str(_config(folder)), "--dataset", str(folder / "data")]


def _missing_config(folder: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    return [str(folder / "absent.toml"), "--dataset", str(_dataset(folder, [make_question()]))]


def _unknown_question(folder: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    data = _dataset(folder, [make_question(), make_question("cc33dd44")])
    return [str(_config(folder)), "--dataset", str(data), "--questions", "cc33dd44,nope,zzz"]


FILE_CASES = [
    Case("dataset-does-not-exist", _missing_dataset, ("no such file",), "absent.json"),
    Case("dataset-is-a-folder", _dataset_is_a_folder, ("not a file",), "data"),
    Case("config-does-not-exist", _missing_config, ("no such config file",), "absent.toml"),
    Case(
        "unknown-question-id",
        _unknown_question,
        ("unknown question id(s): nope, zzz",),
        "data.json",
        leaves_dataset_cache=True,
    ),
]


def _escaping_run_id(folder: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    data = _dataset(folder, [make_question()])
    return [str(_config(folder)), "--dataset", str(data), "--run-id", "../escape"]


CONFIG_CASES = [
    Case("run-id-escapes-results-dir", _escaping_run_id, ("run.id", "override", "pattern"), None),
    config_case("bad-toml", "[memory\nbackend = 1\n", ("not valid TOML", "line 5")),
    config_case("unknown-key", "[retrieval]\ntop_kk = 5\n", ("retrieval.top_kk", "Extra inputs")),
    config_case("unknown-section", "[nonsense]\nx = 1\n", ("nonsense", "Extra inputs")),
    config_case(
        "unknown-provider",
        '[models]\nqa = "nosuch:model"\njudge = "none"\n',
        ("[models] qa = 'nosuch:model'", "unknown provider 'nosuch'", "[providers.nosuch]"),
        place=None,
    ),
    config_case(
        "missing-api-key",
        '[models]\nqa = "openai:gpt-4o-mini"\n',
        ("[models] qa = 'openai:gpt-4o-mini'", "OPENAI_API_KEY"),
        env={"OPENAI_API_KEY": None},
        place=None,
    ),
    config_case("negative-limit", "[limits]\ningest = -1\n", ("limits.ingest", "greater than")),
    config_case(
        "bad-env-override",
        "",
        ("environment LME_LIMITS__INGEST", "limits.ingest", "valid integer"),
        env={"LME_LIMITS__INGEST": "abc"},
        place=None,
    ),
    config_case(
        "unknown-env-key",
        "",
        ("environment LME_RETRIEVAL__TOP_KK", "retrieval.top_kk", "Extra inputs"),
        env={"LME_RETRIEVAL__TOP_KK": "5"},
        place=None,
    ),
]

CASES = DATASET_CASES + FILE_CASES + CONFIG_CASES
assert len(_huge) > MAX_TURN_CHARS
