"""What a run's manifest records of its judges' requests, by the benchmarks of its questions:
the LLM judge's yes/no request for the questions of a benchmark without a judge of its own,
each own judge's requests under its benchmark, both for a run holding questions of both."""

from __future__ import annotations

from pathlib import Path

from lme_bench.builtin_benchmarks.beam.judge_stage import RUBRIC_JUDGE
from lme_bench.config.settings import Settings
from lme_bench.judge.family_requests import judge_request_shapes
from lme_bench.run.finish import _judge_requests
from tests.benchmarks.beam.samples import write_checkout

JUDGE = "fake:rubric-judge"
SECOND = "fake:match-judge"


def _settings(tmp_path: Path, stages: list[str] | None = None) -> Settings:
    return Settings.model_validate(
        {
            "models": {"judge": JUDGE},
            "judge": {"second_model": SECOND, "beam_repo": str(write_checkout(tmp_path))},
            "run": {"stages": stages or ["ingest", "retrieval", "answer", "judge", "report"]},
        }
    )


def test_each_benchmark_of_the_run_records_the_requests_its_questions_were_sent(
    tmp_path: Path,
) -> None:
    settings = _settings(tmp_path)
    verdicts = judge_request_shapes(settings)
    beam = RUBRIC_JUDGE.request_shapes(settings)
    assert set(verdicts) == set(beam) == {JUDGE, SECOND}
    assert all(verdicts[j] != beam[j] for j in (JUDGE, SECOND))
    assert _judge_requests(settings, ["longmemeval"]) == {"judge_requests": verdicts}
    assert _judge_requests(settings, ["locomo"]) == {"judge_requests": verdicts}
    assert _judge_requests(settings, ["beam"]) == {
        "judge_requests": {},
        "own_judge_requests": {"beam": beam},
    }
    assert _judge_requests(settings, ["beam", "longmemeval"]) == {
        "judge_requests": verdicts,
        "own_judge_requests": {"beam": beam},
    }


def test_a_run_that_does_not_judge_records_no_request(tmp_path: Path) -> None:
    settings = _settings(tmp_path, ["ingest", "retrieval", "answer", "report"])
    assert _judge_requests(settings, ["beam", "longmemeval"]) == {"judge_requests": {}}
