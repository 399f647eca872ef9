"""The environment of a botocore client talking to a loopback fake: fake credentials, no AWS
files, no instance metadata, so nothing reaches AWS and no real key is ever read."""

from __future__ import annotations

from pathlib import Path

import pytest


def use_fake_aws(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    for name in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-a-real-secret")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(folder / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(folder / "no-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
