"""Judge beside the official LongMemEval code and compare, request for request.

    LONGMEMEVAL_REPO=/path/to/LongMemEval python perf/official_judge_check.py \
        [--dataset FILE] [--limit N]

Both sides judge the same hypotheses against the same loopback stand-in for the OpenAI API,
whose replies (chosen by a hash of the prompt) include "yes", "no", an empty reply, a refusal
and "Yesterday", so the official yes-rule is exercised:
1. `lme-bench run` answers with the fake reader and judges with `openai:gpt-4o-2024-08-06` and
   `[judge] official_repo` = the checkout;
2. the checkout's own `src/evaluation/evaluate_qa.py gpt-4o`, unmodified, judges lme-bench's
   `hypotheses.jsonl` in a venv of its own with the checkout's requirements-lite.txt
   (perf/support.py);
3. the checkout's `print_qa_metrics.py` prints the figures of lme-bench's eval-results file.
Checked: the judge request bodies are the same multiset, the two eval-results files are the same
bytes, and the printer's figures equal lme-bench's headline. Exit 1 on any difference. Without
LONGMEMEVAL_REPO the check explains itself and skips (exit 0). Nothing of the checkout is copied.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from support import ROOT, official_checkout, official_python

REPLIES = ("yes", "no", "", "Yesterday", "I cannot grade this.", "Yes, it is correct.", "No.")
CONFIG = """\
[ingest]
mode = "raw"

[models]
qa = "fake:quote-memory"
judge = "openai:gpt-4o-2024-08-06"

[judge]
official_repo = "{repo}"
"""


@contextmanager
def fake_openai() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A loopback chat-completions server; yields (base URL, the request bodies it got)."""
    bodies: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            bodies.append(body)
            prompt = body["messages"][-1]["content"]
            reply = REPLIES[int(hashlib.sha256(prompt.encode()).hexdigest(), 16) % len(REPLIES)]
            data = json.dumps(
                {
                    "id": "x",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body["model"],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": reply},
                            "finish_reason": "stop",
                        }
                    ],
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", bodies
    finally:
        server.shutdown()
        server.server_close()


def _env(base_url: str) -> dict[str, str]:
    return os.environ | {"OPENAI_API_KEY": "sk-loopback", "OPENAI_BASE_URL": base_url}


def printed_figures(text: str) -> dict[str, float]:
    """The official printer's figures: per type, task-averaged, overall, abstention."""
    found = {m[0]: float(m[1]) for m in re.findall(r"^\t([\w-]+): ([\d.]+|nan) \(", text, re.M)}
    for name in ("Task-averaged Accuracy", "Overall Accuracy", "Abstention Accuracy"):
        match = re.search(rf"^{name}: ([\d.]+|nan)", text, re.M)
        if match:
            found[name] = float(match.group(1))
    return found


def our_figures(judge: dict[str, Any]) -> dict[str, float]:
    def value(acc: dict[str, Any]) -> float:
        return round(acc["accuracy"], 4) if acc["accuracy"] is not None else float("nan")

    found = {t: value(a) for t, a in judge["per_type"].items()}
    found["Task-averaged Accuracy"] = value(judge["task_averaged"])
    found["Overall Accuracy"] = value(judge["overall"])
    found["Abstention Accuracy"] = value(judge["abstention"])
    return found


def _bodies(bodies: list[dict[str, Any]]) -> list[str]:
    """The request bodies as parsed JSON, compared whatever order their keys were sent in."""
    return sorted(json.dumps(b, sort_keys=True) for b in bodies)


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", type=Path, help="LongMemEval JSON (default: the sample)")
    parser.add_argument("--limit", type=int, help="only the first N questions")
    args = parser.parse_args()
    repo = official_checkout()
    if repo is None:
        return 0
    dataset = args.dataset or ROOT / "lme_bench" / "dataset" / "sample" / "longmemeval_sample.json"
    python = official_python(repo)
    with tempfile.TemporaryDirectory(prefix="lme-official-") as scratch:
        work = Path(scratch)
        config = work / "judge.toml"
        config.write_text(CONFIG.format(repo=Path(repo).resolve()))
        run = [str(ROOT / ".venv" / "bin" / "lme-bench"), "run", str(config)]
        run += ["--dataset", str(dataset), "--run-id", "official-check"]
        run += ["--results-dir", str(work / "results")]
        run += ["--limit", str(args.limit)] if args.limit else []
        with fake_openai() as (url, ours):
            subprocess.run(run, env=_env(url), check=True, stdout=subprocess.DEVNULL)
        run_dir = work / "results" / "official-check"
        official = work / "official"
        official.mkdir()
        (official / "hypotheses.jsonl").write_bytes((run_dir / "hypotheses.jsonl").read_bytes())
        script = Path(repo) / "src" / "evaluation"
        with fake_openai() as (url, theirs):
            subprocess.run(
                [
                    str(python),
                    str(script / "evaluate_qa.py"),
                    "gpt-4o",
                    "hypotheses.jsonl",
                    str(dataset),
                ],
                cwd=official,
                env=_env(url),
                check=True,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        name = "hypotheses.jsonl.eval-results-gpt-4o"
        printed = subprocess.run(
            [str(python), str(script / "print_qa_metrics.py"), str(run_dir / name), str(dataset)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        summary = json.loads((run_dir / "summary.json").read_text())
        judge = summary["qa"]["judges"]["openai:gpt-4o-2024-08-06"]
        same_bodies = _bodies(ours) == _bodies(theirs)
        same_file = (run_dir / name).read_bytes() == (official / name).read_bytes()
        theirs_printed, mine = printed_figures(printed), our_figures(judge)
        same_figures = theirs_printed.keys() == mine.keys() and all(
            _same(theirs_printed[k], mine[k]) for k in mine
        )
        unreadable = judge["unreadable"]
        print("| check | result |\n|---|---|")
        print(f"| judge requests (lme-bench / official) | {len(ours)} / {len(theirs)} |")
        print(f"| request bodies identical | {same_bodies} |")
        print(f"| eval-results files identical | {same_file} |")
        print(f"| printer figures = lme-bench headline | {same_figures} ({len(mine)} figures) |")
        print(f"| replies without a yes or no word | {unreadable} |")
        if not same_figures:
            print(f"official: {theirs_printed}\nlme-bench: {mine}")
        return 0 if same_bodies and same_file and same_figures else 1


if __name__ == "__main__":
    sys.exit(main())
