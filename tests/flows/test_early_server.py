"""`lme-bench run`'s temporary Prefect server started before Prefect is imported
(flows/early_server.py): none when the environment names a server, stopped on bad input.
A run against it is exercised by every `lme-bench run` test (tests/cli/test_stopping.py: the
run's temporary server is its child and is stopped with it)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from lme_bench_flows import early_server


def test_no_server_when_the_environment_names_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:4200/api")
    server = early_server.start()
    assert server.process is None
    server.warm_up(SimpleNamespace(run_id="r"))(True)  # nothing to hand over


def test_stopped_when_the_data_are_bad(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    monkeypatch.setenv("PREFECT_HOME", str(tmp_path))
    server = early_server.start()
    process = server.process
    assert process is not None and process.poll() is None
    server.warm_up(SimpleNamespace(run_id="r"))(False)
    assert process.poll() is not None and server.process is None


def test_the_run_reaches_it_through_a_settings_context(monkeypatch: pytest.MonkeyPatch) -> None:
    from prefect.settings import (
        PREFECT_API_URL,
        PREFECT_FLOWS_HEARTBEAT_FREQUENCY,
        PREFECT_UI_URL,
    )

    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:4200/api")  # start no child here
    server = early_server.start()
    server.api_url = "http://127.0.0.1:8123/api"  # as once the child answers
    before = PREFECT_API_URL.value()
    with server.serving():
        assert PREFECT_API_URL.value() == "http://127.0.0.1:8123/api"
        assert PREFECT_FLOWS_HEARTBEAT_FREQUENCY.value() is None
        assert not PREFECT_UI_URL.value()  # no "View at" link to a server without a UI
    assert PREFECT_API_URL.value() == before
