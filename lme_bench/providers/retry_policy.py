"""How a model call is retried: attempts, and the backoff by cause (a provider kind may give
its own, `Provider.retry_policy`)."""

from __future__ import annotations

import random
from dataclasses import dataclass

from lme_bench.providers.fault_types import Cause


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    attempts: int = 6  # calls in all, the first included
    base_s: float = 1.0
    cap_s: float = 60.0
    throttle_base_s: float = 2.0  # Bedrock configs raise this (the original benchmarker used 5 s)
    throttle_cap_s: float = 120.0
    jitter: float = 0.25  # ± fraction of each delay

    def delay(
        self, cause: Cause, retry: int, retry_after_s: float | None, rng: random.Random
    ) -> float:
        base, cap = (
            (self.throttle_base_s, self.throttle_cap_s)
            if cause == "throttled"
            else (self.base_s, self.cap_s)
        )
        wait = min(cap, base * 2**retry) * (1 + rng.uniform(-self.jitter, self.jitter))
        if retry_after_s is not None:
            wait = max(wait, min(retry_after_s, cap))
        return max(0.0, float(wait))
