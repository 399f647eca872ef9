"""One batch API client per provider endpoint and key in a process: a run looks at its jobs
many times, and each client keeps its connections alive between looks. Each provider kind
picks its own (`Provider.batch_job_api`)."""

from __future__ import annotations

import functools
import os

from lme_bench.providers.batch_jobs.anthropic_jobs import AnthropicBatchJobApi
from lme_bench.providers.batch_jobs.bedrock_jobs import BedrockBatchJobApi
from lme_bench.providers.batch_jobs.openai_jobs import OpenAIBatchJobApi
from lme_bench.providers.batch_jobs.protocol import BatchJobApi


@functools.lru_cache(maxsize=16)
def openai_batch_job_client(api_key: str, base_url: str | None, timeout_s: float) -> BatchJobApi:
    """OpenAI's batch API (OpenAI-compatible servers' too)."""
    return OpenAIBatchJobApi(api_key, base_url, timeout_s)


@functools.lru_cache(maxsize=16)
def anthropic_batch_job_client(api_key: str, base_url: str | None, timeout_s: float) -> BatchJobApi:
    return AnthropicBatchJobApi(api_key, base_url, timeout_s)


def bedrock_batch_job_client(
    model_id: str, region: str | None, s3_uri: str, role_arn: str, timeout_s: float
) -> BatchJobApi:
    """The Bedrock batch client for these settings and the endpoints the environment names
    (AWS_ENDPOINT_URL_BEDROCK, AWS_ENDPOINT_URL_S3), which boto3 reads when it is made."""
    endpoints = tuple(os.environ.get(f"AWS_ENDPOINT_URL_{s}") for s in ("BEDROCK", "S3"))
    return _bedrock_client(model_id, region, s3_uri, role_arn, timeout_s, endpoints)


@functools.lru_cache(maxsize=16)
def _bedrock_client(
    model_id: str,
    region: str | None,
    s3_uri: str,
    role_arn: str,
    timeout_s: float,
    endpoints: tuple[str | None, ...],
) -> BatchJobApi:
    return BedrockBatchJobApi(model_id, region, s3_uri, role_arn, timeout_s)
