"""Settings that say how a model is reached, not what it answers: the one list of them.

A rerun of a run id may change them (a model server that came back at another port, a longer
timeout) without its results being redone: they are in no cache key and no ingestion
fingerprint, and a change of a provider's endpoint is recorded as a move in the run's
config.json and manifest. Which model answers stays fixed: the model's name, its provider's
`kind`, the temperature, seed and output caps are compared as before.
"""

from __future__ import annotations

# Fields of a [providers.<name>] table: where its server is, which variable holds its key,
# the AWS region serving the same model, a fake's simulated latency.
PROVIDER_TRANSPORT = ("base_url", "api_key_env", "region", "latency_s")
# Dotted settings of how long to wait and how often to retry.
TRANSPORT_KEYS = ("models.timeout_s", "models.retry_attempts", "memory.params.timeout_s")


def is_transport(dotted: str) -> bool:
    """Whether the dotted settings key is one of the transport settings above."""
    section, _, rest = dotted.partition(".")
    name, _, field = rest.partition(".")
    if section == "providers" and name and field in PROVIDER_TRANSPORT:
        return True
    return any(dotted == key or dotted.startswith(key + ".") for key in TRANSPORT_KEYS)
