"""Every bad input, end to end through `lme-bench run` (in process): exit code 2, one error that
names the place, no traceback, and nothing written (no run folder, no temporary files)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from lme_bench_flows.command import main

from lme_bench.cli import EXIT_BAD_INPUT
from tests.bad_inputs.cases import CASES, PLAIN_CONFIG, Case

RUN_ID = "bad"
# What a complete, reusable split of a valid dataset holds (see lme_bench/dataset/shards.py).
_CACHE_FILE = re.compile(r"^\.cache/datasets/[0-9a-f]{24}/(index\.json|q/\d{5}\.json)$")


@pytest.fixture(autouse=True)
def _no_outside_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.upper().startswith("LME_"):
            monkeypatch.delenv(name)


def _leftovers(root: Path) -> list[str]:
    return [
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.name.endswith((".tmp", ".part", ".partial")) or p.name.startswith((".split-", "tmp"))
    ]


def test_the_catalogue_is_complete() -> None:
    assert len(CASES) >= 22
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_input_is_one_clear_error_and_writes_nothing(
    case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    results = tmp_path / "results"
    args = case.build(inputs, monkeypatch)

    # The case's own flags come last, so they win (e.g. a bad --run-id).
    code = main(["run", "--results-dir", str(results), "--run-id", RUN_ID, *args])
    out, err = capsys.readouterr()

    assert code == EXIT_BAD_INPUT, err
    assert out == ""
    assert err.startswith("lme-bench: error: ") and err.count("lme-bench:") == 1, err
    assert "Traceback" not in err and 'File "' not in err
    if case.place is not None:
        assert str(inputs / case.place) in err, err
    for words in case.expect:
        assert words in err, f"{words!r} not in {err!r}"

    assert not (results / RUN_ID).exists()
    assert _leftovers(tmp_path) == []
    assert {p.name for p in tmp_path.iterdir()} <= {"inputs", "results"}  # nothing elsewhere
    written = sorted(str(p.relative_to(results)) for p in results.rglob("*") if p.is_file())
    if case.leaves_dataset_cache:
        assert written and all(_CACHE_FILE.match(name) for name in written), written
    else:
        assert not results.exists(), written


def test_a_results_dir_that_is_a_file_is_one_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results"
    results.write_text("not a folder")
    config = tmp_path / "run.toml"
    config.write_text(PLAIN_CONFIG)

    code = main(["run", str(config), "--results-dir", str(results), "--run-id", RUN_ID])
    err = capsys.readouterr().err

    assert code == EXIT_BAD_INPUT
    assert err.startswith("lme-bench: error: ") and "Traceback" not in err
    assert f"{results}/.cache/datasets: cannot create the dataset cache folder" in err
    assert results.read_text() == "not a folder"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results", "run.toml"]
