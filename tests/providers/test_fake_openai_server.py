"""The loopback OpenAI-compatible fake behaves like a real server where clients can tell:
HTTP/1.1 kept alive, chunked streams, output caps, honest usage, and the faults it is told to
have, as the openai SDK and httpx see them."""

from __future__ import annotations

import http.client
import json
import time
from typing import Any

import httpx
import openai
import pytest

from tests.providers.behaviour import Behaviour
from tests.providers.fake_openai_server import serve

TEXT = "Your dog is called Max and he is four."  # 9 tokens
ASK = [{"role": "user", "content": "What is my dog called?"}]


def _port(url: str) -> int:
    return httpx.URL(url).port or 80


def _post(conn: http.client.HTTPConnection, body: dict[str, Any]) -> http.client.HTTPResponse:
    conn.request(
        "POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json"}
    )
    return conn.getresponse()


def _client(url: str, timeout_s: float = 10.0) -> openai.OpenAI:
    return openai.OpenAI(base_url=url, api_key="sk-test", max_retries=0, timeout=timeout_s)


def _call(client: openai.OpenAI, stream: bool) -> None:
    if stream:
        list(client.chat.completions.create(model="m", messages=ASK, stream=True))
    else:
        client.chat.completions.create(model="m", messages=ASK)


def test_http11_keeps_one_connection_for_many_requests() -> None:
    with serve([{"content": TEXT}]) as (url, fake):
        conn = http.client.HTTPConnection("127.0.0.1", _port(url))
        for _ in range(3):
            response = _post(conn, {"model": "m", "messages": ASK})
            assert (response.version, response.status) == (11, 200)  # "HTTP/1.1 200 OK"
            length = response.getheader("Content-Length")
            assert length is not None and len(response.read()) == int(length)
            assert not response.will_close
        conn.close()
        with httpx.Client() as client:  # another client, its own kept connection
            for _ in range(2):
                client.post(f"{url}/chat/completions", json={"model": "m", "messages": ASK})
    assert len(fake.requests) == 5 and fake.connections == 2
    assert len(set(fake.peers[:3])) == 1 and len(set(fake.peers[3:])) == 1
    assert fake.peers[0] != fake.peers[3]


def test_http10_fallback_closes_every_connection() -> None:
    with serve([{"content": TEXT}], keep_alive=False) as (url, fake), httpx.Client() as client:
        for _ in range(3):
            response = client.post(f"{url}/chat/completions", json={"model": "m", "messages": ASK})
            assert response.http_version == "HTTP/1.0" and response.json()["choices"]
    assert fake.connections == 3 and len(set(fake.peers)) == 3


def test_stopping_the_server_closes_idle_kept_connections() -> None:
    with serve([{"content": TEXT}]) as (url, _):
        conn = http.client.HTTPConnection("127.0.0.1", _port(url))
        _post(conn, {"model": "m", "messages": ASK}).read()
    with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
        _post(conn, {"model": "m", "messages": ASK}).read()


def test_streams_chunked_over_a_kept_connection_with_usage_when_asked() -> None:
    with serve([{"content": TEXT}]) as (url, fake):
        conn = http.client.HTTPConnection("127.0.0.1", _port(url))
        response = _post(conn, {"model": "m", "messages": ASK, "stream": True})
        assert response.getheader("Transfer-Encoding") == "chunked"
        events = response.read().decode().split("\n\n")
        assert events[-2:] == ["data: [DONE]", ""]
        chunks = [json.loads(e.removeprefix("data: ")) for e in events[:-2]]
        assert not any("usage" in c for c in chunks)  # not asked for
        assert "".join(c["choices"][0]["delta"].get("content", "") for c in chunks) == TEXT
        _post(conn, {"model": "m", "messages": ASK}).read()  # the same connection, after it

        stream = _client(url).chat.completions.create(
            model="m", messages=ASK, stream=True, stream_options={"include_usage": True}
        )
        chunks = list(stream)
    assert fake.peers[0] == fake.peers[1]
    usage = chunks[-1].usage
    assert chunks[-1].choices == [] and usage is not None
    assert (usage.prompt_tokens, usage.completion_tokens) == (11, 9)
    assert chunks[-2].choices[0].finish_reason == "stop"


