"""deployments/automations.yaml and its script without a server: the file is Prefect's
automation form once its block is given by id, it covers every shipped deployment, bad input
(a malformed file, a missing or wrong webhook URL) is one error and exit status 2, and a server
that does not answer one error and exit status 1."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from uuid import uuid4

import pytest
import yaml
from prefect.events.schemas.automations import AutomationCore, EventTrigger
from prefect.events.schemas.events import ResourceSpecification

from tests.integration.prefect_server import clean_environ, free_port

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "deployments" / "automation.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("automation_script", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_shipped_automation_fires_on_failed_and_crashed_runs_of_every_deployment() -> None:
    script = _script()
    (data,) = script.read_automations(script.DEFAULT_FILE)
    (action,) = data["actions"]
    assert action["type"] == "send-notification"
    assert action["block_document_id"] == "lme-bench-notify"  # the block by name

    block_id = uuid4()
    automation = AutomationCore.model_validate(
        data | {"actions": [action | {"block_document_id": str(block_id)}]}
    )
    trigger = automation.trigger
    assert isinstance(trigger, EventTrigger)
    assert trigger.expect == {"prefect.flow-run.Failed", "prefect.flow-run.Crashed"}
    assert isinstance(trigger.match_related, ResourceSpecification)
    assert trigger.match_related.model_dump() == {
        "prefect.resource.role": "tag",
        "prefect.resource.id": "prefect.tag.lme-bench",
    }
    body = automation.actions[0].body  # type: ignore[union-attr]
    for field in ("flow_run.name", "flow_run.state.message", "flow_run|ui_url"):
        assert f"{{{{ {field} }}}}" in body
    deployments = yaml.safe_load((ROOT / "deployments" / "prefect.yaml").read_text())["deployments"]
    assert [d["name"] for d in deployments if "lme-bench" not in d.get("tags", [])] == []


# Both are refused before any server is asked: the API URL names a closed port.
def test_a_file_without_named_automations_is_refused_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PREFECT_API_URL", f"http://127.0.0.1:{free_port()}/api")
    bad = tmp_path / "automations.yaml"
    bad.write_text("automations:\n  - name: fine\n    trigger: {}\n  - [not, a, mapping]\n")
    assert _script().main(["--file", str(bad)]) == 2
    assert capsys.readouterr().err == f"error: {bad}: automation 2 is not a mapping with a name\n"


def test_the_block_takes_its_url_from_the_environment_and_never_prints_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PREFECT_API_URL", f"http://127.0.0.1:{free_port()}/api")
    script = _script()
    monkeypatch.delenv("LME_BENCH_NOTIFY_URL", raising=False)
    assert script.main(["block", "slack"]) == 2
    assert "LME_BENCH_NOTIFY_URL is not set" in capsys.readouterr().err

    monkeypatch.setenv("LME_BENCH_NOTIFY_URL", "https://example.invalid/hooks/very-secret-token")
    assert script.main(["block", "teams"]) == 2
    printed = capsys.readouterr()
    assert "LME_BENCH_NOTIFY_URL is not a teams webhook URL" in printed.err
    assert "very-secret-token" not in printed.out + printed.err


def test_a_server_that_does_not_answer_is_one_error_naming_it() -> None:
    api = f"http://127.0.0.1:{free_port()}/api"
    done = subprocess.run(
        [sys.executable, str(SCRIPT)],
        env=clean_environ() | {"PREFECT_API_URL": api},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr.startswith(f"error: {api}: ConnectError: ")
    assert len(done.stderr.strip().splitlines()) == 1
