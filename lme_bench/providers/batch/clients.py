"""One batch API client per provider endpoint and key in a process: a run looks at its jobs
many times, and each client keeps its connections alive between looks. Each provider kind
picks its own (`Provider.batch_api`)."""

from __future__ import annotations

import functools
import os

from lme_bench.providers.batch.anthropic_batch import AnthropicBatchApi
from lme_bench.providers.batch.bedrock_batch import BedrockBatchApi
from lme_bench.providers.batch.openai_batch import OpenAIBatchApi
from lme_bench.providers.batch.protocol import BatchApi


@functools.lru_cache(maxsize=16)
def openai_batch_client(api_key: str, base_url: str | None, timeout_s: float) -> BatchApi:
    """OpenAI's batch API (OpenAI-compatible servers' too)."""
    return OpenAIBatchApi(api_key, base_url, timeout_s)


@functools.lru_cache(maxsize=16)
def anthropic_batch_client(api_key: str, base_url: str | None, timeout_s: float) -> BatchApi:
    return AnthropicBatchApi(api_key, base_url, timeout_s)


def bedrock_batch_client(
    model_id: str, region: str | None, s3_uri: str, role_arn: str, timeout_s: float
) -> BatchApi:
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
) -> BatchApi:
    return BedrockBatchApi(model_id, region, s3_uri, role_arn, timeout_s)
