"""Bedrock batch inference: the requests as a JSON-lines file in S3 (`recordId`, `modelInput`),
a model invocation job reading it and writing `<output prefix>/<job id>/<file>.out`, polled
until it ends, then each record's `modelOutput` (or `error`) read back by its record id.

A batch record holds the model's own InvokeModel body, not a Converse request: for Anthropic's
Claude models on Bedrock, the Messages body (`anthropic_version` bedrock-2023-05-31) with the
same prompt, output cap and temperature as the judge's Converse request. Bedrock refuses jobs
below a minimum number of records (MINIMUM_RECORDS); fewer requests are sent call by call.
Endpoints follow boto3 (AWS_ENDPOINT_URL_BEDROCK, AWS_ENDPOINT_URL_S3 for a stand-in).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from langchain_core.messages import AIMessage

from lme_bench.providers.anthropic_messages import reply_message
from lme_bench.providers.batch_jobs.protocol import BatchRequest, ItemResult, JobState, JobStatus

MINIMUM_RECORDS = 100  # Bedrock's default quota of records per batch inference job
ANTHROPIC_VERSION = "bedrock-2023-05-31"
INPUT_FILE = "records.jsonl"
_STATES: dict[str, JobState] = {
    "Submitted": "running",
    "Validating": "running",
    "Scheduled": "running",
    "InProgress": "running",
    "Stopping": "running",
    "Completed": "completed",
    "PartiallyCompleted": "completed",
    "Failed": "failed",
    "Stopped": "cancelled",
    "Expired": "expired",
}


def is_claude(model_id: str) -> bool:
    """An Anthropic Claude model id on Bedrock (an inference profile's region prefix too)."""
    return "anthropic.claude" in model_id


def claude_body(prompt: str, max_tokens: int, temperature: float) -> dict[str, Any]:
    """The InvokeModel body of Claude on Bedrock for one user message."""
    return {
        "anthropic_version": ANTHROPIC_VERSION,
        "max_tokens": max_tokens,
        "temperature": temperature,
        "messages": [{"role": "user", "content": prompt}],
    }


def split_s3_uri(uri: str) -> tuple[str, str]:
    parts = urlsplit(uri)
    if parts.scheme != "s3" or not parts.netloc:
        raise ValueError(f"batch_s3_uri = {uri!r}: expected s3://bucket/prefix")
    return parts.netloc, parts.path.strip("/")


def parse_records(text: str) -> dict[str, ItemResult]:
    """An output file's records by record id."""
    found: dict[str, ItemResult] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
            record_id = str(line["recordId"])
        except (ValueError, KeyError, TypeError):
            raise ValueError(f"batch output line {number}: not a record with a recordId") from None
        output, error = line.get("modelOutput"), line.get("error")
        if output and not error:
            found[record_id] = ItemResult(record_id, output)
        else:
            error = error or {}
            text_of = f"{error.get('errorCode', 'error')}: {error.get('errorMessage', '')}"
            found[record_id] = ItemResult(record_id, None, text_of)
    return found


class BedrockBatchJobApi:
    provider = "bedrock"
    minimum_requests = MINIMUM_RECORDS

    def __init__(
        self, model_id: str, region: str | None, s3_uri: str, role_arn: str, timeout_s: float
    ) -> None:
        import boto3
        from botocore.config import Config

        self.model_id = model_id
        self.role_arn = role_arn
        self.bucket, self.prefix = split_s3_uri(s3_uri)
        config = Config(
            read_timeout=timeout_s,
            retries={"max_attempts": 4, "mode": "standard"},
            request_checksum_calculation="when_required",
            s3={"addressing_style": "path"},
        )
        self._bedrock = boto3.client("bedrock", region_name=region, config=config)
        self._s3 = boto3.client("s3", region_name=region, config=config)

    def _key(self, *parts: str) -> str:
        return "/".join(p for p in (self.prefix, *parts) if p)

    def submit(self, requests: Sequence[BatchRequest], description: str) -> str:
        ids = "\n".join(sorted(r.custom_id for r in requests))
        name = "lme-bench-" + hashlib.sha256(ids.encode()).hexdigest()[:20]
        lines = [json.dumps({"recordId": r.custom_id, "modelInput": r.body}) for r in requests]
        key = self._key(name, "input", INPUT_FILE)
        self._s3.put_object(Bucket=self.bucket, Key=key, Body="\n".join(lines).encode() + b"\n")
        job = self._bedrock.create_model_invocation_job(
            jobName=name,
            roleArn=self.role_arn,
            modelId=self.model_id,
            inputDataConfig={
                "s3InputDataConfig": {
                    "s3Uri": f"s3://{self.bucket}/{key}",
                    "s3InputFormat": "JSONL",
                }
            },
            outputDataConfig={
                "s3OutputDataConfig": {"s3Uri": f"s3://{self.bucket}/{self._key(name, 'output')}/"}
            },
        )
        return str(job["jobArn"])

    def status(self, job_id: str) -> JobStatus:
        job = self._bedrock.get_model_invocation_job(jobIdentifier=job_id)
        counts = {
            name: int(job[key])
            for name, key in (
                ("total", "totalRecordCount"),
                ("processed", "processedRecordCount"),
                ("succeeded", "successRecordCount"),
                ("errored", "errorRecordCount"),
            )
            if key in job
        }
        return JobStatus(_STATES.get(job["status"], "running"), str(job["status"]), counts)

    def results(self, job_id: str) -> dict[str, ItemResult]:
        job = self._bedrock.get_model_invocation_job(jobIdentifier=job_id)
        bucket, prefix = split_s3_uri(job["outputDataConfig"]["s3OutputDataConfig"]["s3Uri"])
        folder = f"{prefix}/{job_id.rsplit('/', 1)[-1]}/"
        found: dict[str, ItemResult] = {}
        listed = self._s3.list_objects_v2(Bucket=bucket, Prefix=folder)
        for item in listed.get("Contents", []):
            if item["Key"].endswith(f"{INPUT_FILE}.out"):
                body = self._s3.get_object(Bucket=bucket, Key=item["Key"])["Body"].read()
                found |= parse_records(body.decode())
        return found

    def message(self, reply: dict[str, Any]) -> AIMessage:
        return reply_message(reply)  # Claude's own reply format
