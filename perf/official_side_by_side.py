"""The official LongMemEval retrieval runner beside `lme-bench run`, on the same file.

    LONGMEMEVAL_REPO=/path/to/LongMemEval python perf/official_side_by_side.py \
        [--dataset FILE] [--granularity turn session] [--config configs/default.toml]

Runs the checkout's `src/retrieval/run_retrieval.py --retriever flat-bm25 --granularity G`,
unmodified, in a venv of its own (perf/support.py: the checkout's requirements-lite.txt
plus what run_retrieval.py imports, torch's CPU build among them), once per granularity, then
`lme-bench run CONFIG --dataset FILE` into a fresh results folder (both granularities in one
run, the Prefect flow on its temporary server, every start-up included). Each command is timed
from start to exit, and its whole process tree (workers, servers) is sampled every 50 ms from
/proc: peak memory is the largest sum of their resident sets, and the largest single process.

Then, over the questions both systems average (run_retrieval.py's own rule: no abstention
question, and evidence in a user turn), each system's mean recall_any, recall_all and ndcg_any
at every k, and per question how often they agree on recall_any@k (both find evidence or both
miss). lme-bench's session figures are scored from its turn ranking (the official turn-to-session
procedure); the official runner's from ranking whole sessions (its session run) and from its turn
ranking (its turn run). The default file is the generated S set of 500 questions (`lme-bench
generate --scale s --questions 500 --seed 0`), made on first use. Without LONGMEMEVAL_REPO the
benchmark explains itself and exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq
from support import OFFICIAL_RETRIEVAL_EXTRA, ROOT, official_checkout, official_python

from lme_bench.dataset.generate import generate_dataset

K_VALUES = (1, 3, 5, 10, 30, 50)
METRICS = ("recall_any", "recall_all", "ndcg_any")
PAGE = os.sysconf("SC_PAGE_SIZE")
Scores = dict[str, dict[str, float]]  # question id -> "metric@k" -> value


@dataclass
class Measured:
    seconds: float
    peak_tree_mb: float  # largest sum of the tree's resident sets
    peak_process_mb: float  # largest single process
    processes: int  # most processes alive at once


def _children() -> dict[int, list[int]]:
    found: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
        found.setdefault(ppid, []).append(int(entry.name))
    return found


def _tree_rss(root: int) -> list[int]:
    """Resident bytes of `root` and every descendant."""
    children, sizes, todo = _children(), [], [root]
    while todo:
        pid = todo.pop()
        try:
            sizes.append(int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE)
        except (OSError, IndexError, ValueError):
            continue
        todo += children.get(pid, [])
    return sizes


def measure(command: Sequence[str], cwd: Path, env: dict[str, str], log: Path) -> Measured:
    """Run `command` to its end, sampling its process tree every 50 ms."""
    peak = Measured(0.0, 0.0, 0.0, 0)
    started = time.perf_counter()
    with log.open("w") as out:
        process = subprocess.Popen(command, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
        done = threading.Event()

        def sample() -> None:
            while not done.wait(0.05):
                sizes = _tree_rss(process.pid)
                peak.peak_tree_mb = max(peak.peak_tree_mb, sum(sizes) / 1e6)
                peak.peak_process_mb = max(peak.peak_process_mb, max(sizes, default=0) / 1e6)
                peak.processes = max(peak.processes, len(sizes))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        code = process.wait()
        peak.seconds = time.perf_counter() - started
        done.set()
        sampler.join()
    if code != 0:
        sys.exit(f"{command[0]} exited with {code}; its output: {log}")
    return peak


def _keys() -> list[str]:
    return [f"{m}@{k}" for k in K_VALUES for m in METRICS]


def official_scores(out_file: Path, level: str) -> tuple[Scores, set[str]]:
    """Per-question metrics at `level` from a run_retrieval.py log, and the questions its own
    averages keep (no abstention, evidence in a user turn)."""
    scores: Scores = {}
    kept: set[str] = set()
    with out_file.open() as lines:
        for line in lines:
            entry = json.loads(line)
            qid = entry["question_id"]
            scores[qid] = entry["retrieval_results"]["metrics"][level]
            turns = [t for s in entry["haystack_sessions"] for t in s if t["role"] == "user"]
            if "_abs" not in qid and any(t.get("has_answer") for t in turns):
                kept.add(qid)
    return scores, kept


def our_scores(run_dir: Path, level: str) -> Scores:
    table = pq.read_table(run_dir / "retrieval.parquet").to_pylist()
    return {
        row["question_id"]: {key: row[key] for key in _keys()}
        for row in table
        if row["granularity"] == level and row["status"] == "ok"
    }


def compare(name: str, lme: Scores, official: Scores, kept: set[str]) -> None:
    questions = sorted(kept & lme.keys() & official.keys())
    n = len(questions)
    print(
        f"\n{name}: {n} questions (missing: lme-bench {len(kept - lme.keys())},"
        f" official {len(kept - official.keys())})"
    )
    print(
        "| k | " + " | ".join(f"{m} lme-bench / official" for m in METRICS) + " | recall_any agree"
        " | lme-bench only | official only |"
    )
    print("|---:|" + "---:|" * (len(METRICS) + 3))
    for k in K_VALUES:
        cells = []
        for metric in METRICS:
            key = f"{metric}@{k}"
            mine = sum(lme[q][key] for q in questions) / n
            theirs = sum(official[q][key] for q in questions) / n
            cells.append(f"{mine:.3f} / {theirs:.3f}")
        key = f"recall_any@{k}"
        hits = [(lme[q][key] > 0, official[q][key] > 0) for q in questions]
        agree = sum(a == b for a, b in hits)
        only_lme = sum(a and not b for a, b in hits)
        only_official = sum(b and not a for a, b in hits)
        print(
            f"| {k} | " + " | ".join(cells) + f" | {agree / n:.1%} | {only_lme} | {only_official} |"
        )


def _lme_bench_command() -> list[str]:
    script = Path(sys.executable).with_name("lme-bench")
    return [str(script)] if script.exists() else [sys.executable, "-m", "lme_bench_flows.command"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--dataset", type=Path, help="LongMemEval JSON (default: generated S x 500)"
    )
    parser.add_argument("--granularity", nargs="+", default=["turn", "session"])
    parser.add_argument("--config", type=Path, default=ROOT / "configs" / "default.toml")
    parser.add_argument("--keep", type=Path, help="keep both systems' outputs in this folder")
    args = parser.parse_args()
    checkout = official_checkout()
    if checkout is None:
        return 0
    data = args.dataset or ROOT / "perf" / "data" / "lme_s_500_seed0.json"
    if not data.exists():
        generate_dataset(data, n_questions=500, scale="s", seed=0)
    data = data.resolve()
    python = official_python(checkout, OFFICIAL_RETRIEVAL_EXTRA)
    work = Path(tempfile.mkdtemp(prefix="lme-side-")) if args.keep is None else args.keep
    work.mkdir(parents=True, exist_ok=True)
    print(f"file: {data}; outputs: {work}; load average before: {os.getloadavg()[0]:.2f}")
    print("\n| run | wall | peak memory, whole tree | largest process | processes |")
    print("|---|---:|---:|---:|---:|")

    def show(name: str, m: Measured) -> None:
        print(
            f"| {name} | {m.seconds:.1f} s | {m.peak_tree_mb:,.0f} MB"
            f" | {m.peak_process_mb:,.0f} MB | {m.processes} |",
            flush=True,
        )

    official_env = os.environ | {"PYTHONPATH": str(checkout), "PYTHONIOENCODING": "utf-8"}
    timed: dict[str, Measured] = {}
    for level in args.granularity:
        out_dir = work / f"official-{level}"
        out_dir.mkdir(exist_ok=True)
        command = [
            str(python),
            "src/retrieval/run_retrieval.py",
            "--in_file",
            str(data),
            "--out_dir",
            str(out_dir),
            "--retriever",
            "flat-bm25",
            "--granularity",
            level,
        ]
        timed[level] = measure(command, checkout, official_env, work / f"official-{level}.log")
        show(f"official flat-bm25, {level} granularity", timed[level])

    results = work / "lme-bench"
    shutil.rmtree(results, ignore_errors=True)
    lme_env = os.environ | {"PREFECT_SERVER_ANALYTICS_ENABLED": "false"}
    command = [
        *_lme_bench_command(),
        "run",
        str(args.config),
        "--dataset",
        str(data),
        "--results-dir",
        str(results),
        "--run-id",
        "side-by-side",
    ]
    mine = measure(command, ROOT, lme_env, work / "lme-bench.log")
    show(f"`lme-bench run {args.config.name}` (both granularities)", mine)
    for level, theirs in timed.items():
        print(f"ratio to the official {level} run: {mine.seconds / theirs.seconds:.2f}x")
    print(f"load average after: {os.getloadavg()[0]:.2f}")

    run_dir = results / "side-by-side"
    for level in args.granularity:
        out_file = work / f"official-{level}" / f"{data.name}_retrievallog_{level}_flat-bm25"
        official, kept = official_scores(out_file, level)
        compare(
            f"{level}: lme-bench against the official {level} run",
            our_scores(run_dir, level),
            official,
            kept,
        )
        if level == "turn":
            official, kept = official_scores(out_file, "session")
            compare(
                "session: lme-bench against the official turn run's turn-to-session scores",
                our_scores(run_dir, "session"),
                official,
                kept,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
