"""AWS Bedrock's Converse API (`bedrock:<model id>`; region from config or the AWS default chain;
a [providers] name of kind "bedrock" may set base_url, the runtime endpoint, e.g. a VPC one)."""

from __future__ import annotations

import importlib.util
import os
from typing import TYPE_CHECKING, Any

from lme_bench.config.settings import ConfigError, ModelsSettings
from lme_bench.providers.fault_types import Cause, Fault
from lme_bench.providers.judge_shapes import MAX_TOKENS, RequestShape
from lme_bench.providers.kinds.base import Provider
from lme_bench.providers.retry_policy import RetryPolicy

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from lme_bench.providers.batch_jobs.protocol import BatchJobApi
    from lme_bench.providers.spec import ModelSpec

_ERROR_CODES: dict[str, Cause] = {
    "ThrottlingException": "throttled",
    "TooManyRequestsException": "throttled",
    "ServiceUnavailableException": "server",
    "InternalServerException": "server",
    "ModelNotReadyException": "server",
    "ModelTimeoutException": "timeout",
}


class Bedrock(Provider):
    kind = "bedrock"
    title = "Bedrock"
    sdk = "langchain_aws"
    judge_batch = True

    def endpoint(self, spec: ModelSpec) -> str | None:
        region = spec.provider_settings.region or os.environ.get("AWS_REGION")
        return spec.provider_settings.base_url or f"bedrock-runtime ({region or 'AWS default'})"

    def own_problems(self, spec: ModelSpec, where: str) -> list[str]:
        if has_credentials(spec):
            return []
        return [
            f"{where}: no AWS credentials found (set AWS_PROFILE or AWS_ACCESS_KEY_ID/"
            "AWS_SECRET_ACCESS_KEY, or run on a role) and a region ([providers.bedrock] region "
            "or AWS_REGION)"
        ]

    def retry_policy(self, models: ModelsSettings) -> RetryPolicy:
        """Longer waits on throttling: Bedrock's quotas refill slowly."""
        return RetryPolicy(
            attempts=models.retry_attempts, throttle_base_s=5.0, throttle_cap_s=600.0
        )

    def classify_fault(self, error: BaseException) -> Fault:
        return classify_botocore(error)

    def build(
        self, spec: ModelSpec, models: ModelsSettings, max_tokens: int, common: dict[str, Any]
    ) -> BaseChatModel:
        from lme_bench.providers.bedrock import bedrock_chat_model

        settings = spec.provider_settings
        return bedrock_chat_model(
            spec.model, settings.region, settings.base_url, models.timeout_s, **common
        )

    def chat_request(self, spec: ModelSpec, call: Any) -> tuple[str, dict[str, Any]]:
        """The Converse parameters langchain-aws builds for a call (its own builder), the model
        id in the URL, the messages and system blocks left out."""
        params = dict(call._converse_params())
        params.pop("modelId", None)
        return f"POST /model/{spec.model}/converse", params

    def judge_shape(self, model: str) -> RequestShape:
        return RequestShape(
            "bedrock-converse",
            "POST /model/{model}/converse",
            # langchain-aws sends the (empty) system prompt list with every Converse request
            {"system": [], "inferenceConfig": {"maxTokens": MAX_TOKENS, "temperature": 0.0}},
            differs="Bedrock Converse API: the cap and temperature in inferenceConfig, no n",
            layout="converse",
        )

    def check_batch(self, spec: ModelSpec, where: str) -> None:
        from lme_bench.providers.batch_jobs.bedrock_jobs import is_claude

        if not is_claude(spec.model):
            raise ConfigError(f"{where}: Bedrock batch jobs are sent for Claude models only here")
        provider = spec.provider_settings
        if not provider.batch_s3_uri or not provider.batch_role_arn:
            raise ConfigError(
                f"{where}: set [providers.{spec.provider}] batch_s3_uri (s3://bucket/prefix) and"
                " batch_role_arn (the role Bedrock reads and writes it as)"
            )

    def batch_job_api(self, spec: ModelSpec, timeout_s: float) -> BatchJobApi:
        """For a model and settings `check_batch` passed."""
        from lme_bench.providers.batch_jobs.clients import bedrock_batch_job_client

        provider = spec.provider_settings
        s3_uri, role = provider.batch_s3_uri or "", provider.batch_role_arn or ""
        return bedrock_batch_job_client(spec.model, provider.region, s3_uri, role, timeout_s)

    def batch_body(self, shape: RequestShape, model: str, prompt: str) -> dict[str, Any]:
        """Bedrock's batch records hold the model's own body (Claude's), with the Converse
        request's cap and temperature."""
        from lme_bench.providers.batch_jobs.bedrock_jobs import claude_body

        config = shape.field_value("inferenceConfig")
        return claude_body(prompt, int(config["maxTokens"]), float(config["temperature"]))


def has_credentials(spec: ModelSpec) -> bool:
    """AWS credentials and a region are found (True without boto3: reported as a missing SDK)."""
    if importlib.util.find_spec("boto3") is None:
        return True
    import boto3

    session = boto3.Session(region_name=spec.provider_settings.region)
    return session.get_credentials() is not None and session.region_name is not None


def classify_botocore(error: BaseException) -> Fault:
    try:
        from botocore import exceptions as boto
    except ImportError:  # pragma: no cover - botocore comes with langchain-aws
        return None, None
    if isinstance(error, boto.ClientError):
        code = error.response.get("Error", {}).get("Code", "")
        if code in _ERROR_CODES:
            return _ERROR_CODES[code], None
        status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
        if status == 429:
            return "throttled", None
        return ("server", None) if status >= 500 else (None, None)
    if isinstance(error, boto.ReadTimeoutError | boto.ConnectTimeoutError):
        return "timeout", None
    # what botocore's own retries treat as transient: failed, refused or dropped connections,
    # and a body cut short (lme_bench.providers.bedrock checks its length)
    if isinstance(error, boto.ConnectionError | boto.HTTPClientError | boto.IncompleteReadError):
        return "connection", None
    return None, None
