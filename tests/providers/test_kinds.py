"""Each provider kind is one object in the registry: the settings' kinds are its kinds, and what
differs between kinds (checks, retry policy, faults, judge request shape, batch API, the
estimate's token rule) is asked of that object."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import pytest

from lme_bench.config.settings import ConfigError, ProviderSettings, Settings, load_settings
from lme_bench.judge.batch_job_stage import judge_specs
from lme_bench.judge.request_shapes import request_shape
from lme_bench.providers import faults, registry
from lme_bench.providers.factory import parse_model, problems, retry_policy
from lme_bench.providers.kinds.fake import Fake
from lme_bench.providers.retry import RetryPolicy
from lme_bench.qa.batch_job_stage import reader_spec
from lme_bench.run.estimate import _counter


def _settings(tmp_path: Path, text: str) -> Settings:
    path = tmp_path / "c.toml"
    path.write_text(text)
    return load_settings(path)


def test_the_settings_kinds_are_the_registry_s_in_its_order() -> None:
    kind = ProviderSettings.model_fields["kind"].annotation
    assert get_args(kind) == tuple(registry.PROVIDERS)
    assert all(provider.kind == name for name, provider in registry.PROVIDERS.items())
    # every kind but OpenAI-compatible (it needs a base_url) is a provider name of its own
    assert list(registry.BUILT_IN) == ["openai", "anthropic", "bedrock", "fake"]


class _SlowFake(Fake):
    """The fake kind with hooks of its own, to see who asks the kind's object."""

    judge_batch = True
    answer_batch = True
    tokens_are_words = False

    def retry_policy(self, models):  # type: ignore[no-untyped-def]
        return RetryPolicy(attempts=2, base_s=7.0)

    def own_problems(self, spec, where):  # type: ignore[no-untyped-def]
        return [f"{where}: a slow fake"] if spec.role == "judge" else []

    def classify_fault(self, error: BaseException) -> faults.Fault:
        return ("server", 3.0) if isinstance(error, LookupError) else (None, None)


@pytest.fixture
def slow_fake(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry.PROVIDERS, "fake", _SlowFake())
    registry.fault_classifiers.cache_clear()
    yield
    registry.fault_classifiers.cache_clear()


def test_every_kind_hook_is_asked_of_the_kind_s_object(tmp_path: Path, slow_fake: None) -> None:
    settings = _settings(tmp_path, '[models]\nqa = "fake:echo"\njudge = "fake:yes"\n')
    spec = parse_model("judge", "fake:yes", settings)
    assert retry_policy(spec, settings.models) == RetryPolicy(attempts=2, base_s=7.0)
    assert problems(spec) == ["[models] judge = 'fake:yes': a slow fake"]
    assert faults.classify(LookupError("gone")) == ("server", 3.0)
    assert faults.classify(ValueError("bad request")) == (None, None)
    assert judge_specs(settings) == [spec]  # the judge batch stage takes it now
    assert reader_spec(settings).label == "fake:echo"
    assert _counter("fake:echo", settings) == ("fake:echo", False)


def test_a_kind_without_the_hook_keeps_the_common_behaviour(tmp_path: Path) -> None:
    settings = _settings(tmp_path, '[models]\nqa = "fake:echo"\njudge = "fake:yes"\n')
    spec = parse_model("judge", "fake:yes", settings)
    assert retry_policy(spec, settings.models) == RetryPolicy(attempts=6)
    assert problems(spec) == []
    assert faults.classify(LookupError("gone")) == (None, None)
    assert _counter("fake:echo", settings) == ("fake:echo", True)
    with pytest.raises(ConfigError, match=r"\(OpenAI, OpenAI-compatible, Anthropic or Bedrock"):
        judge_specs(settings)
    with pytest.raises(ConfigError, match=r"\(OpenAI or OpenAI-compatible only\)"):
        reader_spec(settings)


@pytest.mark.parametrize("kind", list(registry.PROVIDERS))
def test_the_judge_request_shape_is_the_kind_s(kind: str) -> None:
    assert request_shape(kind, "o4-mini") == registry.provider_for(kind).judge_shape("o4-mini")
    with pytest.raises(ValueError, match="unsupported provider kind 'nope'"):
        request_shape("nope", "m")
