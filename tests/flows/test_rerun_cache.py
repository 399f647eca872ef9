"""The per-question task cache, in process under Prefect's test harness: a rerun redoes only
what failed or changed, a memory that is gone is ingested again, `[cache] scope` shares or
disables the cache. Each test has its own results folder, so its own cache."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any
from uuid import UUID

import pyarrow.parquet as pq
import pytest
from lme_bench_flows import command as cli
from lme_bench_flows.benchmark import RunFailures, benchmark
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId
from prefect.testing.utilities import prefect_test_harness

from lme_bench.dataset.errors import DatasetError
from lme_bench.ingest.titles import memory_title
from lme_bench.providers.fake_stats import FAKE_CALLS
from lme_bench.results.recorded_settings import SettingsChanged
from lme_bench.run import steps
from lme_bench.run.request import RunRequest
from tests.factories import make_question

pytestmark = pytest.mark.slow

STAGES = ("ingest", "retrieval", "answer", "judge")
TABLES = ("ingest", "retrieval", "hypotheses", "scores")
LIMIT = 4  # the first 4 sample questions: 43 sessions
FULL_FAKE = "configs/full-fake.toml"  # raw ingestion, fake:quote-memory, fake:match-judge
AGENTIC = {"ingest.mode": "agentic", "models.agent": "fake:note-taker"}


@pytest.fixture(scope="module")
def harness() -> Iterator[None]:
    with prefect_test_harness(server_startup_timeout=120):
        yield


class Executed:
    """Which per-question steps really ran (a cached task never calls its pipeline step)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []
        self.fail_ingest: str | None = None  # a question id whose ingestion raises
        self.fail_answer: str | None = None  # a question id whose answering raises

    def reset(self) -> None:
        self.calls.clear()
        FAKE_CALLS.reset()

    def by_stage(self) -> dict[str, list[str]]:
        return {s: sorted(q for stage, q in self.calls if stage == s) for s in STAGES}


@pytest.fixture
def executed(monkeypatch: pytest.MonkeyPatch) -> Executed:
    record = Executed()
    names = {
        "ingest": "ingest_question",
        "retrieval": "evaluate_question",
        "answer": "answer_question",
        "judge": "judge_question",
    }
    for stage, name in names.items():
        real = getattr(steps, name)

        def counted(
            ref: Any, *args: Any, _stage: str = stage, _real: Any = real, **kwargs: Any
        ) -> Any:
            record.calls.append((_stage, ref.question_id))
            if _stage == "ingest" and ref.question_id == record.fail_ingest:
                raise ValueError(f"memory rejected the write for {ref.question_id}")
            if _stage == "answer" and ref.question_id == record.fail_answer:
                raise ValueError(f"the reader broke on {ref.question_id}")
            return _real(ref, *args, **kwargs)

        monkeypatch.setattr(steps, name, counted)
    record.reset()
    return record


def _run(request: RunRequest) -> tuple[dict[str, Any], UUID]:
    """Run the flow; its result and flow run id (raises what the flow raised)."""
    state = benchmark(request, return_state=True)
    flow_run_id = state.state_details.flow_run_id
    assert flow_run_id is not None
    result: dict[str, Any] = state.result()
    return result, flow_run_id


def _states(flow_run_id: UUID, expected: int) -> dict[tuple[str, str], str]:
    """(stage, question id) -> final state name of the flow run's per-question task runs.

    Task run states reach the API as events, so wait until all of them have arrived."""
    deadline = time.monotonic() + 60
    found: dict[tuple[str, str], str] = {}
    while True:
        with get_client(sync_client=True) as client:
            runs = client.read_task_runs(
                flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[flow_run_id]))
            )
        found = {
            (run.name.split()[0], run.name.split()[1]): str(run.state.name)
            for run in runs
            if run.name.split()[0] in STAGES and run.state is not None and run.state.is_final()
        }
        if len(found) >= expected:
            return found
        if time.monotonic() > deadline:
            break
        time.sleep(0.5)
    raise AssertionError(f"only {len(found)} of {expected} task runs reached the API: {found}")


