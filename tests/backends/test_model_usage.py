"""A memory system's own model calls as its Usage reports them: replies cut by the output cap
and timed-out attempts included, counted from the memory model lme-bench hands it."""

from __future__ import annotations

import asyncio
import dataclasses

from langchain_core.messages import HumanMessage

from lme_bench.backends.model_usage import model_account_counts, model_usage_since
from lme_bench.providers.accounted_chat import AccountedChatModel
from lme_bench.providers.fake import ScriptedChatModel
from lme_bench.providers.retry import RetryPolicy


def test_capped_replies_and_timeouts_reach_the_systems_usage() -> None:
    inner = ScriptedChatModel(
        script=["one two three four five"], max_tokens=3, fault_every=2, fault_cause="timeout"
    )
    model = AccountedChatModel(inner=inner, policy=RetryPolicy(base_s=0.0, jitter=0.0))
    model.invoke([HumanMessage("first")])  # before the system opened: not its calls
    before = model_account_counts(model.account)
    # every second attempt times out: each call below times out once, then is answered, capped
    reply = model.invoke([HumanMessage("extract")])
    asyncio.run(model.ainvoke([HumanMessage("again")]))
    assert reply.content == "one two three"
    usage = model_usage_since(model.account, before, embedding_calls=4, embedded_texts=9)
    assert dataclasses.astuple(usage)[0] == 2  # model calls
    assert (usage.capped_replies, usage.timeouts) == (2, 2)
    assert (usage.embedding_calls, usage.embedded_texts) == (4, 9)
    assert model_usage_since(None, model_account_counts(None)).model_calls == 0
