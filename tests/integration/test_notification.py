"""The failure notification of deployments/automations.yaml on a real Prefect server: `make
deploy` creates it from the project's file (and says how to make the block it needs while that
is missing), a run of the smoke deployment that fails and one that crashes each send a message
through a custom webhook block to a loopback receiver, with the run's name, state message and
link."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import suppress
from pathlib import Path
from uuid import UUID

import pytest

from tests.integration.prefect_server import BIN, ROOT, PrefectStack
from tests.integration.runs import (
    DEPLOYMENT,
    api_client,
    deployment_run,
    flow_run_id,
    read_flow_run,
    wait_for_attempt,
    write_config,
)
from tests.integration.webhook_receiver import Received, Receiver, webhook_receiver
from tests.providers.behaviour import Behaviour
from tests.providers.fake_openai_server import serve

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads /proc (Linux)"),
]

AUTOMATION = "lme-bench run failed"
BLOCK = "lme-bench-notify"
URL_ENV = "LME_BENCH_NOTIFY_URL"
VENV = Path(sys.executable).parent.parent
# Prefect's triggers and actions services react to a state's event within seconds; the bound
# is for a busy machine.
MESSAGE_TIMEOUT_S = 90.0


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with webhook_receiver() as found:
        yield found


@pytest.fixture
def clean_server(prefect: PrefectStack) -> Iterator[None]:
    """The shared server is left without this test's automation and block."""
    yield
    with api_client(prefect) as client:
        for automation in client.read_automations_by_name(AUTOMATION):
            client.delete_automation(automation.id)
        with suppress(Exception):
            client.delete_block_document(
                client.read_block_document_by_name(BLOCK, "custom-webhook").id
            )


def _automation_services_enabled(stack: PrefectStack) -> bool:
    """Whether the server runs the triggers and actions services (one setting holds both)."""
    with urllib.request.urlopen(f"{stack.api_url}/admin/settings", timeout=30) as response:
        settings = json.load(response)
    return bool(settings["server"]["services"]["triggers"]["enabled"])


def _automation_step(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "python"), "deployments/automation.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _make_deploy(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`make deploy` with this venv; its install stamp is taken as made (-o), never remade."""
    return subprocess.run(
        ["make", "--no-print-directory", "-o", f"{VENV}/.installed", "deploy", f"VENV={VENV}"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )


def _about(run: UUID) -> Callable[[Received], bool]:
    return lambda message: str(run) in json.dumps(message.body)


def wait_until(done: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise TimeoutError(f"waited {timeout:.0f} s for {what}")
        time.sleep(0.2)


def _flow_run_processes(run: UUID) -> list[int]:
    """The processes the worker started for that flow run (they carry its id)."""
    marker = f"PREFECT__FLOW_RUN_ID={run}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with suppress(OSError):
                if marker in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
    return found


def _assert_message(message: Received, stack: PrefectStack, run: UUID, state: str) -> None:
    flow_run = read_flow_run(stack, run)
    assert flow_run.state is not None and flow_run.state.name == state
    subject, body = message.body["subject"], message.body["body"]
    assert subject == f"lme-bench: {flow_run.name} {state}"
    lines = body.splitlines()
    assert lines[0] == f"Flow run {flow_run.name} of smoke ended {state}."
    assert flow_run.state.message and flow_run.state.message in body
    assert lines[-1] == f"{stack.ui_url}/runs/flow-run/{run}"
    assert message.body["text"] == f"{subject}\n{body}"
    assert message.path == "/hooks/lme-bench"
    assert message.headers["content-type"] == "application/json"


def test_failed_and_crashed_runs_send_a_message_through_the_webhook_block(
    prefect: PrefectStack, receiver: Receiver, clean_server: None, tmp_path: Path
) -> None:
    assert _automation_services_enabled(prefect)
    env = prefect.env | {URL_ENV: receiver.url}

    # No block yet: the automation is left out, the way to make the block is told, rc 0.
    without = _automation_step(env)
    assert without.returncode == 0, without.stderr
    assert f"no notification block {BLOCK!r}" in without.stdout
    assert "deployments/automation.py block slack" in without.stdout
    with api_client(prefect) as client:
        assert client.read_automations_by_name(AUTOMATION) == []

    made = _automation_step(env, "block", "url")
    assert made.returncode == 0, made.stderr
    assert receiver.url not in made.stdout + made.stderr
    with api_client(prefect) as client:
        block = client.read_block_document_by_name(BLOCK, "custom-webhook", include_secrets=False)
    assert block.id is not None
    assert receiver.url not in json.dumps(block.data, default=str)  # kept as a secret value

    deploy = _make_deploy(env)
    assert deploy.returncode == 0, deploy.stdout + deploy.stderr
    assert f"automation {AUTOMATION!r}: created" in deploy.stdout
    again = _automation_step(env)
    assert again.returncode == 0, again.stderr
    assert f"automation {AUTOMATION!r}: updated" in again.stdout
    with api_client(prefect) as client:
        (automation,) = client.read_automations_by_name(AUTOMATION)
    assert [str(a.block_document_id) for a in automation.actions] == [str(block.id)]  # type: ignore[union-attr]

    # A run whose reader refuses every prompt ends Failed; one stuck in its reader is killed.
    with (
        serve([{"status": 400, "message": "the reader refuses"}]) as (refusing, _),
        serve([{"content": "x", "behaviour": Behaviour(fault="stall")}]) as (stalling, stuck),
    ):
        crash_config = write_config(tmp_path / "crash", stalling)
        request = {"config": str(crash_config), "run_id": "notify-crash", "limit": 1}
        started = prefect.prefect(
            "deployment", "run", DEPLOYMENT, "--params", json.dumps({"request": request})
        )
        assert started.returncode == 0, started.stdout + started.stderr
        crashing = flow_run_id(started.stdout)

        fail_config = write_config(tmp_path / "fail", refusing)
        failed = deployment_run(prefect, fail_config, "notify-fail", limit=1)
        assert failed.returncode != 0 and "Failed" in failed.stdout, failed.stdout
        failing = flow_run_id(failed.stdout)
        _assert_message(
            receiver.wait_for(_about(failing), MESSAGE_TIMEOUT_S), prefect, failing, "Failed"
        )

        wait_until(lambda: len(stuck.requests) > 0, 120, "the crashing run to call its reader")
        processes = _flow_run_processes(crashing)
        assert processes, "no process of the crashing flow run"
        for pid in processes:
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        wait_for_attempt(prefect, crashing, attempt=1, timeout=60)
        _assert_message(
            receiver.wait_for(_about(crashing), MESSAGE_TIMEOUT_S), prefect, crashing, "Crashed"
        )
