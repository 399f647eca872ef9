"""What `prefect deployment run --watch` prints for a run of the benchmark flow.

The watcher prints every event and log line as rich markup, unescaped: a run name with the
config path in square brackets would read as markup (`[/srv/…]` a closing tag that stops the
CLI with MarkupError; `[configs/x.toml]` a style tag, swallowed). The name uses parentheses.
"""

from __future__ import annotations

import io
from datetime import UTC, datetime
from types import SimpleNamespace
from uuid import uuid4

import pytest
from lme_bench_flows import benchmark as module
from prefect.cli.flow_runs_watching import FlowRunFormatter
from prefect.client.schemas.objects import Log
from rich.console import Console


def _watched(config: str, monkeypatch: pytest.MonkeyPatch) -> str:
    request = {"config": config, "run_id": "weekly-1"}
    monkeypatch.setattr(
        module, "flow_run", SimpleNamespace(parameters={"request": request}, flow_name="benchmark")
    )
    name = module._run_name()
    log = Log.model_validate(
        {
            "name": "prefect.flow_runs",
            "level": 20,
            "message": f"Beginning flow run '{name}' for flow 'benchmark'",
            "timestamp": datetime.now(UTC),
            "flow_run_id": uuid4(),
        }
    )
    out = io.StringIO()
    formatter = FlowRunFormatter()  # type: ignore[no-untyped-call]
    Console(file=out, width=200).print(formatter.format(log))
    return out.getvalue()


@pytest.mark.parametrize("config", ["/srv/lme/weekly.toml", "configs/weekly.toml"])
def test_watch_prints_the_run_name_with_its_config(
    config: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert config in _watched(config, monkeypatch)
