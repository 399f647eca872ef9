"""Bedrock chat models (the Converse API through langchain-aws) over botocore clients shared by
the process.

A botocore client is thread-safe and bound to no event loop (LangChain calls it from worker
threads), but making one costs tens of milliseconds and each holds its own connection pool:
models built for each task (each answer, each judge) share one pair of clients per region,
endpoint and timeout, so their kept-alive connections are reused. The clients close at exit.
"""

from __future__ import annotations

import atexit
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_aws import ChatBedrockConverse

_CONNECT_TIMEOUT_S = 10.0  # an endpoint that takes longer to accept is not there

_lock = threading.Lock()
_clients: dict[tuple[str | None, str | None, float], dict[str, Any]] = {}


def bedrock_client_config(timeout_s: float) -> Any:
    """botocore settings for Bedrock: one attempt per call, as ours are the only retries
    (`max_attempts` counts retries after the first call, so it would be 2 calls; the total
    is `total_max_attempts`, which wins over AWS_MAX_ATTEMPTS and ~/.aws/config), and
    `timeout_s` for each read."""
    from botocore.config import Config

    return Config(
        retries={"total_max_attempts": 1, "mode": "standard"},
        read_timeout=timeout_s,
        connect_timeout=min(timeout_s, _CONNECT_TIMEOUT_S),
    )


def bedrock_chat_model(
    model: str, region: str | None, endpoint: str | None, timeout_s: float, **options: Any
) -> ChatBedrockConverse:
    """A Converse model on the process's clients for (region, endpoint, timeout)."""
    from langchain_aws import ChatBedrockConverse

    key = (region, endpoint, timeout_s)
    with _lock:
        shared = _clients.get(key, {})
    built = ChatBedrockConverse(
        model=model,
        region_name=region,
        base_url=endpoint,
        config=bedrock_client_config(timeout_s),
        **shared,
        **options,
    )
    if not shared:
        built.client.meta.events.register(
            "before-parse.bedrock-runtime.Converse", _require_whole_body
        )
        with _lock:
            _clients.setdefault(
                key, {"client": built.client, "bedrock_client": built.bedrock_client}
            )
    return built


def _require_whole_body(response_dict: dict[str, Any], **_: Any) -> None:
    """botocore reads a body without checking its Content-Length, so a reply cut off mid-body
    would parse as an answer without output; raised as a lost connection instead (retried)."""
    from botocore.exceptions import IncompleteReadError

    expected = response_dict["headers"].get("content-length")
    body = response_dict.get("body")
    if expected is not None and isinstance(body, bytes) and len(body) < int(expected):
        raise IncompleteReadError(actual_bytes=len(body), expected_bytes=int(expected))


@atexit.register
def _close_clients() -> None:
    with _lock:
        pairs = list(_clients.values())
        _clients.clear()
    for pair in pairs:
        for client in pair.values():
            client.close()
