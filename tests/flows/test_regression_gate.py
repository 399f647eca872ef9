"""Three runs of one series on the bundled sample, each compared with the previous one: the
first has no baseline yet and is not failed; the second, as good as the first, passes the
regression gate; the third, with a worse reader, still writes every table, then its flow run
ends Failed with what fell, `lme-bench run` exits 3 and its summary.md and report.html lead with
the regression; `lme-bench compare --fail-on-regression` exits 3 on the second and third runs,
0 on the first two and 2 on a run that is not there (through the real command)."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from langchain_core.messages import AIMessage, BaseMessage
from lme_bench_flows import command as cli
from lme_bench_flows.benchmark import benchmark
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import (
    LogFilter,
    LogFilterFlowRunId,
)
from prefect.client.schemas.sorting import FlowRunSort, LogSort
from prefect.testing.utilities import prefect_test_harness

from lme_bench.providers import fake_policies
from lme_bench.run.request import RunRequest
from lme_bench.run.steps import bundled_sample

pytestmark = pytest.mark.slow  # three whole flow runs
LIMIT = 20  # enough pairs for the interval of a 50-point drop to exclude zero
ROOT = Path(__file__).resolve().parents[2]


def _answers() -> dict[str, str | None]:
    """Question text -> its answer; None for abstention questions (the answer: don't know)."""
    found = json.loads(bundled_sample().read_text(encoding="utf-8"))
    return {
        q["question"].strip(): None if q["question_id"].endswith("_abs") else str(q["answer"])
        for q in found
    }


def _reader(wrong_share: int) -> fake_policies.Policy:
    """A scripted reader that knows the answers, except for `wrong_share` questions in three
    (picked by a hash of the question), where it says it does not know."""
    answers = _answers()

    def read(messages: list[BaseMessage]) -> AIMessage:
        prompt = str(messages[-1].content)
        question = prompt.split("Question: ", 1)[-1].split("\n", 1)[0].strip()
        answer = answers.get(question)
        if answer is None or zlib.crc32(question.encode()) % 3 < wrong_share:
            return AIMessage(content="I don't know.")
        return AIMessage(content=f"It is {answer}.")

    return read


@pytest.fixture(scope="module")
def series(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The three runs of series "gate-weekly", each with compare_to "previous"; the third
    through `lme-bench run` in this process, with the worse reader from the environment."""
    results = tmp_path_factory.mktemp("results")
    config = results.parent / "gate-weekly.toml"
    config.write_text(
        '[ingest]\nmode = "raw"\n[qa]\nstrategy = "single"\n'
        '[models]\nqa = "fake:gate-reader"\njudge = "fake:match-judge"\n'
        f'[run]\nresults_dir = "{results}"\n'
    )
    found: dict[str, Any] = {"results": results, "config": config}
    flow_logs = logging.getLogger("prefect.flow_runs")  # the tests log warnings only
    level = flow_logs.level
    with pytest.MonkeyPatch.context() as patch, prefect_test_harness(server_startup_timeout=120):
        flow_logs.setLevel(logging.INFO)  # the flow's own lines reach the API
        patch.setitem(fake_policies.POLICIES, "gate-reader", _reader(0))
        patch.setitem(fake_policies.POLICIES, "gate-worse-reader", _reader(2))
        for run_id in ("week-1", "week-2"):
            request = RunRequest(
                config=str(config), run_id=run_id, limit=LIMIT, compare_to="previous"
            )
            state = benchmark(request, return_state=True)
            found[run_id] = state
            found[f"{run_id} logs"] = _logs(state.state_details.flow_run_id)
        patch.setenv("LME_MODELS__QA", "fake:gate-worse-reader")
        patch.setenv("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
        command = ["run", str(config), "--run-id", "week-3", "--limit", str(LIMIT)]
        found["week-3 exit"] = cli.main([*command, "--compare-to", "previous"])
        found["week-3 flow run"] = _latest_flow_run()
        found["week-3 logs"] = _logs(found["week-3 flow run"].id)
        found["artifacts"] = _artifacts()
        flow_logs.setLevel(level)
        yield found


def _latest_flow_run() -> Any:
    with get_client(sync_client=True) as client:
        return client.read_flow_runs(sort=FlowRunSort.START_TIME_DESC, limit=1)[0]


def _logs(flow_run_id: UUID | None) -> list[str]:
    """The flow run's last log lines, once its last one ("… questions done …") reached the API
    (logs are sent in batches, in the background)."""
    assert flow_run_id is not None
    deadline = time.monotonic() + 60
    while True:
        with get_client(sync_client=True) as client:
            found = client.read_logs(
                log_filter=LogFilter(flow_run_id=LogFilterFlowRunId(any_=[flow_run_id])),
                sort=LogSort.TIMESTAMP_DESC,
                limit=20,  # the last ones; task runs log a line each
            )
        lines = [log.message for log in reversed(found)]
        if any("questions done" in line for line in lines) or time.monotonic() > deadline:
            return lines
        time.sleep(0.5)


def _artifacts() -> dict[str, list[str]]:
    """The compare artifacts' texts, by flow run id."""
    by_run: dict[str, list[str]] = {}
    with get_client(sync_client=True) as client:
        for artifact in client.read_artifacts():
            if artifact.key == "compare":
                by_run.setdefault(str(artifact.flow_run_id), []).append(str(artifact.data))
    return by_run


def test_the_first_run_of_a_series_has_no_baseline_yet_and_is_not_failed(
    series: dict[str, Any],
) -> None:
    state = series["week-1"]
    assert state.is_completed()
    summary_md = (series["results"] / "week-1" / "summary.md").read_text()
    assert summary_md.split("\n\n")[1].startswith("**No baseline yet**: no earlier completed run")
    record = json.loads((series["results"] / "week-1" / "summary.json").read_text())["baseline"]
    assert record["status"] == "no_baseline" and record["run_id"] is None
    logs = series["week-1 logs"]
    assert any(line.startswith("no baseline yet: ") for line in logs), logs
    (artifact,) = series["artifacts"][str(state.state_details.flow_run_id)]
    assert artifact.startswith("# No baseline yet")


def test_a_run_as_good_as_the_previous_passes_the_gate(series: dict[str, Any]) -> None:
    state = series["week-2"]
    assert state.is_completed()
    record = json.loads((series["results"] / "week-2" / "summary.json").read_text())["baseline"]
    assert (record["status"], record["run_id"], record["series"]) == (
        "no_regression",
        "week-1",
        "gate-weekly",
    )
    watched = {f["name"]: f for f in record["figures"]}
    assert set(watched) == {"qa.overall", "qa.task_averaged", "retrieval.session.recall_all@5"}
    assert watched["qa.overall"]["delta"] == 0 and watched["qa.overall"]["n"] == LIMIT
    (artifact,) = series["artifacts"][str(state.state_details.flow_run_id)]
    assert artifact.startswith("**no regression vs week-1")
    assert "Compare `week-1` (A) vs `week-2` (B)" in artifact


def test_a_worse_reader_fails_the_run_with_what_fell_after_writing_everything(
    series: dict[str, Any],
) -> None:
    run_dir = series["results"] / "week-3"
    assert series["week-3 exit"] == 3
    flow_run = series["week-3 flow run"]
    assert flow_run.state.is_failed()
    message = flow_run.state.message
    assert message.startswith("regressed: QA overall \u2212") and "vs week-2" in message
    assert "session recall_all@5" not in message  # the memory is the same: it did not fall
    for name in ("retrieval.parquet", "hypotheses.parquet", "scores.parquet", "report.html"):
        assert (run_dir / name).is_file(), name
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["series"] == "gate-weekly" and manifest["failed_question_ids"] == []
    record = json.loads((run_dir / "summary.json").read_text())["baseline"]
    fell = {f["name"] for f in record["figures"] if f["fell"]}
    assert fell == {"qa.overall", "qa.task_averaged"}
    overall = next(f for f in record["figures"] if f["name"] == "qa.overall")
    assert overall["ci95"][1] < 0 and overall["delta"] <= -0.02
    assert record["message"] in message
    summary_md = (run_dir / "summary.md").read_text()
    assert summary_md.split("\n\n")[1].startswith("**Regressed** against `week-2`")
    html = (run_dir / "report.html").read_text()
    assert html.index('id="baseline"') < html.index('id="headline"')
    assert "<b>Regressed</b>" in html
    logs = series["week-3 logs"]
    last = max(i for i, line in enumerate(logs) if "questions done" in line)  # the flow's own
    assert logs[last].startswith("regressed: QA overall"), logs
    assert all("regressed: QA overall" in line for line in logs[last + 1 :])
    assert any("regressed: QA overall" in a for a in series["artifacts"][str(flow_run.id)])


def _compare(results: Path, a: str, b: str) -> subprocess.CompletedProcess[str]:
    command = [str(Path(sys.executable).with_name("lme-bench")), "compare", a, b]
    return subprocess.run(
        [*command, "--results-dir", str(results), "--fail-on-regression", "--resamples", "500"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={k: v for k, v in os.environ.items() if not k.startswith("LME_")},
    )


def test_compare_fails_on_regression_with_exit_3_through_the_command(
    series: dict[str, Any], tmp_path: Path
) -> None:
    results = series["results"]
    worse = _compare(results, "week-2", "week-3")
    assert worse.returncode == 3, worse.stderr
    assert (
        worse.stderr.strip().splitlines()[-1].startswith("lme-bench: regressed: QA overall \u2212")
    )
    same = _compare(results, "week-1", "week-2")
    assert same.returncode == 0, same.stderr
    assert "no regression vs week-1" in same.stderr
    missing = _compare(results, "week-1", "no-such-run")
    assert missing.returncode == 2 and "no-such-run" in missing.stderr


def test_compare_applies_the_regression_settings_of_the_config_it_is_given(
    series: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    compare = ["compare", "week-2", "week-3", "--results-dir", str(series["results"])]
    compare += ["--fail-on-regression", "--resamples", "500", "--out", str(tmp_path)]
    lenient = tmp_path / "lenient.toml"
    lenient.write_text("[regression]\nmin_drop = 95\n")  # the drop is smaller than that
    assert cli.main([*compare, "--config", str(lenient)]) == 0
    assert "no regression vs week-2: QA overall \u2212" in capsys.readouterr().err
    retrieval_only = tmp_path / "retrieval.toml"
    retrieval_only.write_text('[regression]\nwatch = ["retrieval.session.recall_all@5"]\n')
    assert cli.main([*compare, "--config", str(retrieval_only)]) == 0
    misspelt = tmp_path / "misspelt.toml"
    misspelt.write_text('[regression]\nwatch = ["qa.overal"]\n')
    for written in tmp_path.glob("compare-*"):
        written.unlink()
    assert cli.main([*compare, "--config", str(misspelt)]) == 2
    assert "'qa.overal'" in capsys.readouterr().err
    assert not list(tmp_path.glob("compare-*"))  # refused before anything is written
