"""Anthropic's Messages API (POST /v1/messages) over the process's shared HTTP client.

No SDK: one JSON request per call, sent as given. Throttling (429) and server faults (5xx,
529 overloaded) raise ProviderThrottled / ProviderUnavailable, timeouts and failed or dropped
connections ProviderUnavailable, so our retries treat them like any provider's; any other
status (a bad request, a wrong key) is an AnthropicRequestError with the API's own message,
not retried. The reply comes back as an AIMessage with its token usage and stop reason.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import openai
from langchain_core.messages import AIMessage

from lme_bench.providers.errors import ProviderThrottled, ProviderUnavailable
from lme_bench.providers.http_clients import model_http_client

# The HTTP library of the shared client (lme_bench.providers.http_clients), for its errors.
if TYPE_CHECKING or int(openai.__version__.split(".")[0]) >= 3:
    import httpx2 as httpx
else:
    import httpx

API_VERSION = "2023-06-01"
DEFAULT_BASE_URL = "https://api.anthropic.com"


class AnthropicRequestError(RuntimeError):
    """The API refused the request (4xx other than 429): not retried."""

    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(f"Anthropic API {status} {kind}: {message}")
        self.status = status
        self.kind = kind


def messages_url(base_url: str | None) -> str:
    """The Messages endpoint under `base_url` (the API root, with or without /v1),
    ANTHROPIC_BASE_URL, or Anthropic's own."""
    base = (base_url or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
    return f"{base}/messages" if base.endswith("/v1") else f"{base}/v1/messages"


def _error_of(response: httpx.Response) -> tuple[str, str]:
    """The error's type and message from Anthropic's error body, or the body's start."""
    try:
        error = response.json()["error"]
        return str(error["type"]), str(error["message"])
    except (ValueError, KeyError, TypeError):
        return "error", response.text[:200]


def _retry_after(response: httpx.Response) -> float | None:
    try:
        return float(response.headers["retry-after"])
    except (KeyError, ValueError):
        return None


def reply_message(payload: dict[str, Any]) -> AIMessage:
    """A Messages API reply as an AIMessage: its text blocks joined, usage and stop reason."""
    try:
        blocks = payload["content"]
        usage = payload["usage"]
        text = "".join(b["text"] for b in blocks if b.get("type") == "text")
        tokens = int(usage["input_tokens"]), int(usage["output_tokens"])
    except (KeyError, TypeError, ValueError) as error:
        raise ValueError(f"Anthropic API: a reply without content or usage ({error!r})") from error
    return AIMessage(
        content=text,
        response_metadata={
            "stop_reason": payload.get("stop_reason"),
            "model": payload.get("model"),
        },
        usage_metadata={
            "input_tokens": tokens[0],
            "output_tokens": tokens[1],
            "total_tokens": sum(tokens),
        },
    )


class AnthropicMessages:
    """POSTs bodies to the Messages endpoint with the key from the environment (never logged)."""

    def __init__(self, api_key: str, base_url: str | None, timeout_s: float) -> None:
        self.url = messages_url(base_url)
        self.timeout_s = timeout_s
        self._headers = {
            "x-api-key": api_key,
            "anthropic-version": API_VERSION,
            "content-type": "application/json",
        }
        self._client = model_http_client(self.url)  # shared by the process: never closed here

    async def create(self, body: dict[str, Any]) -> AIMessage:
        try:
            response = await self._client.post(
                self.url, json=body, headers=self._headers, timeout=self.timeout_s
            )
        except httpx.TimeoutException as error:
            raise ProviderUnavailable(
                f"Anthropic API: no reply within {self.timeout_s:g} s", "timeout"
            ) from error
        except httpx.TransportError as error:
            raise ProviderUnavailable(
                f"Anthropic API: connection failed ({type(error).__name__}: {error})", "connection"
            ) from error
        status = response.status_code
        if status == 200:
            try:
                payload = response.json()
            except ValueError as error:
                raise ValueError(f"Anthropic API: a reply that is not JSON ({error})") from error
            return reply_message(payload)
        kind, message = _error_of(response)
        if status == 429:
            raise ProviderThrottled(f"Anthropic API 429 {kind}: {message}", _retry_after(response))
        if status >= 500:  # 529: overloaded
            raise ProviderUnavailable(f"Anthropic API {status} {kind}: {message}", "server")
        raise AnthropicRequestError(status, kind, message)
