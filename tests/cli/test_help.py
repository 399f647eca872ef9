"""`lme-bench --help` and `lme-bench run --help` name every benchmark a run can read: the
built-in ones and any an installed package registers, from the benchmark registry."""

from __future__ import annotations

import pytest

from lme_bench import cli
from lme_bench.benchmarks import registry


def _help(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    with pytest.raises(SystemExit) as done:
        cli.main([*args, "--help"])
    assert done.value.code == 0
    return " ".join(capsys.readouterr().out.split())  # argparse's wrapping undone


def _line(text: str, start: str, end: str) -> str:
    return text.partition(start)[2].partition(end)[0]


def test_help_names_every_benchmark_and_every_download(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(registry, "registered", lambda: {"tinybench": "tiny_bench:TinyBench"})
    top = _help(capsys).partition("positional arguments:")[2]  # the commands, one line each
    run = _help(capsys, "run")
    estimate = _help(capsys, "estimate")
    for title in ["LongMemEval", "LoCoMo", "BEAM", "tinybench"]:
        assert title in _line(top, " run ", " rerun "), top
        assert title in _line(run, "--dataset DATASET ", "--run-id"), run
        assert title in _line(estimate, "--dataset DATASET ", "--questions"), estimate
    downloads = _line(top, " dataset ", " memory ")
    assert {"LongMemEval", "LoCoMo", "BEAM"} <= set(downloads.replace(",", " ").split())
    assert set(cli.DOWNLOADS.values()) == set(registry.BUILT_IN)  # each has its download
