"""Speed against a real model server: `lme-bench run configs/local.toml` on a few short
questions against llama.cpp's one-slot server (scripts/local_model.py), through a recording
proxy on loopback that notes when each request reaches it and when its reply has been sent
back. Reports the server's busy fraction from the first call's start to the run's end (the
goal: at least 95%), the harness's own time per call, and where the server idled: each gap
between calls, named by the stages on either side.

    .venv/bin/python perf/real_server.py [--mode context-only|agentic] [--questions 4]
        [--sessions 3] [--turns 4] [--set KEY=VALUE ...]

--set passes settings as LME_* variables, e.g. `--set limits.providers.local.concurrency=2`.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import support

from lme_bench.run.steps import bundled_sample
from scripts import local_model

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length"}


@dataclass(frozen=True)
class Call:
    start: float  # time.monotonic() when the request reached the proxy
    end: float  # when its reply had been sent back
    role: str  # agent, answer or judge, read from the prompt
    prompt_tokens: int
    completion_tokens: int


def role_of(body: dict[str, Any]) -> str:
    text = "\n".join(str(m.get("content") or "") for m in body.get("messages", []))
    if "Your job in this session" in text:
        return "agent"
    return "judge" if "Reply yes if" in text else "answer"


class RecordingProxy:
    """HTTP/1.1 with keep-alive towards the harness, as the server itself speaks; each request
    is passed on to the server whole and its reply sent back whole."""

    def __init__(self, upstream_port: int) -> None:
        self.calls: list[Call] = []
        self.most_in_flight = 0
        lock, in_flight = threading.Lock(), [0]
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _forward(self) -> None:
                start = time.monotonic()
                with lock:
                    in_flight[0] += 1
                    proxy.most_in_flight = max(proxy.most_in_flight, in_flight[0])
                try:
                    body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                    server = http.client.HTTPConnection("127.0.0.1", upstream_port, timeout=3600)
                    headers = {k: v for k, v in self.headers.items() if k.lower() != "connection"}
                    server.request(self.command, self.path, body or None, headers)
                    reply = server.getresponse()
                    content = reply.read()
                    server.close()
                    self.send_response(reply.status)
                    for key, value in reply.getheaders():
                        if key.lower() not in HOP_BY_HOP:
                            self.send_header(key, value)
                    self.send_header("Content-Length", str(len(content)))
                    self.end_headers()
                    self.wfile.write(content)
                    self.wfile.flush()
                finally:
                    with lock:
                        in_flight[0] -= 1
                if self.path.endswith("/chat/completions"):
                    usage = (
                        json.loads(content).get("usage") if reply.status == 200 else None
                    ) or {}
                    proxy.calls.append(
                        Call(
                            start,
                            time.monotonic(),
                            role_of(json.loads(body)),
                            int(usage.get("prompt_tokens") or 0),
                            int(usage.get("completion_tokens") or 0),
                        )
                    )

            do_GET = do_POST = _forward

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def small_dataset(path: Path, questions: int, sessions: int, turns: int) -> None:
    """The bundled sample's first questions, each cut to its evidence sessions and then its
    first other sessions (`sessions` in all), each session to its first `turns` turns."""
    cut: list[dict[str, Any]] = []
    for question in json.loads(bundled_sample().read_text())[:questions]:
        ids = question["haystack_session_ids"]
        evidence = set(question["answer_session_ids"])
        ranked = sorted(range(len(ids)), key=lambda i: (ids[i] not in evidence, i))
        kept = sorted(ranked[:sessions])
        picked = {
            key: [question[key][i] for i in kept]
            for key in ("haystack_session_ids", "haystack_dates", "haystack_sessions")
        }
        picked["haystack_sessions"] = [s[:turns] for s in picked["haystack_sessions"]]
        answers = [s for s in question["answer_session_ids"] if s in picked["haystack_session_ids"]]
        cut.append(question | picked | {"answer_session_ids": answers})
    path.write_text(json.dumps(cut), encoding="utf-8")


def busy_seconds(calls: list[Call], until: float) -> float:
    """Time with at least one request in flight, up to `until`."""
    busy, reach = 0.0, float("-inf")
    for call in sorted(calls, key=lambda c: c.start):
        start, end = max(call.start, reach), min(call.end, until)
        if end > start:
            busy += end - start
        reach = max(reach, call.end)
    return busy


def gaps(calls: list[Call], run_end: float) -> list[tuple[float, str]]:
    """Every stretch with no request in flight after the first call, named by the stages on
    either side (the last one runs to the end of the run)."""
    found, reach, last = [], float("-inf"), ""
    for call in sorted(calls, key=lambda c: c.start):
        if reach > float("-inf") and call.start > reach:
            found.append((call.start - reach, f"{last} → {call.role}"))
        if call.end > reach:
            reach, last = call.end, call.role
    found.append((run_end - reach, f"{last} → end of run"))
    return found


def compute_seconds(server_log: Path) -> float:
    """llama.cpp's own prompt and generation time, summed from its log (one pair per completion
    it runs; a tool call can take several)."""
    found = re.findall(r"(?:prompt eval|\beval) time =\s*([\d.]+) ms", server_log.read_text())
    return sum(float(ms) for ms in found) / 1000


def report(calls: list[Call], launched: float, ended: float, wall: str) -> None:
    first = min(c.start for c in calls)
    last_end = max(c.end for c in calls)
    window = ended - first
    busy = busy_seconds(calls, ended)
    print(f"run: {wall}; first call {first - launched:.1f} s after launch (startup)")
    roles = ", ".join(
        f"{r} {sum(c.role == r for c in calls)}" for r in ("agent", "answer", "judge")
    )
    tokens_in = sum(c.prompt_tokens for c in calls)
    tokens_out = sum(c.completion_tokens for c in calls)
    print(f"calls: {len(calls)} ({roles}); tokens in {tokens_in:,}, out {tokens_out:,}")
    print(
        f"server busy {busy:.1f} s of {window:.1f} s from the first call to the run's end: "
        f"{100 * busy / window:.1f}% (to the last reply, {last_end - first:.1f} s: "
        f"{100 * busy / (last_end - first):.1f}%)"
    )
    print(f"harness's own time per call: {1000 * (window - busy) / len(calls):.0f} ms")
    by_kind: dict[str, list[float]] = {}
    for seconds, kind in gaps(calls, ended):
        by_kind.setdefault(kind, []).append(seconds)
    print("idle server, by the stages on either side: count, total, largest")
    for kind, found in sorted(by_kind.items(), key=lambda kv: -sum(kv[1])):
        print(f"  {kind:24} {len(found):4} {sum(found):7.2f} s {max(found):7.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=("context-only", "agentic"), default="context-only")
    parser.add_argument("--questions", type=int, default=4)
    parser.add_argument("--sessions", type=int, default=3)
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args()
    if not local_model.server_installed() or not local_model.model_path().is_file():
        print("skipped: run `.venv/bin/python scripts/local_model.py install` first")
        return
    folder = Path(tempfile.mkdtemp(prefix="lme-real-server-"))
    small_dataset(folder / "questions.json", args.questions, args.sessions, args.turns)
    port = support.free_port()
    server = local_model.start_server(port, folder / "server.log")
    proxy = RecordingProxy(port)
    overrides = {
        "LME_PROVIDERS__LOCAL__BASE_URL": f"http://127.0.0.1:{proxy.port}/v1",
        "LME_INGEST__MODE": args.mode,
    }
    for item in args.set:
        key, _, value = item.partition("=")
        overrides["LME_" + key.upper().replace(".", "__")] = value
    env = {k: v for k, v in os.environ.items() if not k.startswith("LME_")} | overrides
    env.setdefault("PREFECT_HOME", str(folder / "prefect"))
    command = [sys.executable, "-m", "lme_bench_flows.command", "run", "configs/local.toml"]
    command += ["--dataset", str(folder / "questions.json"), "--results-dir", str(folder)]
    try:
        launched = time.monotonic()
        done = subprocess.run(
            [*command, "--run-id", args.mode], cwd=support.ROOT, env=env, capture_output=True
        )
        ended = time.monotonic()
    finally:
        proxy.close()
        server.terminate()
        server.wait()
    if done.returncode != 0 or not proxy.calls:
        print(done.stdout.decode()[-3000:], done.stderr.decode()[-3000:])
        sys.exit(f"the run failed ({done.returncode}); its folder: {folder}")
    print(
        f"{args.mode}, {args.questions} questions, {args.sessions} sessions of {args.turns} turns"
    )
    print(f"most requests in flight at once: {proxy.most_in_flight}; run folder: {folder}")
    report(proxy.calls, launched, ended, f"{ended - launched:.1f} s from launch to exit")
    computed = compute_seconds(folder / "server.log")
    print(f"llama.cpp's own prompt + generation time (its log): {computed:.1f} s")


if __name__ == "__main__":
    main()
