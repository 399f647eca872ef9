"""The failure notification of deployments/automations.yaml on a real Prefect server: `make
deploy` creates it from the project's file (and says how to make the block it needs while that
is missing), a run of the smoke deployment that regressed against the previous run of its
series (a worse reader) and one that crashes each send a message through a custom webhook block
to a loopback receiver, with the run's name, state message and link."""

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
    WORSE_READER,
    FakeLlm,
    api_client,
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
RUN_TIMEOUT_S = 240.0  # a run of the series, on a busy machine
# The worse reader answers 4 of the first 8 questions wrongly: a drop of 50 points whose paired
# interval lies below zero (a resample of 8 pairs all unchanged is rarer than 1 in 40).
LIMIT = 8


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


def _start(stack: PrefectStack, request: dict[str, object]) -> UUID:
    """A run of the smoke deployment with these parameters, not waited for (what `prefect
    deployment run` asks of the API, without starting a CLI process)."""
    with api_client(stack) as client:
        deployment = client.read_deployment_by_name(DEPLOYMENT)
        return client.create_flow_run_from_deployment(
            deployment.id, parameters={"request": request}
        ).id


def _set_up_the_notification(stack: PrefectStack, receiver: Receiver) -> None:
    """The block, then `make deploy` with its automation, checked step by step."""
    env = stack.env | {URL_ENV: receiver.url}
    # No block yet: the automation is left out, the way to make the block is told, rc 0.
    without = _automation_step(env)
    assert without.returncode == 0, without.stderr
    assert f"no notification block {BLOCK!r}" in without.stdout
    assert "deployments/automation.py block slack" in without.stdout
    with api_client(stack) as client:
        assert client.read_automations_by_name(AUTOMATION) == []

    made = _automation_step(env, "block", "url")
    assert made.returncode == 0, made.stderr
    assert receiver.url not in made.stdout + made.stderr
    with api_client(stack) as client:
        block = client.read_block_document_by_name(BLOCK, "custom-webhook", include_secrets=False)
    assert block.id is not None
    assert receiver.url not in json.dumps(block.data, default=str)  # kept as a secret value

    deploy = _make_deploy(env)
    assert deploy.returncode == 0, deploy.stdout + deploy.stderr
    assert f"automation {AUTOMATION!r}: created" in deploy.stdout
    again = _automation_step(env)
    assert again.returncode == 0, again.stderr
    assert f"automation {AUTOMATION!r}: updated" in again.stdout
    with api_client(stack) as client:
        (automation,) = client.read_automations_by_name(AUTOMATION)
    assert [str(a.block_document_id) for a in automation.actions] == [str(block.id)]  # type: ignore[union-attr]


def test_regressed_and_crashed_runs_send_a_message_through_the_webhook_block(
    prefect: PrefectStack,
    fake_llm: FakeLlm,
    receiver: Receiver,
    clean_server: None,
    tmp_path: Path,
) -> None:
    assert _automation_services_enabled(prefect)
    with serve([{"content": "x", "behaviour": Behaviour(fault="stall")}]) as (stalling, stuck):
        # While the notification is set up: a run that gets stuck in its reader (killed once
        # the automation is there), and the first run of the series "smoke" (the deployment's
        # name), which has no baseline yet and completes.
        crash_config = write_config(tmp_path / "crash", stalling)
        crashing = _start(
            prefect, {"config": str(crash_config), "run_id": "notify-crash", "limit": 1}
        )
        good = write_config(tmp_path / "series", fake_llm.base_url)
        request = {"config": str(good), "run_id": "notify-1", "limit": LIMIT}
        request |= {"compare_to": "previous"}
        first = _start(prefect, request)

        _set_up_the_notification(prefect, receiver)

        finished = wait_for_attempt(prefect, first, attempt=1, timeout=RUN_TIMEOUT_S)
        assert finished.state is not None and finished.state.is_completed(), finished.state
        wait_until(lambda: len(stuck.requests) > 0, 120, "the crashing run to call its reader")
        processes = _flow_run_processes(crashing)
        assert processes, "no process of the crashing flow run"
        for pid in processes:
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

        # The second run of the series, with a worse reader, against the first: regressed.
        worse = write_config(tmp_path / "series", fake_llm.base_url, WORSE_READER, "worse.toml")
        regressed = _start(prefect, request | {"config": str(worse), "run_id": "notify-2"})
        ended = wait_for_attempt(prefect, regressed, attempt=1, timeout=RUN_TIMEOUT_S)
        assert ended.state is not None and ended.state.is_failed(), ended.state
        message = receiver.wait_for(_about(regressed), MESSAGE_TIMEOUT_S)
        _assert_message(message, prefect, regressed, "Failed")
        state_line = message.body["body"].splitlines()[1]
        assert state_line.startswith("regressed: QA overall \u2212"), state_line
        assert " vs notify-1; " in state_line, state_line

        wait_for_attempt(prefect, crashing, attempt=1, timeout=60)
        _assert_message(
            receiver.wait_for(_about(crashing), MESSAGE_TIMEOUT_S), prefect, crashing, "Crashed"
        )
