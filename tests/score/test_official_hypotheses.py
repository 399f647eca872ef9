"""`lme-bench score` on a hypotheses.jsonl that lme-bench did not write, judged with the official
judge body: the official `evaluate_qa.py`, unmodified, and `lme-bench score` judge the same file
against the same loopback stand-in for the OpenAI API; their request bodies are the same bytes,
their labels the same, and the official `print_qa_metrics.py` prints the figures of the
eval-results file score writes. The checkout is LONGMEMEVAL_REPO; the official script runs in a
python with the checkout's requirements-lite.txt: LONGMEMEVAL_PYTHON, else the venv
perf/support.py makes (`python perf/official_judge_check.py` makes it once). Without them the
test skips; nothing of the checkout is copied here."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from lme_bench.builtin_benchmarks.longmemeval.official_printer import official_check
from lme_bench.cli import main
from lme_bench.dataset.loader import iter_questions
from lme_bench.results.run_summary import read_run_summary
from lme_bench.run.steps import bundled_sample
from tests.providers.fake_openai_server import serve

CHECKOUT = os.environ.get("LONGMEMEVAL_REPO")
SCRIPT = Path("src") / "evaluation" / "evaluate_qa.py"
NAME = "hypotheses.jsonl.eval-results-gpt-4o"
# Replies chosen by a hash of the prompt: the official yes-rule reads each (content never empty:
# the official script strips it).
REPLIES = ("yes", "no", "Yes.", "No, it is not.", "Yesterday", "I cannot tell")


def _official_python() -> Path | None:
    given = os.environ.get("LONGMEMEVAL_PYTHON")
    if given:
        return Path(given)
    if not CHECKOUT:
        return None
    spec = importlib.util.spec_from_file_location("perf_support", Path("perf") / "support.py")
    assert spec is not None and spec.loader is not None
    support = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(support)
    python = support.official_venv(Path(CHECKOUT)) / "bin" / "python"
    return python if python.exists() else None


PYTHON = _official_python()
needs_official = pytest.mark.skipif(
    not CHECKOUT or not (Path(CHECKOUT) / SCRIPT).is_file() or PYTHON is None,
    reason="set LONGMEMEVAL_REPO to a LongMemEval checkout and LONGMEMEVAL_PYTHON to a python"
    " with its requirements-lite.txt (or run perf/official_judge_check.py once)",
)


def _reply(body: dict[str, Any]) -> dict[str, str]:
    digest = hashlib.sha256(body["messages"][0]["content"].encode()).digest()
    return {"content": REPLIES[digest[0] % len(REPLIES)]}


def _foreign_hypotheses(path: Path) -> list[str]:
    """Another harness's file: its own order and extra keys, answers right and wrong, text
    beyond ASCII. The question ids, in the file's order."""
    questions = [q.instance for q in iter_questions(bundled_sample())]
    lines, ids = [], []
    for i, q in enumerate(reversed(questions)):
        hypothesis = str(q.answer) if i % 3 == 0 else f"I believe it was “{q.question[:20]}” — café"
        lines.append(
            json.dumps(
                {
                    "question_id": q.question_id,
                    "hypothesis": hypothesis,
                    "harness": "other",
                    "latency_ms": i,
                }
            )
        )
        ids.append(q.question_id)
    path.write_text("\n".join(lines) + "\n")
    return ids


@needs_official
def test_score_sends_the_official_requests_and_prints_the_official_figures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert CHECKOUT is not None and PYTHON is not None
    official = tmp_path / "official"
    official.mkdir()
    hypotheses = official / "hypotheses.jsonl"
    ids = _foreign_hypotheses(hypotheses)
    with serve([_reply]) as (url, theirs):
        subprocess.run(
            [
                str(PYTHON),
                str(Path(CHECKOUT) / SCRIPT),
                "gpt-4o",
                hypotheses.name,
                str(bundled_sample()),
            ],
            cwd=official,
            env=os.environ | {"OPENAI_API_KEY": "sk-loopback", "OPENAI_BASE_URL": url},
            check=True,
            capture_output=True,
        )
    config = tmp_path / "judge.toml"
    config.write_text(f'[judge]\nofficial_repo = "{Path(CHECKOUT).resolve()}"\n')
    out = tmp_path / "scored"
    with serve([_reply]) as (url, ours):
        monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
        monkeypatch.setenv("OPENAI_BASE_URL", url)
        code = main(
            [
                "score",
                str(hypotheses),
                "--dataset",
                str(bundled_sample()),
                "--judge",
                "openai:gpt-4o-2024-08-06",
                "--config",
                str(config),
                "--out",
                str(out),
            ]
        )
    assert code == 0
    assert len(theirs.raw) == len(ids) == len(ours.raw)
    assert sorted(ours.raw) == sorted(theirs.raw)  # byte for byte, whatever order they came in
    labels = {}
    for line in (official / NAME).read_text().splitlines():
        item = json.loads(line)
        labels[item["question_id"]] = item["autoeval_label"]
    ours_written = [json.loads(x) for x in (out / NAME).read_text().splitlines()]
    assert {x["question_id"]: x["autoeval_label"] for x in ours_written} == labels
    assert {x["label"] for x in labels.values()} == {True, False}  # both verdicts occur
    summary = json.loads((out / "summary.json").read_text())
    problems, held = official_check(
        {NAME: (out / NAME).read_bytes()},
        read_run_summary(out / "summary.json"),
        Path(CHECKOUT),
        bundled_sample(),
        str(PYTHON),
    )
    assert problems == [], problems
    assert "figures equal" in held
    assert summary["answers_file"]["missing"] == 0
    for name in ("scores.parquet", "summary.md", "report.html", "manifest.json"):
        assert (out / name).is_file(), name
    manifest = json.loads((out / "manifest.json").read_text())
    assert (
        manifest["request"]["answers"]["sha256"]
        == hashlib.sha256(hypotheses.read_bytes()).hexdigest()
    )
    assert manifest["prompts"]["judge"]["source"] == "official"  # read from the checkout
