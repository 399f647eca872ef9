"""The loopback Bedrock fake behaves like the runtime endpoint where botocore can tell: HTTP/1.1
kept alive, ConverseStream in the AWS event-stream framing, output caps, honest usage, and the
faults it is told to have. Fake credentials only; nothing leaves the machine."""

from __future__ import annotations

import http.client
import json
from pathlib import Path
from typing import Any

import boto3
import pytest
import urllib3
from botocore.config import Config
from botocore.eventstream import EventStreamBuffer
from botocore.exceptions import (
    ClientError,
    ConnectionClosedError,
    EventStreamError,
    ReadTimeoutError,
)

from tests.providers import aws_eventstream
from tests.providers.aws_env import use_fake_aws
from tests.providers.behaviour import Behaviour
from tests.providers.fake_bedrock_server import serve_bedrock

MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0"
ASK = [{"role": "user", "content": [{"text": "Where do I live now?"}]}]
TEXT = "You live in Austin, near the river."  # 7 tokens


@pytest.fixture(autouse=True)
def fake_aws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_fake_aws(monkeypatch, tmp_path)


def _client(url: str, timeout_s: float = 10.0) -> Any:
    config = Config(retries={"total_max_attempts": 1, "mode": "standard"}, read_timeout=timeout_s)
    return boto3.client("bedrock-runtime", region_name="us-east-1", endpoint_url=url, config=config)


def _streamed(client: Any, **extra: Any) -> list[dict[str, Any]]:
    return list(client.converse_stream(modelId=MODEL, messages=ASK, **extra)["stream"])


def test_event_stream_messages_decode_in_botocore() -> None:
    buffer = EventStreamBuffer()
    delta = {"contentBlockIndex": 0, "delta": {"text": "Austin"}}
    data = aws_eventstream.event("contentBlockDelta", delta)
    data += aws_eventstream.exception("throttlingException", "slow down")
    buffer.add_data(data[:7])  # a message split across reads
    assert list(buffer) == []
    buffer.add_data(data[7:])
    first, second = list(buffer)
    assert first.headers[":event-type"] == "contentBlockDelta"
    assert json.loads(first.payload) == delta
    assert first.to_response_dict()["status_code"] == 200
    assert second.headers[":exception-type"] == "throttlingException"
    assert second.to_response_dict()["status_code"] == 400


def test_converse_and_converse_stream_share_one_kept_connection() -> None:
    with serve_bedrock(["ok"], text=TEXT) as (url, fake):
        client = _client(url)
        replies = [client.converse(modelId=MODEL, messages=ASK) for _ in range(2)]
        events = _streamed(client)
        last = client.converse(modelId=MODEL, messages=ASK)
        conn = http.client.HTTPConnection("127.0.0.1", int(url.rsplit(":", 1)[1]))
        conn.request("POST", fake.paths[0], json.dumps({"messages": ASK}))
        response = conn.getresponse()
        response.read()
    assert (response.version, response.status) == (11, 200)
    assert fake.connections == 2 and len(set(fake.peers[:4])) == 1  # boto3's, then ours
    assert fake.paths[2].endswith("/converse-stream") and fake.bodies[0]["messages"] == ASK
    for reply in [*replies, last]:
        assert reply["output"]["message"]["content"] == [{"text": TEXT}]
        assert reply["stopReason"] == "end_turn" and reply["usage"]["outputTokens"] == 7
    text = "".join(
        e["contentBlockDelta"]["delta"]["text"] for e in events if "contentBlockDelta" in e
    )
    assert text == TEXT
    assert next(iter(events[0])) == "messageStart" and events[-2]["messageStop"]["stopReason"] == (
        "end_turn"
    )
    assert events[-1]["metadata"]["usage"] == {
        "inputTokens": 12,
        "outputTokens": 7,
        "totalTokens": 19,
    }


def test_max_tokens_cuts_a_long_reply_with_stop_reason_max_tokens() -> None:
    with serve_bedrock([Behaviour(length=30)]) as (url, _):
        client = _client(url)
        capped = client.converse(modelId=MODEL, messages=ASK, inferenceConfig={"maxTokens": 4})
        whole = client.converse(modelId=MODEL, messages=ASK)
        events = _streamed(client, inferenceConfig={"maxTokens": 5})
    assert capped["stopReason"] == "max_tokens" and capped["usage"]["outputTokens"] == 4
    assert len(capped["output"]["message"]["content"][0]["text"].split()) == 4
    assert whole["stopReason"] == "end_turn" and whole["usage"]["outputTokens"] == 30
    assert len([e for e in events if "contentBlockDelta" in e]) == 5
    assert events[-2]["messageStop"]["stopReason"] == "max_tokens"


@pytest.mark.parametrize("stream", [False, True])
def test_a_connection_dropped_before_the_reply_is_connection_closed(stream: bool) -> None:
    with serve_bedrock([Behaviour(fault="drop"), "ok"]) as (url, fake):
        client = _client(url)
        with pytest.raises(ConnectionClosedError):
            _streamed(client) if stream else client.converse(modelId=MODEL, messages=ASK)
        assert client.converse(modelId=MODEL, messages=ASK)["stopReason"] == "end_turn"
    assert fake.connections == 2


def test_a_stream_dropped_midway_fails_while_it_is_read() -> None:
    with serve_bedrock([Behaviour(fault="drop", after_tokens=2)], text=TEXT) as (url, _):
        response = _client(url).converse_stream(modelId=MODEL, messages=ASK)
        seen: list[dict[str, Any]] = []
        # botocore leaves urllib3's error unwrapped while a stream is read
        with pytest.raises(urllib3.exceptions.ProtocolError, match="ended prematurely"):
            seen.extend(response["stream"])
    assert [next(iter(e)) for e in seen] == [
        "messageStart",
        "contentBlockDelta",
        "contentBlockDelta",
    ]


@pytest.mark.parametrize("after_tokens", [0, 2])
def test_a_stall_ends_in_a_read_timeout(after_tokens: int) -> None:
    with serve_bedrock([Behaviour(fault="stall", after_tokens=after_tokens)]) as (url, fake):
        with pytest.raises(ReadTimeoutError):
            _client(url, timeout_s=0.3).converse(modelId=MODEL, messages=ASK)
        assert not fake.released.is_set()
    assert fake.released.is_set()  # the stalled handler was let go when the server stopped


@pytest.mark.parametrize(
    ("status", "code"),
    [
        (429, "ThrottlingException"),
        (500, "InternalServerException"),
        (502, "502"),
        (503, "ServiceUnavailableException"),
    ],
)
def test_error_statuses_are_client_errors_with_bedrocks_codes(status: int, code: str) -> None:
    with (
        serve_bedrock([Behaviour(status=status)]) as (url, _),
        pytest.raises(ClientError) as raised,
    ):
        _client(url).converse(modelId=MODEL, messages=ASK)
    error = raised.value.response
    assert error["Error"]["Code"] == code
    assert error["ResponseMetadata"]["HTTPStatusCode"] == status


def test_an_error_mid_stream_is_an_exception_event() -> None:
    with serve_bedrock([Behaviour(status=429, after_tokens=1)], text=TEXT) as (url, _):
        response = _client(url).converse_stream(modelId=MODEL, messages=ASK)
        seen: list[dict[str, Any]] = []
        with pytest.raises(EventStreamError) as raised:
            seen.extend(response["stream"])
    assert raised.value.response["Error"]["Code"] == "throttlingException"
    assert [next(iter(e)) for e in seen] == ["messageStart", "contentBlockDelta"]
