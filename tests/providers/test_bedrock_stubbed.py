"""The Bedrock path with botocore's Stubber: real request building and parsing, no network."""

from __future__ import annotations

import asyncio

import boto3
from botocore.stub import ANY, Stubber
from langchain_aws import ChatBedrockConverse
from langchain_core.messages import HumanMessage

from lme_bench.providers.retry import RetryCount, RetryPolicy, call_with_retry

MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0"


def _reply(text: str) -> dict[str, object]:
    return {
        "output": {"message": {"role": "assistant", "content": [{"text": text}]}},
        "stopReason": "end_turn",
        "usage": {"inputTokens": 12, "outputTokens": 3, "totalTokens": 15},
        "metrics": {"latencyMs": 5},
    }


def test_converse_throttled_then_answers() -> None:
    client = boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key="secret",
    )
    stubber = Stubber(client)
    expected = {
        "modelId": MODEL,
        "messages": [{"role": "user", "content": [{"text": "Where do I live now?"}]}],
        "inferenceConfig": {"temperature": 0.0},
        "system": ANY,
    }
    stubber.add_client_error(
        "converse", service_error_code="ThrottlingException", http_status_code=400
    )
    stubber.add_response("converse", _reply("Austin."), expected)
    model = ChatBedrockConverse(client=client, model=MODEL, temperature=0.0)
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    count = RetryCount()
    with stubber:
        reply = asyncio.run(
            call_with_retry(
                lambda: model.ainvoke([HumanMessage("Where do I live now?")]),
                RetryPolicy(throttle_base_s=5),
                count=count,
                sleep=sleep,
            )
        )
    stubber.assert_no_pending_responses()
    assert reply.content == "Austin." or reply.text == "Austin."
    assert reply.usage_metadata and reply.usage_metadata["input_tokens"] == 12
    assert count.throttled == 1 and waits[0] >= 3.75