def _table(run_dir: Path, name: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = pq.read_table(run_dir / f"{name}.parquet").to_pylist()
    return rows


def _tables(run_dir: Path) -> dict[str, list[dict[str, Any]]]:
    return {name: _table(run_dir, name) for name in TABLES}


def _without(rows: list[dict[str, Any]], *columns: str) -> list[dict[str, Any]]:
    """`rows` without `columns` and the search's timing (it differs on every search)."""
    dropped = {*columns, "search_seconds"}
    return [{k: v for k, v in row.items() if k not in dropped} for row in rows]


def _model_calls(run_dir: Path) -> dict[str, int]:
    tables = _tables(run_dir)
    return {
        "ingest": sum(r["llm_calls"] for r in tables["ingest"]),
        "answer": sum(r["llm_calls"] for r in tables["hypotheses"]),
        "judge": sum(r["llm_calls"] for r in tables["scores"]),
    }


def _entries_per_memory(store: Path) -> dict[str, int]:
    db = sqlite3.connect(store)
    try:
        rows = db.execute(
            "SELECT m.title, count(e.seq) FROM memories m"
            " LEFT JOIN entries e ON e.memory_id = m.memory_id GROUP BY m.title"
        ).fetchall()
    finally:
        db.close()
    return dict(rows)


def _request(tmp_path: Path, run_id: str, **overrides: Any) -> RunRequest:
    return RunRequest(
        config=FULL_FAKE,
        results_dir=str(tmp_path),
        run_id=run_id,
        limit=LIMIT,
        overrides=overrides,
    )


def test_rerun_of_a_run_is_all_cached_with_no_model_calls(
    harness: None, tmp_path: Path, executed: Executed
) -> None:
    request = _request(tmp_path, "same", **AGENTIC)
    _, first_run = _run(request)
    questions = sorted({q for _, q in executed.calls})
    assert len(questions) == LIMIT
    assert executed.by_stage() == {stage: questions for stage in STAGES}
    first_calls = FAKE_CALLS.total
    assert first_calls == sum(_model_calls(tmp_path / "same").values())
    assert _model_calls(tmp_path / "same")["ingest"] > 0  # the agent did the ingesting
    first = _tables(tmp_path / "same")
    entries = _entries_per_memory(tmp_path / "memory.sqlite")
    assert set(_states(first_run, 4 * LIMIT).values()) == {"Completed"}

    executed.reset()
    second, second_run = _run(request)
    assert executed.calls == []  # no step ran again
    assert FAKE_CALLS.total == 0  # so no model was called
    assert second["from_cache"] == dict.fromkeys(STAGES, LIMIT)  # read by the flow itself,
    assert _states(second_run, 0) == {}  # so no task run was made for them
    assert _tables(tmp_path / "same") == first  # every row, timings included, from the cache
    assert _entries_per_memory(tmp_path / "memory.sqlite") == entries


def test_a_new_judge_setting_with_judging_alone_redoes_only_the_judging(
    harness: None, tmp_path: Path, executed: Executed
) -> None:
    _run(_request(tmp_path, "sweep", **AGENTIC))
    questions = sorted({q for _, q in executed.calls})
    run_dir = tmp_path / "sweep"
    first = _tables(run_dir)

    # Another QA strategy under the same run id is refused before any work (a sweep over
    # one ingestion is `[cache] scope = "shared"`, see below).
    executed.reset()
    with pytest.raises(SettingsChanged, match=r"qa\.strategy: \"single\" -> \"two-pass\""):
        _run(_request(tmp_path, "sweep", **AGENTIC, **{"qa.strategy": "two-pass"}))
    assert executed.calls == [] and FAKE_CALLS.total == 0

    # Judging alone may take new judge settings: only judging is redone, over the answers
    # the run holds.
    rejudge = _request(tmp_path, "sweep", **AGENTIC, **{"judge.repeats": 2})
    rejudge = rejudge.model_copy(update={"stages": ["judge", "report"]})
    _, rejudged = _run(rejudge)
    assert executed.by_stage() == {
        "ingest": questions,  # looks each memory up, writes nothing
        "retrieval": [],
        "answer": [],
        "judge": questions,
    }
    states = _states(rejudged, 2 * LIMIT)
    assert {k: v for k, v in states.items() if k[0] == "judge"} == {
        ("judge", q): "Completed" for q in questions
    }
    assert FAKE_CALLS.total == 2 * LIMIT  # one LLM judge, two repeats, nothing else
    judged = _tables(run_dir)
    for name in ("ingest", "retrieval", "hypotheses"):
        assert judged[name] == first[name], name
    llm_scores = [r for r in judged["scores"] if r["judge"] == "fake:match-judge"]
    assert sorted((r["question_id"], r["repeat"]) for r in llm_scores) == [
        (q, n) for q in questions for n in (0, 1)
    ]
    recorded = json.loads((run_dir / "config.json").read_text())
    assert recorded["settings"]["judge"]["repeats"] == 2  # what the next rerun replays


def test_a_run_stopped_by_bad_input_records_no_settings(
    harness: None, tmp_path: Path, executed: Executed
) -> None:
    missing = tmp_path / "no-such.json"
    bad = _request(tmp_path, "typo").model_copy(update={"dataset": str(missing)})
    with pytest.raises(DatasetError, match="no such file"):
        _run(bad)
    assert not (tmp_path / "typo" / "config.json").exists()
    result, _ = _run(_request(tmp_path, "typo"))  # the same run id, the input put right
    assert result["from_cache"] == dict.fromkeys(STAGES, 0)
    assert (tmp_path / "typo" / "config.json").is_file()


def test_rerun_replays_the_recorded_settings_whatever_the_environment_says(
    harness: None,
    tmp_path: Path,
    executed: Executed,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`LME_MODELS__JUDGE=… lme-bench run … --run-id X`, then `lme-bench rerun X
    --failed-only` without the variable: the failed question is judged by the same judge."""
    monkeypatch.setenv("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    monkeypatch.setenv("PREFECT_SERVER_LOGGING_LEVEL", "WARNING")
    run = ["run", FULL_FAKE, "--run-id", "judged", "--results-dir", str(tmp_path), "--limit"]
    run_dir = tmp_path / "judged"
    monkeypatch.setenv("LME_MODELS__JUDGE", "fake:yes")
    executed.fail_ingest = "3387bf20"
    assert cli.main([*run, str(LIMIT)]) == 1
    recorded = json.loads((run_dir / "config.json").read_text())
    assert recorded["settings"]["models"]["judge"] == "fake:yes"

    monkeypatch.delenv("LME_MODELS__JUDGE")
    executed.fail_ingest = None
    executed.reset()
    capsys.readouterr()

    # The same run id with other settings (here the config file's judge) is refused.
    assert cli.main([*run, str(LIMIT)]) == 2
    err = capsys.readouterr().err
    assert 'models.judge: "fake:yes" -> "fake:match-judge"' in err
    assert err.count("lme-bench: error:") == 1 and "Traceback" not in err
    assert executed.calls == []
    with pytest.raises(SettingsChanged, match=r"models\.judge"):  # as from a deployment
        _run(_request(tmp_path, "judged"))
    assert executed.calls == []

    assert cli.main(["rerun", "judged", "--results-dir", str(tmp_path), "--failed-only"]) == 0
    assert executed.by_stage() == {stage: ["3387bf20"] for stage in STAGES}
    scores = _table(run_dir, "scores")
    assert {r["judge"] for r in scores if r["judge_kind"] == "llm"} == {"fake:yes"}
    assert {(r["question_id"], r["judge"]) for r in scores} == {
        (q, judge)
        for q in {r["question_id"] for r in scores}
        for judge in ("fake:yes", "fallback:normalized-match")
    }
    assert len({r["question_id"] for r in scores}) == LIMIT
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["failed_question_ids"] == []
    assert manifest["models"]["judge"] == "fake:yes"
    assert json.loads((run_dir / "config.json").read_text()) == recorded
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["qa"]["agreement"] == []  # one LLM judge: nothing to agree with

    # Asking explicitly for a new judge (judging alone) judges every question with it.
    executed.reset()
    new_judge = _request(tmp_path, "judged", **{"models.judge": "fake:match-judge"})
    _run(new_judge.model_copy(update={"stages": ["judge", "report"]}))
    assert executed.by_stage()["judge"] == sorted({r["question_id"] for r in scores})
    scores = _table(run_dir, "scores")
    assert {r["judge"] for r in scores if r["judge_kind"] == "llm"} == {"fake:match-judge"}
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["models"]["judge"] == "fake:match-judge"


def _delete_memory(store: Path, title: str, *, keep_memory_row: bool) -> None:
    db = sqlite3.connect(store)
    try:
        with db:
            (memory_id,) = db.execute(
                "SELECT memory_id FROM memories WHERE title = ?", (title,)
            ).fetchone()
            db.execute("DELETE FROM entries WHERE memory_id = ?", (memory_id,))
            db.execute("DELETE FROM contexts WHERE memory_id = ?", (memory_id,))
            if not keep_memory_row:
                db.execute("DELETE FROM memories WHERE memory_id = ?", (memory_id,))
    finally:
        db.close()


def test_deleted_memories_are_ingested_again_not_taken_from_the_cache(
    harness: None, tmp_path: Path, executed: Executed
) -> None:
    request = _request(tmp_path, "lost", **AGENTIC)
    run_dir, store = tmp_path / "lost", tmp_path / "memory.sqlite"
    _run(request)
    questions = sorted({q for _, q in executed.calls})
    retrieval = _without(_table(run_dir, "retrieval"), "run_id")
    entries = _entries_per_memory(store)
    assert len(entries) == LIMIT and all(entries.values())

    # One question's memory deleted from the store: that question alone is ingested again.
    lost = questions[1]
    title = memory_title(lost, "lost", tmp_path)
    _delete_memory(store, title, keep_memory_row=False)
    executed.reset()
    _run(request)
    assert executed.by_stage()["ingest"] == [lost]
    assert _entries_per_memory(store) == entries  # it holds its entries again
    assert _without(_table(run_dir, "retrieval"), "run_id") == retrieval
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["memory_titles"][title] == lost
    assert manifest["memory_entries"][lost] == entries[title]

    # The whole store file gone: every question is ingested again by the agent.
    for path in tmp_path.glob("memory.sqlite*"):
        path.unlink()
    executed.reset()
    _run(request)
    assert executed.by_stage()["ingest"] == questions
    assert _model_calls(run_dir)["ingest"] > 0 and FAKE_CALLS.total > 0
    assert _entries_per_memory(store) == entries
    assert _without(_table(run_dir, "retrieval"), "run_id") == retrieval


def test_memory_emptied_and_ingested_again_redoes_its_later_stages(
    harness: None, tmp_path: Path, executed: Executed
) -> None:
    request = _request(tmp_path, "refilled")  # raw ingestion
    run_dir, store = tmp_path / "refilled", tmp_path / "memory.sqlite"
    _run(request)
    questions = sorted({q for _, q in executed.calls})
    first = _tables(run_dir)

    # One memory emptied (the memory itself kept, so its id is the same): the same entries
    # go back in, but from a new ingestion, so every later stage of that question is redone,
    # judging too, although the fake reader's answer comes out the same.
    emptied = questions[2]
    _delete_memory(store, memory_title(emptied, "refilled", tmp_path), keep_memory_row=True)
    executed.reset()
    result, rerun = _run(request)
    assert executed.by_stage() == {stage: [emptied] for stage in STAGES}
    assert result["from_cache"] == dict.fromkeys(STAGES, LIMIT - 1)
    assert _states(rerun, len(STAGES)) == {(stage, emptied): "Completed" for stage in STAGES}
    assert FAKE_CALLS.total == 2  # its answer and its judging
    again = _tables(run_dir)
    assert _without(again["retrieval"], "run_id") == _without(first["retrieval"], "run_id")
    assert _without(again["hypotheses"], "seconds") == _without(first["hypotheses"], "seconds")
    assert _without(again["scores"], "seconds") == _without(first["scores"], "seconds")

    # Stages run without ingest read each memory's ingestion back: nothing else is redone.
    executed.reset()
    later = RunRequest(**request.model_dump() | {"stages": ["retrieval", "answer", "judge"]})
    result, _ = _run(later)
    assert executed.by_stage() == {
        "ingest": questions,  # looks each memory and its ingestion up, writes nothing
        "retrieval": [],
        "answer": [],
        "judge": [],
    }
    assert result["from_cache"] == {
        "ingest": 0,
        "retrieval": LIMIT,
        "answer": LIMIT,
        "judge": LIMIT,
    }
    assert FAKE_CALLS.total == 0


def test_emptied_memory_is_ingested_again_not_skipped_by_its_checkpoints(tmp_path: Path) -> None:
    """What the ingest task does when the flow finds a question's memory empty (its entries
    deleted, the memory itself kept) and so bypasses the cache."""
    settings = _request(tmp_path, "emptied", **AGENTIC).settings()
    _, refs = steps.prepare_questions(steps.plan_run(settings), None, 1)
    ref, store = refs[0], tmp_path / "memory.sqlite"

    async def ingest() -> tuple[Any, Any]:
        located = await steps.locate_memories([ref.question_id], settings, "emptied")
        location = located[ref.question_id]
        return location, await steps.ingest_question(ref, settings, "emptied", location)

    location, first = asyncio.run(ingest())
    assert location.entries == 0 and first.entries > 0
    title = memory_title(ref.question_id, "emptied", tmp_path)
    _delete_memory(store, title, keep_memory_row=True)

    location, again = asyncio.run(ingest())
    assert location.entries == 0  # the flow sees this and ingests with refresh_cache
    assert again.memory_id == first.memory_id
    assert _entries_per_memory(store)[title] == first.entries
    assert again.entries == first.entries


def test_failed_only_rerun_redoes_just_the_failed_question(
    harness: None, tmp_path: Path, executed: Executed, monkeypatch: pytest.MonkeyPatch
) -> None:
    request = _request(tmp_path, "flaky")
    executed.fail_ingest = "3387bf20"  # the second sample question
    with pytest.raises(RunFailures, match="1 question"):
        _run(request)
    run_dir = tmp_path / "flaky"
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["failed_question_ids"] == ["3387bf20"]
    questions = manifest["question_ids"]
    assert len(questions) == LIMIT
    before = _tables(run_dir)
    assert {r["question_id"] for r in before["retrieval"] if r["status"] == "error"} == {"3387bf20"}

    # `lme-bench rerun flaky --failed-only`, the fault gone; the CLI's environment defaults
    # are set here so they are undone after the test.
    executed.fail_ingest = None
    executed.reset()
    monkeypatch.setenv("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    monkeypatch.setenv("PREFECT_SERVER_LOGGING_LEVEL", "WARNING")
    code = cli.main(["rerun", "flaky", "--results-dir", str(tmp_path), "--failed-only"])
    assert code == 0
    assert executed.by_stage() == {stage: ["3387bf20"] for stage in STAGES}

    after = _tables(run_dir)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["failed_question_ids"] == []
    assert manifest["question_ids"] == questions
    assert [r["question_id"] for r in after["hypotheses"]] == questions
    assert {r["question_id"] for r in after["ingest"]} == set(questions)
    assert {r["question_id"] for r in after["retrieval"]} == set(questions)
    assert all(r["status"] == "ok" for name in TABLES[:3] for r in after[name])
    assert {(r["question_id"], r["judge"]) for r in after["scores"]} == {
        (q, j) for q in questions for j in ("fake:match-judge", "fallback:normalized-match")
    }
    for name in TABLES:  # the other questions' rows are kept as they were
        kept = [r for r in before[name] if r["question_id"] != "3387bf20"]
        assert [r for r in after[name] if r["question_id"] != "3387bf20"] == kept, name


def test_rerun_of_an_unknown_run_names_the_missing_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = cli.main(["rerun", "no-such-run", "--results-dir", str(tmp_path)])
    assert code == 2
    err = capsys.readouterr().err
    assert str(tmp_path / "no-such-run") in err and "no run here" in err


def test_shared_cache_reuses_one_ingestion_across_runs(
    harness: None, tmp_path: Path, executed: Executed
) -> None:
    shared = {**AGENTIC, "cache.scope": "shared"}
    _run(_request(tmp_path, "sweep-single", **shared))
    questions = sorted({q for _, q in executed.calls})
    single = _tables(tmp_path / "sweep-single")

    executed.reset()
    second, _ = _run(_request(tmp_path, "sweep-two-pass", **shared, **{"qa.strategy": "two-pass"}))
    assert executed.by_stage() == {
        "ingest": [],
        "retrieval": [],
        "answer": questions,
        "judge": questions,
    }
    assert second["from_cache"]["ingest"] == LIMIT  # another run id, the same ingestion
    calls = _model_calls(tmp_path / "sweep-two-pass")
    assert FAKE_CALLS.total == calls["answer"] + calls["judge"]  # no agent call
    two_pass = _tables(tmp_path / "sweep-two-pass")
    assert {r["strategy"] for r in two_pass["hypotheses"]} == {"two-pass"}
    assert _without(two_pass["retrieval"], "run_id") == _without(single["retrieval"], "run_id")
    entries = _entries_per_memory(tmp_path / "memory.sqlite")
    assert len(entries) == LIMIT and all(entries.values())  # one memory per question in all
    titles = [
        json.loads((tmp_path / run / "manifest.json").read_text())["memory_titles"]
        for run in ("sweep-single", "sweep-two-pass")
    ]
    assert titles[0] == titles[1] and sorted(titles[0]) == sorted(entries)


def test_cache_off_redoes_everything(harness: None, tmp_path: Path, executed: Executed) -> None:
    request = _request(tmp_path, "uncached", **{"cache.scope": "off"})  # raw ingestion
    _run(request)
    questions = sorted({q for _, q in executed.calls})
    first = _tables(tmp_path / "uncached")
    entries = _entries_per_memory(tmp_path / "memory.sqlite")

    executed.reset()
    result, rerun = _run(request)
    assert executed.by_stage() == {stage: questions for stage in STAGES}
    assert result["from_cache"] == dict.fromkeys(STAGES, 0)
    states = _states(rerun, 4 * LIMIT)
    assert set(states.values()) == {"Completed"}
    assert FAKE_CALLS.total == 2 * LIMIT  # answered and judged again
    assert not (tmp_path / ".cache" / "tasks").exists()  # nothing persisted
    assert _entries_per_memory(tmp_path / "memory.sqlite") == entries  # nothing duplicated
    after = _tables(tmp_path / "uncached")
    assert _without(after["retrieval"], "run_id") == _without(first["retrieval"], "run_id")
    assert _without(after["hypotheses"], "seconds") == _without(first["hypotheses"], "seconds")


def _task_run_states(flow_run_id: UUID, expected: int) -> dict[str, str]:
    """Task run name -> final state name, once `expected` task runs have reached the API."""
    deadline = time.monotonic() + 60
    while True:
        with get_client(sync_client=True) as client:
            runs = client.read_task_runs(
                flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[flow_run_id]))
            )
        found = {r.name: str(r.state.name) for r in runs if r.state and r.state.is_final()}
        if len(found) >= expected or time.monotonic() > deadline:
            return found
        time.sleep(0.5)


def test_batched_stages_fail_and_cache_question_by_question(
    harness: None, tmp_path: Path, executed: Executed
) -> None:
    # raw ingestion and retrieval take two questions a task run, in this process (where the
    # steps are watched); answer and judge one
    request = _request(tmp_path, "batched", **{"run.questions_per_task": 2, "run.processes": 1})
    executed.fail_ingest = "3387bf20"  # the second sample question
    with pytest.raises(RunFailures, match="1 question"):
        _run(request)
    run_dir = tmp_path / "batched"
    questions = json.loads((run_dir / "manifest.json").read_text())["question_ids"]
    others = [q for q in questions if q != "3387bf20"]
    assert executed.by_stage() == {
        "ingest": sorted(questions),
        **{stage: sorted(others) for stage in ("retrieval", "answer", "judge")},
    }
    first = _tables(run_dir)
    assert {r["question_id"] for r in first["retrieval"] if r["status"] == "error"} == {"3387bf20"}
    assert all(r["status"] == "ok" for r in first["retrieval"] if r["question_id"] != "3387bf20")

    # the fault gone, the same run again: only that question's stages run, each of the
    # others' results comes from its own cache record, written by the batch
    executed.fail_ingest = None
    executed.reset()
    result, rerun = _run(request)
    assert executed.by_stage() == {stage: ["3387bf20"] for stage in STAGES}
    assert result["from_cache"] == {
        "judge": LIMIT - 1,
        "answer": LIMIT - 1,
        "retrieval": LIMIT - 1,
        "ingest": LIMIT - 1,
    }
    states = _task_run_states(rerun, 4)
    assert set(states.values()) == {"Completed"}
    assert any(name == "ingest 1 question (3387bf20)" for name in states), states
    after = _tables(run_dir)
    for name in TABLES:  # the other questions' rows are kept as they were
        kept = [r for r in first[name] if r["question_id"] != "3387bf20"]
        assert [r for r in after[name] if r["question_id"] != "3387bf20"] == kept, name
    assert all(r["status"] == "ok" for r in after["retrieval"])


def test_batches_in_worker_processes_give_the_same_tables(harness: None, tmp_path: Path) -> None:
    timing = (
        "run_id",
        "seconds",
        "search_seconds",
        "started_at",
        "finished_at",
        "ingestion_id",
        "memory_id",
    )
    tables = {}
    for processes in (1, 2):
        run_id = f"processes-{processes}"
        overrides = {"run.questions_per_task": 2, "run.processes": processes}
        result, _ = _run(_request(tmp_path, run_id, **overrides))
        assert result["from_cache"] == dict.fromkeys(STAGES, 0)
        tables[processes] = {
            name: _without(rows, *timing) for name, rows in _tables(tmp_path / run_id).items()
        }
    assert tables[2] == tables[1]
    assert all(r["status"] == "ok" for r in tables[2]["retrieval"])
    # a rerun finds each question's results in the cache the worker processes' batches filled
    again, _ = _run(_request(tmp_path, "processes-2", **overrides))
    assert again["from_cache"] == dict.fromkeys(STAGES, LIMIT)


def _one_build_asked_three_times(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RunRequest:
    """Three questions of one history, read as one build (as a conversation's questions are)."""
    data = tmp_path / "shared.json"
    data.write_text(json.dumps([make_question(q) for q in ("q1", "q2", "q3")]))
    real_prepare = steps.prepare_questions

    def one_build(*args: Any, **kwargs: Any) -> Any:
        prepared, refs = real_prepare(*args, **kwargs)
        shared = [replace(r, build_id="conv-1", build_sha256="ab" * 32) for r in refs]
        return prepared, shared

    monkeypatch.setattr(steps, "prepare_questions", one_build)
    return RunRequest(config=FULL_FAKE, dataset=str(data), results_dir=str(tmp_path))


def test_questions_of_one_build_share_one_ingestion_and_its_cache(
    harness: None, tmp_path: Path, executed: Executed, monkeypatch: pytest.MonkeyPatch
) -> None:
    request = _one_build_asked_three_times(tmp_path, monkeypatch)
    _run(request.model_copy(update={"run_id": "shared-build"}))
    calls = executed.by_stage()
    assert len(calls["ingest"]) == 1  # one ingestion for the three questions
    assert calls["answer"] == calls["judge"] == ["q1", "q2", "q3"]
    tables = _tables(tmp_path / "shared-build")
    assert len({r["question_id"] for r in tables["ingest"]}) == 1
    assert sorted(r["question_id"] for r in tables["hypotheses"]) == ["q1", "q2", "q3"]
    assert all(r["hypothesis"] for r in tables["hypotheses"])  # each answered from the memory
    assert len(_entries_per_memory(tmp_path / "memory.sqlite")) == 1
    manifest = json.loads((tmp_path / "shared-build" / "manifest.json").read_text())
    assert list(manifest["memory_titles"].values()) == [f"conv-1@{'ab' * 8}"]

    executed.reset()  # a rerun of the failed-free run: everything from the cache
    again, _ = _run(request.model_copy(update={"run_id": "shared-build"}))
    assert executed.by_stage() == {stage: [] for stage in STAGES}
    assert again["from_cache"]["ingest"] == 1 and again["from_cache"]["answer"] == 3


def test_a_failed_build_fails_its_questions_and_a_rerun_ingests_it_once(
    harness: None, tmp_path: Path, executed: Executed, monkeypatch: pytest.MonkeyPatch
) -> None:
    request = _one_build_asked_three_times(tmp_path, monkeypatch)
    request = request.model_copy(update={"run_id": "shared-flaky"})
    executed.fail_ingest = "q1"  # the build's ingestion runs for its first question
    with pytest.raises(RunFailures, match="3 question"):
        _run(request)
    manifest = json.loads((tmp_path / "shared-flaky" / "manifest.json").read_text())
    assert manifest["failed_question_ids"] == ["q1", "q2", "q3"]

    executed.fail_ingest = None
    executed.reset()
    _run(request.model_copy(update={"failed_only": True}))
    calls = executed.by_stage()
    assert calls["ingest"] == ["q1"] and calls["answer"] == ["q1", "q2", "q3"]
    manifest = json.loads((tmp_path / "shared-flaky" / "manifest.json").read_text())
    assert manifest["failed_question_ids"] == []
    tables = _tables(tmp_path / "shared-flaky")
    assert sorted(r["question_id"] for r in tables["hypotheses"]) == ["q1", "q2", "q3"]
    assert all(r["status"] == "ok" for r in tables["hypotheses"])


def test_a_rerun_of_a_failed_answer_takes_its_build_from_the_cache(
    harness: None, tmp_path: Path, executed: Executed, monkeypatch: pytest.MonkeyPatch
) -> None:
    request = _one_build_asked_three_times(tmp_path, monkeypatch)
    request = request.model_copy(update={"run_id": "shared-answer"})
    executed.fail_answer = "q2"
    with pytest.raises(RunFailures, match="1 question"):
        _run(request)
    before = _tables(tmp_path / "shared-answer")

    executed.fail_answer = None
    executed.reset()
    _run(request.model_copy(update={"failed_only": True}))
    calls = executed.by_stage()
    assert calls["ingest"] == [] and calls["answer"] == ["q2"]  # the build is not redone
    after = _tables(tmp_path / "shared-answer")
    assert _without(after["ingest"], "run_id") == _without(before["ingest"], "run_id")
    assert all(r["status"] == "ok" for r in after["hypotheses"]) and len(after["hypotheses"]) == 3
