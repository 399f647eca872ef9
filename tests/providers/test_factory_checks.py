from __future__ import annotations

from pathlib import Path

import pytest

from lme_bench.config.settings import load_settings
from lme_bench.providers.errors import ProviderConfigError
from lme_bench.providers.factory import build_chat_model, check_models, parse_model
from lme_bench.providers.fake import ScriptedChatModel


def _settings(tmp_path: Path, text: str):  # type: ignore[no-untyped-def]
    path = tmp_path / "c.toml"
    path.write_text(text)
    return load_settings(path)


def test_every_problem_is_reported_at_once_before_any_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("LOCAL_KEY", raising=False)
    settings = _settings(
        tmp_path,
        """
[models]
agent = "openai:gpt-4o-mini"
qa = "local:llama3"
judge = "mystery:model"
[providers.local]
api_key_env = "LOCAL_KEY"
""",
    )
    with pytest.raises(ProviderConfigError) as caught:
        check_models(settings)
    text = str(caught.value)
    assert "[models] agent = 'openai:gpt-4o-mini': set OPENAI_API_KEY" in text
    assert "[models] qa = 'local:llama3': set [providers.local] base_url" in text
    assert "set LOCAL_KEY in the environment" in text
    assert "unknown provider 'mystery'" in text


def test_bedrock_without_credentials_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in (
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_PROFILE",
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
        "AWS_SESSION_TOKEN",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    settings = _settings(tmp_path, '[models]\nqa = "bedrock:anthropic.claude-3-5-haiku"\n')
    with pytest.raises(ProviderConfigError, match="no AWS credentials found"):
        check_models(settings)


def test_fake_and_configured_models_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    settings = _settings(tmp_path, '[models]\nagent = "fake:echo"\njudge = "openai:gpt-4o"\n')
    agent, judge = check_models(settings)
    assert isinstance(build_chat_model(agent, settings.models, 64), ScriptedChatModel)
    assert build_chat_model(judge, settings.models, 10).model_name == "gpt-4o"  # type: ignore[attr-defined]
    assert parse_model("qa", "openai:gpt-4o:2024", settings).model == "gpt-4o:2024"
    with pytest.raises(ProviderConfigError, match="expected 'provider:model'"):
        parse_model("qa", "gpt-4o", settings)
