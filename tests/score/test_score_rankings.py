"""`lme-bench score` on LongMemEval retrieval rankings in the official retrieval log's format:
each question's turn ranking scored at turn and session level into the retrieval stage's rows
and summary; a log of sessions at session level only; an id in neither corpus named by line and
item. With LONGMEMEVAL_REPO and the official python (as in test_official_hypotheses.py), every
value equals what the checkout's own `src/retrieval/eval_utils.py` gives the same rankings."""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from lme_bench.cli import main
from lme_bench.dataset.loader import iter_questions
from lme_bench.metrics.ranking_metrics import is_evidence
from lme_bench.retrieval.official_ids import corpus_session_ids, corpus_turn_ids
from lme_bench.run.steps import bundled_sample
from tests.score.test_official_hypotheses import CHECKOUT, PYTHON

SAMPLE = bundled_sample()
INSTANCES = [q.instance for q in iter_questions(SAMPLE)]
K_VALUES = (1, 3, 5, 10, 30, 50)


def _shuffled(ids: list[str], seed: int) -> list[int]:
    order = list(range(len(ids)))
    random.Random(seed).shuffle(order)
    return order


def _log(path: Path, granularity: str = "turn") -> dict[str, list[int]]:
    """An official-format log of seeded shuffles of each question's corpus; the rankings as
    corpus indices, by question id."""
    rankings, lines = {}, []
    for seed, instance in enumerate(INSTANCES):
        corpus = (corpus_turn_ids if granularity == "turn" else corpus_session_ids)(instance)
        order = _shuffled(corpus, seed)
        rankings[instance.question_id] = order
        items = [{"corpus_id": corpus[i], "text": "…", "timestamp": "t"} for i in order]
        lines.append(
            {
                "question_id": instance.question_id,
                "question_type": instance.question_type,
                "retrieval_results": {"query": instance.question, "ranked_items": items},
            }
        )
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return rankings


def _score(capsys: pytest.CaptureFixture[str], file: Path, out: Path) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["score", str(file), "--dataset", str(SAMPLE), "--out", str(out)])
    return code, capsys.readouterr().err


def _rows(out: Path) -> dict[tuple[str, str], dict[str, Any]]:
    rows = pq.read_table(out / "retrieval.parquet").to_pylist()
    return {(r["question_id"], r["granularity"]): r for r in rows}


def test_a_turn_log_is_scored_at_turn_and_session_level(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "retrieval_log.jsonl"
    rankings = _log(log)
    out = tmp_path / "scored"
    code, err = _score(capsys, log, out)
    assert code == 0, err
    rows = _rows(out)
    checked = 0
    for instance in INSTANCES:
        corpus = corpus_turn_ids(instance)
        ranked = [corpus[i] for i in rankings[instance.question_id]]
        turn = rows[instance.question_id, "turn"]
        assert turn["ranked_ids"] == ranked
        evidence = {c for c in corpus if is_evidence(c)}
        if not evidence:
            continue
        for k in K_VALUES:  # recall by its definition, counted here
            top = set(ranked[:k])
            assert turn[f"recall_any@{k}"] == float(bool(evidence & top))
            assert turn[f"recall_all@{k}"] == float(evidence <= top)
        checked += 1
        session = rows[instance.question_id, "session"]
        assert set(session["ranked_ids"]) <= set(corpus_session_ids(instance))
    assert checked > 10
    for name in ("summary.json", "summary.md", "report.html", "manifest.json"):
        assert (out / name).is_file(), name
    summary = json.loads((out / "summary.json").read_text())
    assert summary["answers_file"]["format"] == "longmemeval-retrieval-log"
    assert summary["turn"]["questions"] > 0 and "qa" not in summary


def test_a_session_log_has_no_turn_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "retrieval_log.jsonl"
    _log(log, granularity="session")
    out = tmp_path / "scored"
    code, err = _score(capsys, log, out)
    assert code == 0, err
    rows = _rows(out)
    assert {r["status"] for (_, g), r in rows.items() if g == "turn"} == {"not-applicable"}
    assert {r["status"] for (_, g), r in rows.items() if g == "session"} == {"ok"}


def test_an_id_in_neither_corpus_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "retrieval_log.jsonl"
    _log(log)
    lines = log.read_text().splitlines()
    second = json.loads(lines[1])
    second["retrieval_results"]["ranked_items"][2]["corpus_id"] = "nowhere_1"
    lines[1] = json.dumps(second)
    log.write_text("\n".join(lines) + "\n")
    code, err = _score(capsys, log, tmp_path / "scored")
    assert code == 2
    assert err.startswith(
        f"lme-bench: error: {log}: line 2: field retrieval_results.ranked_items[2].corpus_id:"
        " 'nowhere_1' is in neither the turn nor the session corpus"
    ), err
    assert not (tmp_path / "scored").exists()


OFFICIAL_METRICS = """
import json, sys
from src.retrieval.eval_utils import evaluate_retrieval as turn
from src.retrieval.eval_utils import evaluate_retrieval_turn2session as session
given, out = json.load(sys.stdin), {}
for qid, q in given.items():
    row = {}
    for k in (1, 3, 5, 10, 30, 50):
        for level, fn in (("turn", turn), ("session", session)):
            values = fn(q["ranking"], q["correct"], q["corpus"], k=k)
            for name, value in zip(("recall_any", "recall_all", "ndcg_any"), values):
                row[f"{level}/{name}@{k}"] = float(value)
    out[qid] = row
json.dump(out, sys.stdout)
"""


@pytest.mark.skipif(
    not CHECKOUT or PYTHON is None, reason="needs LONGMEMEVAL_REPO and the official python"
)
def test_every_value_equals_the_official_eval_utils(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "retrieval_log.jsonl"
    rankings = _log(log)
    out = tmp_path / "scored"
    code, err = _score(capsys, log, out)
    assert code == 0, err
    given = {}
    for instance in INSTANCES:
        corpus = corpus_turn_ids(instance)
        correct = sorted({c for c in corpus if "answer" in c})
        given[instance.question_id] = {
            "ranking": rankings[instance.question_id],
            "correct": correct,
            "corpus": corpus,
        }
    done = subprocess.run(
        [str(PYTHON), "-c", OFFICIAL_METRICS],
        input=json.dumps(given),
        capture_output=True,
        text=True,
        cwd=CHECKOUT,
        check=True,
    )
    official = json.loads(done.stdout)
    rows = _rows(out)
    compared = 0
    for question_id, values in official.items():
        for key, value in values.items():
            level, metric = key.split("/")
            ours = rows[question_id, level][metric]
            assert ours == pytest.approx(value, abs=1e-12), (question_id, key)
            compared += 1
    assert compared == len(INSTANCES) * 36
