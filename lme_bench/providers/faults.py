"""Why a model call failed, whatever SDK raised it: the cause of a retry, or not retryable.

Four causes are retried and counted apart: the provider throttled us (HTTP 429, Bedrock
ThrottlingException), the call timed out, the connection failed or dropped, or the provider
had a server fault (5xx). Anything else (bad request, auth, a bug) is not retryable. Each
provider kind classifies its own SDK's errors (`Provider.classify_fault`).
"""

from __future__ import annotations

from lme_bench.providers.errors import ProviderThrottled, ProviderUnavailable
from lme_bench.providers.fault_types import CAUSES, Cause, Fault, retry_after
from lme_bench.providers.registry import fault_classifiers

__all__ = ["CAUSES", "Cause", "Fault", "classify", "retry_after"]


def classify(error: BaseException) -> Fault:
    """The cause of a retryable fault (None when not retryable) and the retry-after seconds
    the provider asked for, if it did."""
    if isinstance(error, ProviderThrottled):
        return "throttled", error.retry_after_s
    if isinstance(error, ProviderUnavailable):
        return error.cause, None
    if isinstance(error, TimeoutError):
        return "timeout", None
    if isinstance(error, ConnectionError):
        return "connection", None
    for classify_fault in fault_classifiers():
        found = classify_fault(error)
        if found[0] is not None:
            return found
    return None, None
