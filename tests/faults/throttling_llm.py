"""Replies for the loopback OpenAI-compatible server (tests/providers/fake_openai_server.py):
the package's fake policies, chosen by the requested model name, behind HTTP 429s for a seeded
share of the calls."""

from __future__ import annotations

import hashlib
import json
import random
import threading
from typing import Any

from langchain_core.messages import HumanMessage

from lme_bench.providers.fake_policies import fake_policy


def last_message_text(body: dict[str, Any]) -> str:
    content = body["messages"][-1].get("content") or ""
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content)


class ThrottlingPolicies:
    """Answers like `fake:<model>`; an attempt is throttled when a draw seeded by the request
    body and its attempt number falls under `share`, and never more than `max_in_a_row` times
    for the same body, so which calls are throttled does not depend on their order."""

    def __init__(self, share: float, seed: int, max_in_a_row: int = 2) -> None:
        self.share, self.seed, self.max_in_a_row = share, seed, max_in_a_row
        self.attempts: dict[str, int] = {}
        self.throttled = 0  # 429s sent
        self.first_attempts_throttled = 0
        self.answered = 0
        self._lock = threading.Lock()

    def _throttle(self, fingerprint: str) -> bool:
        with self._lock:
            attempt = self.attempts.get(fingerprint, 0)
            self.attempts[fingerprint] = attempt + 1
            draw = random.Random(f"{self.seed}:{fingerprint}:{attempt}").random()
            throttle = attempt < self.max_in_a_row and draw < self.share
            self.throttled += throttle
            self.first_attempts_throttled += throttle and attempt == 0
            self.answered += not throttle
        return throttle

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        fingerprint = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
        if self._throttle(fingerprint):
            return {"status": 429, "retry_after": "0", "message": "Rate limit reached"}
        policy = fake_policy(body["model"])  # generic fakes and those beside their backends
        if policy is None:
            return {"status": 404, "message": f"no model {body['model']!r}"}
        reply = policy([HumanMessage(last_message_text(body))])
        if reply.tool_calls:
            return {"tool_calls": [(call["name"], call["args"]) for call in reply.tool_calls]}
        return {"content": str(reply.content)}

    @property
    def requests(self) -> int:
        return self.throttled + self.answered
