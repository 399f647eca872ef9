"""OpenAI's Batch API (and servers speaking it): the requests as a JSON-lines file uploaded with
purpose "batch", a batch on /v1/chat/completions with a 24 h window, polled until it ends, then
its output file (replies) and error file (failed and expired items) read by custom id.

The control calls (upload, create, poll, download) are few and cheap to repeat, so the SDK's
own retries handle their transient faults.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final, Literal

from langchain_core.messages import AIMessage

from lme_bench.providers.batch_jobs.protocol import BatchRequest, ItemResult, JobState, JobStatus

ENDPOINT: Final[Literal["/v1/chat/completions"]] = "/v1/chat/completions"
WINDOW: Final[Literal["24h"]] = "24h"
CONTROL_RETRIES = 3
_STATES: dict[str, JobState] = {
    "validating": "running",
    "in_progress": "running",
    "finalizing": "running",
    "cancelling": "running",
    "completed": "completed",
    "failed": "failed",
    "expired": "expired",
    "cancelled": "cancelled",
}


def request_lines(requests: Sequence[BatchRequest]) -> bytes:
    """The input file: one JSON object per line naming its custom id, method, URL and body."""
    lines = [
        json.dumps(
            {"custom_id": r.custom_id, "method": "POST", "url": ENDPOINT, "body": r.body},
            ensure_ascii=False,
        )
        for r in requests
    ]
    return ("\n".join(lines) + "\n").encode()


def _error_text(line: dict[str, Any]) -> tuple[str, bool]:
    """An error line's text, and whether it says the window closed before the item ran."""
    error = line.get("error") or {}
    response = line.get("response") or {}
    if not error and response:
        body = response.get("body") or {}
        error = body.get("error") or {"message": f"status {response.get('status_code')}"}
    code = str(error.get("code") or "")
    text = f"{code}: {error.get('message', '')}" if code else str(error.get("message", ""))
    return text or "no reply", code == "batch_expired"


def parse_results(text: str) -> dict[str, ItemResult]:
    """Items of an output or error file by custom id."""
    found: dict[str, ItemResult] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
            custom_id = str(line["custom_id"])
        except (ValueError, KeyError, TypeError):
            raise ValueError(
                f"batch result line {number}: not a JSON object with a custom_id"
            ) from None
        response = line.get("response") or {}
        if response.get("status_code") == 200 and not line.get("error"):
            found[custom_id] = ItemResult(custom_id, response.get("body") or {})
        else:
            error, expired = _error_text(line)
            found[custom_id] = ItemResult(custom_id, None, error, expired)
    return found


def message_from_completion(body: dict[str, Any]) -> AIMessage:
    """A chat completion as the official judge request returns it: text, finish reason and
    token usage (lme_bench.judge.official_request)."""
    choice = body["choices"][0]
    usage = body.get("usage") or {}
    tokens = (int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0)))
    return AIMessage(
        content=choice["message"].get("content") or "",
        response_metadata={"finish_reason": choice.get("finish_reason")},
        usage_metadata={
            "input_tokens": tokens[0],
            "output_tokens": tokens[1],
            "total_tokens": sum(tokens),
        },
    )


class OpenAIBatchJobApi:
    provider = "openai"

    def __init__(self, api_key: str, base_url: str | None, timeout_s: float) -> None:
        from openai import OpenAI

        self._client = OpenAI(
            api_key=api_key, base_url=base_url, timeout=timeout_s, max_retries=CONTROL_RETRIES
        )

    def submit(self, requests: Sequence[BatchRequest], description: str) -> str:
        upload = self._client.files.create(
            file=("requests.jsonl", request_lines(requests), "application/jsonl"),
            purpose="batch",
        )
        batch = self._client.batches.create(
            input_file_id=upload.id,
            endpoint=ENDPOINT,
            completion_window=WINDOW,
            metadata={"description": description[:512]},
        )
        return batch.id

    def status(self, job_id: str) -> JobStatus:
        batch = self._client.batches.retrieve(job_id)
        counts = batch.request_counts
        return JobStatus(
            _STATES.get(batch.status, "running"),
            batch.status,
            counts.model_dump() if counts is not None else {},
        )

    def results(self, job_id: str) -> dict[str, ItemResult]:
        batch = self._client.batches.retrieve(job_id)
        found: dict[str, ItemResult] = {}
        for file_id in (batch.error_file_id, batch.output_file_id):  # replies win
            if file_id:
                found |= parse_results(self._client.files.content(file_id).text)
        return found

    def message(self, reply: dict[str, Any]) -> AIMessage:
        return message_from_completion(reply)

    def close(self) -> None:
        self._client.close()
