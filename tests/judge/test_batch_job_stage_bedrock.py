"""The judge stage through Bedrock batch inference, against a loopback stand-in for S3, Bedrock's
control plane and its runtime: the records hold Claude's own body with the Converse request's
prompt, cap and temperature; the rows equal the call-by-call (Converse) rows, timing aside;
errored records are judged call by call; too few requests for a job are all sent call by
call."""

from __future__ import annotations

import asyncio
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from lme_bench.config.settings import ConfigError, Settings, load_settings
from lme_bench.judge.batch_job_stage import JudgeItem, judge_in_batch_jobs
from lme_bench.judge.panel import judge_panel
from lme_bench.judge.stage import judge_question
from lme_bench.providers.batch_jobs.bedrock_jobs import BedrockBatchJobApi
from lme_bench.results.batch_jobs import read_jobs
from lme_bench.results.qa_tables import ScoreRow
from lme_bench.run.steps import plan_run
from tests.judge.test_batch_job_stage import _items
from tests.providers.aws_env import use_fake_aws
from tests.providers.fake_bedrock_batch_server import FakeBedrockBatches, serve_bedrock_batches

MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0"
ROLE = "arn:aws:iam::123456789012:role/bedrock-batch"


def _settings(tmp_path: Path, url: str, monkeypatch: pytest.MonkeyPatch, **extra: Any) -> Settings:
    use_fake_aws(monkeypatch, tmp_path)
    monkeypatch.setenv("AWS_ENDPOINT_URL_BEDROCK", url)
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", url)
    config = tmp_path / "bedrock.toml"
    config.write_text(
        f'[models]\njudge = "aws:{MODEL}"\n'
        f'[providers.aws]\nkind = "bedrock"\nbase_url = "{url}"\nregion = "us-east-1"\n'
        f'batch_s3_uri = "s3://lme-batches/jobs"\nbatch_role_arn = "{ROLE}"\n'
        "[judge]\nbatch = true\nbatch_poll_s = 0.01\n"
    )
    overrides = {"run.results_dir": str(tmp_path / "results"), "run.id": "bedrock"} | extra
    return load_settings(config, **overrides)


def _comparable(rows: dict[str, list[ScoreRow]]) -> dict[str, list[dict[str, Any]]]:
    return {
        q: [{k: v for k, v in asdict(r).items() if k != "seconds"} for r in found]
        for q, found in rows.items()
    }


def _call_by_call(items: list[JudgeItem], settings: Settings) -> dict[str, list[ScoreRow]]:
    return {
        i.ref.question_id: asyncio.run(judge_question(i.ref, i.hypothesis, judge_panel(settings)))
        for i in items
    }


def test_rows_equal_the_converse_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(BedrockBatchJobApi, "minimum_requests", 1)
    with serve_bedrock_batches(FakeBedrockBatches(failing={3})) as (url, fake):
        settings = _settings(tmp_path, url, monkeypatch)
        items = _items(settings)
        batched = judge_in_batch_jobs(
            items, judge_panel(settings), tmp_path / "run", sleep=lambda s: None
        )
        redone = list(fake.converse_requests)
        (created,) = fake.created
        records = [
            json.loads(x)
            for x in fake.object_at(
                created["inputDataConfig"]["s3InputDataConfig"]["s3Uri"]
            ).splitlines()
        ]
        live = _call_by_call(items, settings)
        converse = fake.converse_requests[len(redone) :]
    assert _comparable(batched) == _comparable(live)
    assert len(redone) == 1 and len(records) == 6
    assert (created["modelId"], created["roleArn"]) == (MODEL, ROLE)
    for record, sent in zip(records, converse, strict=True):
        body = record["modelInput"]
        assert body["anthropic_version"] == "bedrock-2023-05-31"
        assert body["messages"][0]["content"] == sent["messages"][0]["content"][0]["text"]
        config = sent["inferenceConfig"]
        assert (body["max_tokens"], body["temperature"]) == (
            config["maxTokens"],
            config["temperature"],
        )
    (job,) = read_jobs(tmp_path / "run")
    assert (job.api, job.state, len(job.answered), len(job.redone)) == (
        "bedrock",
        "completed",
        5,
        1,
    )


def test_too_few_requests_for_a_job_are_judged_call_by_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with serve_bedrock_batches() as (url, fake):
        settings = _settings(tmp_path, url, monkeypatch)
        batched = judge_in_batch_jobs(
            _items(settings), judge_panel(settings), tmp_path / "run", sleep=lambda s: 0
        )
        assert not fake.created and len(fake.converse_requests) == 6
    assert all(r.status == "ok" for rows in batched.values() for r in rows)
    assert read_jobs(tmp_path / "run") == []


def test_a_bedrock_judge_needs_a_bucket_and_a_role(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = _settings(tmp_path, "http://127.0.0.1:9", monkeypatch, **{"models.qa": "fake:echo"})
    provider = settings.providers["aws"].model_copy(update={"batch_role_arn": None})
    broken = settings.model_copy(update={"providers": {"aws": provider}})
    with pytest.raises(ConfigError, match=r"batch_s3_uri .* and batch_role_arn"):
        plan_run(broken)