def test_the_output_cap_cuts_a_long_reply_and_usage_counts_what_was_generated() -> None:
    with serve([{"content": "scripted", "behaviour": Behaviour(length=40)}]) as (url, _):
        client = _client(url)
        capped = client.chat.completions.create(model="m", messages=ASK, max_tokens=8)
        newer = client.chat.completions.create(model="m", messages=ASK, max_completion_tokens=5)
        whole = client.chat.completions.create(model="m", messages=ASK)
        streamed = list(
            client.chat.completions.create(
                model="m",
                messages=ASK,
                max_tokens=6,
                stream=True,
                stream_options={"include_usage": True},
            )
        )
    for reply, cap in ((capped, 8), (newer, 5)):
        assert reply.choices[0].finish_reason == "length"
        assert len((reply.choices[0].message.content or "").split()) == cap
        assert reply.usage is not None and reply.usage.completion_tokens == cap
    assert whole.choices[0].finish_reason == "stop"
    assert len((whole.choices[0].message.content or "").split()) == 40
    assert whole.usage is not None and whole.usage.completion_tokens == 40
    deltas = [c.choices[0].delta.content for c in streamed if c.choices]
    assert len([d for d in deltas if d]) == 6
    assert streamed[-2].choices[0].finish_reason == "length"
    assert streamed[-1].usage is not None and streamed[-1].usage.completion_tokens == 6


def test_latency_and_generation_speed_delay_the_reply() -> None:
    slow = Behaviour(latency_s=0.3, length=6, tokens_per_s=20)
    with serve([{"content": TEXT}], behaviour=slow) as (url, _):
        started = time.monotonic()
        reply = _client(url).chat.completions.create(model="m", messages=ASK)
        waited = time.monotonic() - started
    assert reply.usage is not None and reply.usage.completion_tokens == 6
    assert waited >= 0.3 + 6 / 20  # time to first byte, then six tokens at 20 per second


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("after_tokens", [0, 3])
def test_a_dropped_connection_is_a_connection_error_then_the_next_call_succeeds(
    stream: bool, after_tokens: int
) -> None:
    drop = {"content": TEXT, "behaviour": Behaviour(fault="drop", after_tokens=after_tokens)}
    with serve([drop, {"content": TEXT}]) as (url, fake):
        client = _client(url)
        with pytest.raises(openai.APIConnectionError) as raised:
            _call(client, stream)
        assert not isinstance(raised.value, openai.APITimeoutError)
        reply = client.chat.completions.create(model="m", messages=ASK)
    assert reply.choices[0].message.content == TEXT
    assert fake.connections == 2  # the dropped one, then a new one


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("after_tokens", [0, 3])
def test_a_stall_keeps_the_socket_open_until_the_client_times_out(
    stream: bool, after_tokens: int
) -> None:
    stall = {"content": TEXT, "behaviour": Behaviour(fault="stall", after_tokens=after_tokens)}
    with serve([stall]) as (url, fake):
        client = _client(url, timeout_s=0.3)
        with pytest.raises(openai.APITimeoutError):
            _call(client, stream)
        assert fake.server is not None and not fake.server.released.is_set()
    assert len(fake.requests) == 1  # and the server stopped: the stalled handler was released


@pytest.mark.parametrize(
    ("status", "error", "message"),
    [
        (429, openai.RateLimitError, "Rate limit reached"),
        (500, openai.InternalServerError, "had an error while processing"),
        (502, openai.InternalServerError, "Error code: 502"),
        (503, openai.InternalServerError, "currently overloaded"),
    ],
)
def test_error_statuses_parse_as_the_sdks_error_classes(
    status: int, error: type[openai.APIStatusError], message: str
) -> None:
    with serve([{"behaviour": Behaviour(status=status)}]) as (url, _):
        with pytest.raises(error, match=message) as raised:
            _client(url).chat.completions.create(model="m", messages=ASK)
        assert raised.value.status_code == status
        if status != 502:  # a gateway's page is HTML, OpenAI's errors are JSON
            assert isinstance(raised.value.body, dict) and raised.value.body["message"]


def test_an_error_mid_stream_comes_as_an_error_event() -> None:
    failing = {"content": TEXT, "behaviour": Behaviour(status=503, after_tokens=2)}
    with serve([failing]) as (url, _):
        seen: list[str] = []
        with pytest.raises(openai.APIError, match="overloaded"):
            for chunk in _client(url).chat.completions.create(model="m", messages=ASK, stream=True):
                seen.append(chunk.choices[0].delta.content or "")
    assert "".join(seen) == "Your dog"  # two tokens came before the error
