"""API keys are used, but never written: not in results, logs, output or Prefect artifacts.

Canary keys go to a loopback OpenAI-compatible server (QA model over OPENAI_API_KEY, judge over
a custom provider's LOCAL_KEY), so they really travel over HTTP; then every byte the run left
behind is searched for them.
"""

from __future__ import annotations

import base64
import io
import json
import logging
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import lme_bench_flows.benchmark  # noqa: F401  (Prefect configures logging on import: before capturing)
import pyarrow.parquet as pq
import pytest
from lme_bench_flows.command import main
from prefect.client.orchestration import get_client
from prefect.testing.utilities import prefect_test_harness

from lme_bench.common.secrets import RedactingLogFilter, redact_secrets
from tests.providers.fake_openai_server import serve

OPENAI_CANARY = f"sk-canary-{uuid.uuid4().hex}"
LOCAL_CANARY = f"sk-canary-{uuid.uuid4().hex}"
CANARIES = (OPENAI_CANARY, LOCAL_CANARY)
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def harness() -> Iterator[None]:
    with prefect_test_harness(server_startup_timeout=120):
        yield


@contextmanager
def _every_log(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """caplog at DEBUG for every logger, including those that do not propagate (Prefect's)."""
    names = ["", *logging.root.manager.loggerDict, "prefect", "httpx", "openai", "langchain"]
    loggers = {id(lg): lg for lg in map(logging.getLogger, names)}.values()
    saved = [(lg, lg.level, lg.disabled) for lg in loggers]
    caplog.handler.setLevel(logging.DEBUG)
    for lg in loggers:
        lg.setLevel(logging.DEBUG)
        lg.disabled = False
        lg.addHandler(caplog.handler)
    try:
        yield
    finally:
        for lg, level, disabled in saved:
            lg.setLevel(level)
            lg.disabled = disabled
            lg.removeHandler(caplog.handler)


def _config(folder: Path, url: str) -> Path:
    path = folder / "secret-run.toml"
    path.write_text(
        "[memory]\nbackend = 'embedded'\n[ingest]\nmode = 'raw'\n"
        f"[providers.local]\nkind = 'openai-compatible'\nbase_url = '{url}'\n"
        "api_key_env = 'LOCAL_KEY'\n"
        "[models]\nqa = 'openai:gpt-4o-mini'\njudge = 'local:judge-model'\n"
    )
    return path


def _run(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    reply: Callable[[dict[str, Any]], dict[str, Any]],
) -> tuple[int, list[dict[str, str]], Path]:
    results = tmp_path / "results"
    with serve([reply]) as (url, fake), _every_log(caplog):
        monkeypatch.setenv("OPENAI_API_KEY", OPENAI_CANARY)
        monkeypatch.setenv("OPENAI_BASE_URL", url)
        monkeypatch.setenv("LOCAL_KEY", LOCAL_CANARY)
        config = _config(tmp_path, url)
        args = ["run", str(config), "--limit", "3", "--run-id", "canary"]
        code = main([*args, "--results-dir", str(results)])
    return code, fake.headers, results


def _file_texts(results: Path) -> Iterator[tuple[str, bytes]]:
    """Every file's bytes, plus what hides behind an encoding: Parquet rows as text and the
    base64 pickles of Prefect's persisted task results."""
    for path in sorted(p for p in results.rglob("*") if p.is_file()):
        data = path.read_bytes()
        yield str(path), data
        if path.suffix == ".parquet":
            yield f"{path} (rows)", str(pq.read_table(path).to_pylist()).encode()
        if data.startswith(b"{"):
            try:
                stored = json.loads(data)
            except ValueError:
                continue
            if isinstance(stored, dict) and isinstance(stored.get("result"), str):
                yield f"{path} (result)", base64.b64decode(stored["result"], validate=False)


def _every(read: Callable[..., list[Any]]) -> Iterator[Any]:
    """All items of a Prefect client `read_*` call, page by page."""
    offset = 0
    while batch := read(limit=200, offset=offset):
        yield from batch
        offset += len(batch)


def _prefect_texts() -> Iterator[tuple[str, str]]:
    """Artifacts, logs, flow and task runs recorded by the Prefect server."""
    with get_client(sync_client=True) as client:
        readers = {
            "artifact": client.read_artifacts,
            "prefect log": client.read_logs,
            "flow run": client.read_flow_runs,
            "task run": client.read_task_runs,
        }
        for kind, read in readers.items():
            for item in _every(read):
                yield (
                    f"{kind} {getattr(item, 'key', None) or getattr(item, 'name', '')}",
                    (item.model_dump_json()),
                )


def _leaks(results: Path, captured: str, logs: str) -> list[str]:
    found = [
        name for name, data in _file_texts(results) if any(c.encode() in data for c in CANARIES)
    ]
    found += [name for name, text in _prefect_texts() if any(c in text for c in CANARIES)]
    found += [
        name
        for name, text in (("output", captured), ("logs", logs))
        if any(c in text for c in CANARIES)
    ]
    return found


def _answer_and_judge(body: dict[str, Any]) -> dict[str, Any]:
    return {"content": "yes" if body["model"] == "judge-model" else "A golden retriever."}


@pytest.mark.slow
def test_keys_are_sent_but_never_written(
    harness: None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, headers, results = _run(tmp_path, monkeypatch, caplog, _answer_and_judge)
    out, err = capsys.readouterr()
    assert code == 0, err[-3000:]

    sent = {h.get("authorization") for h in headers}
    assert {f"Bearer {OPENAI_CANARY}", f"Bearer {LOCAL_CANARY}"} <= sent  # the keys were used
    hypotheses = pq.read_table(results / "canary" / "hypotheses.parquet").to_pylist()
    assert len(hypotheses) == 3 and all(h["status"] == "ok" for h in hypotheses)
    scores = pq.read_table(results / "canary" / "scores.parquet").to_pylist()
    assert {s["judge"] for s in scores if s["judge_kind"] == "llm"} == {"local:judge-model"}
    logged = {r.name.split(".")[0] for r in caplog.records}
    assert {"openai", "httpx", "prefect"} <= logged  # HTTP and Prefect logs were captured

    assert _leaks(results, out + err, caplog.text) == []


def _key_echoed_in_401(body: dict[str, Any]) -> dict[str, Any]:
    if body["model"] == "judge-model":
        return {"content": "yes"}
    return {"status": 401, "message": f"Incorrect API key provided: {OPENAI_CANARY}."}


@pytest.mark.slow
def test_a_key_echoed_in_an_error_is_redacted_everywhere(
    harness: None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, results = _run(tmp_path, monkeypatch, caplog, _key_echoed_in_401)
    out, err = capsys.readouterr()
    assert code == 1  # failed answers fail the run, after everything is written

    hypotheses = pq.read_table(results / "canary" / "hypotheses.parquet").to_pylist()
    assert len(hypotheses) == 3 and all(h["status"] == "error" for h in hypotheses)
    for row in hypotheses:
        assert "401" in row["error"] and "[redacted OPENAI_API_KEY]" in row["error"], row
    assert "(3 failed)" in (results / "canary" / "summary.md").read_text()

    assert _leaks(results, out + err, caplog.text) == []


def _always_401(body: dict[str, Any]) -> dict[str, Any]:
    return {"status": 401, "message": f"Incorrect API key provided: {OPENAI_CANARY}."}


@pytest.mark.slow
def test_a_key_in_an_exception_that_fails_a_task_is_redacted_everywhere(
    harness: None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The memory agent's model fails ingestion outright (no error row of its own)."""
    config = tmp_path / "agent.toml"
    config.write_text("[ingest]\nmode = 'agentic'\n[models]\nagent = 'openai:gpt-4o-mini'\n")
    results = tmp_path / "results"
    with serve([_always_401]) as (url, _), _every_log(caplog):
        monkeypatch.setenv("OPENAI_API_KEY", OPENAI_CANARY)
        monkeypatch.setenv("OPENAI_BASE_URL", url)
        args = ["run", str(config), "--limit", "1", "--run-id", "canary"]
        code = main([*args, "--results-dir", str(results)])
    out, err = capsys.readouterr()
    assert code == 1

    retrieval = pq.read_table(results / "canary" / "retrieval.parquet").to_pylist()
    assert retrieval and all("[redacted OPENAI_API_KEY]" in r["error"] for r in retrieval)
    assert _leaks(results, out + err, caplog.text) == []


def test_redaction_masks_configured_and_well_known_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    from lme_bench.config.settings import load_settings

    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_CANARY)
    monkeypatch.setenv("MY_LLM_CREDENTIAL", LOCAL_CANARY)  # named only in the config
    monkeypatch.setenv("AWS_SESSION_TOKEN", "FQoGZXIvYXdzEaaaaaaaa")
    monkeypatch.setenv("SHORT_TOKEN", "abc")  # too short to be a key: left alone
    monkeypatch.setenv(
        "LME_PROVIDERS__LOCAL",
        json.dumps({"base_url": "http://x", "api_key_env": "MY_LLM_CREDENTIAL"}),
    )
    settings = load_settings(None)
    text = f"401: key {OPENAI_CANARY}, {LOCAL_CANARY} and FQoGZXIvYXdzEaaaaaaaa; abc"

    masked = redact_secrets(text, settings)
    assert masked == (
        "401: key [redacted OPENAI_API_KEY], [redacted MY_LLM_CREDENTIAL] and "
        "[redacted AWS_SESSION_TOKEN]; abc"
    )
    assert LOCAL_CANARY in redact_secrets(text)  # without the settings its name is unknown
    assert OPENAI_CANARY not in redact_secrets(text)


def test_log_filter_masks_messages_arguments_and_tracebacks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_CANARY)
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RedactingLogFilter())
    logger = logging.getLogger("lme-secrets-test")
    logger.addHandler(handler)
    try:
        try:
            raise RuntimeError(f"401 for key {OPENAI_CANARY}")
        except RuntimeError:
            logger.exception("call failed with %s", OPENAI_CANARY)
    finally:
        logger.removeHandler(handler)
    written = stream.getvalue()
    assert "call failed with [redacted OPENAI_API_KEY]" in written
    assert "RuntimeError: 401 for key [redacted OPENAI_API_KEY]" in written
    assert OPENAI_CANARY not in written


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _listening(port: int) -> set[str]:
    """Local addresses (hex, as /proc/net/tcp shows them) listening on `port`."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if not os.path.exists(table):
            continue
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.rsplit(":", 1)
            if state == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                found.add(address)
    return found


def test_memory_server_binds_loopback_by_default(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from lme_bench.cli import _parser

    args = _parser().parse_args(["memory", "serve", "--transport", "http"])
    assert args.host == "127.0.0.1"
    assert main(["memory", "serve", "--transport", "http", "--host", "0.0.0.0"]) == 2
    assert "--allow-remote" in capsys.readouterr().err

    if not os.path.exists("/proc/net/tcp"):
        pytest.skip("needs Linux /proc/net/tcp to see the bound address")
    port = _free_port()
    serve_args = ["memory", "serve", "--transport", "http", "--port", str(port)]
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "lme_bench_flows.command",
            *serve_args,
            "--path",
            str(tmp_path / "m.db"),
        ],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stderr is not None
        banner = server.stderr.readline()
        assert f"http://127.0.0.1:{port}/mcp" in banner
        deadline = time.monotonic() + 60
        while not _listening(port) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _listening(port) == {"0100007F"}  # 127.0.0.1 only, not 0.0.0.0 or ::
    finally:
        server.terminate()
        server.wait(timeout=30)
