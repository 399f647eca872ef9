"""Anthropic's Message Batches API: the Messages bodies as one batch (POST /v1/messages/batches),
polled until its processing has ended, then its results (JSON lines naming each custom id:
succeeded with the message, errored, expired or canceled) read from its results URL.

No SDK, as for the Messages API itself (lme_bench.providers.anthropic_messages). The control
calls retry throttling, server faults and failed connections a few times themselves.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import openai
from langchain_core.messages import AIMessage

from lme_bench.providers.anthropic_messages import API_VERSION, messages_url, reply_message
from lme_bench.providers.batch_jobs.protocol import BatchRequest, ItemResult, JobState, JobStatus

if TYPE_CHECKING or int(openai.__version__.split(".")[0]) >= 3:
    import httpx2 as httpx
else:
    import httpx

CONTROL_ATTEMPTS = 4


class AnthropicBatchJobError(RuntimeError):
    """The Message Batches API refused a call, or kept failing it; names the call."""


def parse_results(text: str) -> dict[str, ItemResult]:
    """A results file's items by custom id."""
    found: dict[str, ItemResult] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
            custom_id, result = str(line["custom_id"]), line["result"]
            kind = result["type"]
        except (ValueError, KeyError, TypeError):
            raise ValueError(
                f"batch result line {number}: not a JSON object with a custom_id and a result"
            ) from None
        if kind == "succeeded":
            found[custom_id] = ItemResult(custom_id, result.get("message") or {})
        elif kind == "errored":
            error = (result.get("error") or {}).get("error") or result.get("error") or {}
            text_of = f"{error.get('type', 'error')}: {error.get('message', '')}"
            found[custom_id] = ItemResult(custom_id, None, text_of)
        else:  # expired, canceled
            found[custom_id] = ItemResult(custom_id, None, kind, expired=kind == "expired")
    return found


def job_state(batch: dict[str, Any]) -> JobState:
    if batch.get("processing_status") != "ended":
        return "running"
    if batch.get("cancel_initiated_at"):
        return "cancelled"
    counts = batch.get("request_counts") or {}
    return "expired" if counts.get("expired") else "completed"


class AnthropicBatchJobApi:
    provider = "anthropic"

    def __init__(self, api_key: str, base_url: str | None, timeout_s: float) -> None:
        self.url = messages_url(base_url) + "/batches"
        self._client = httpx.Client(
            timeout=timeout_s,
            headers={"x-api-key": api_key, "anthropic-version": API_VERSION},
        )

    def _call(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        for attempt in range(CONTROL_ATTEMPTS):
            try:
                response = self._client.request(method, url, **kwargs)
            except httpx.TransportError as error:
                if attempt + 1 == CONTROL_ATTEMPTS:
                    raise AnthropicBatchJobError(f"{method} {url}: {error!r}") from error
            else:
                if response.status_code == 200:
                    return response
                if response.status_code != 429 and response.status_code < 500:
                    break
                if attempt + 1 == CONTROL_ATTEMPTS:
                    break
            time.sleep(2.0**attempt)
        raise AnthropicBatchJobError(
            f"{method} {url}: HTTP {response.status_code}: {response.text[:200]}"
        )

    def submit(self, requests: Sequence[BatchRequest], description: str) -> str:
        body = {"requests": [{"custom_id": r.custom_id, "params": r.body} for r in requests]}
        return str(self._call("POST", self.url, json=body).json()["id"])

    def _batch(self, job_id: str) -> dict[str, Any]:
        found: dict[str, Any] = self._call("GET", f"{self.url}/{job_id}").json()
        return found

    def status(self, job_id: str) -> JobStatus:
        batch = self._batch(job_id)
        counts = {k: int(v) for k, v in (batch.get("request_counts") or {}).items()}
        return JobStatus(job_state(batch), str(batch.get("processing_status")), counts)

    def results(self, job_id: str) -> dict[str, ItemResult]:
        batch = self._batch(job_id)
        url = batch.get("results_url")
        if not url:
            return {}
        return parse_results(self._call("GET", url).text)

    def message(self, reply: dict[str, Any]) -> AIMessage:
        return reply_message(reply)

    def close(self) -> None:
        self._client.close()
