"""The run's artifacts in the Prefect UI: live progress, then tables and the markdown report."""

from __future__ import annotations

import contextvars
import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import cast
from uuid import UUID

from prefect.artifacts import (
    create_markdown_artifact,
    create_progress_artifact,
    create_table_artifact,
    update_progress_artifact,
)

from lme_bench.report.run_report import RunReport
from lme_bench.report.ui_markdown import (
    compare_markdown,
    judges_words,
    qa_artifact_words,
    qa_table,
    report_markdown,
    retrieval_table,
)
from lme_bench.results.summary import not_applicable
from lme_bench.run.progress import progress_text


class Progress:
    """A progress artifact: the share of questions done, its words counting builds ingested
    apart from questions where questions share builds (lme_bench.run.progress.progress_text).
    Updates go out from a background thread, at most once a second and only the latest, so a
    slow API never holds up the flow's scheduling; `close` sends the final one and waits."""

    def __init__(
        self,
        total: int,
        every_s: float = 1.0,
        *,
        builds: int | None = None,
        stages: Sequence[str] = (),
    ) -> None:
        self.total = max(total, 1)
        self.every_s = every_s
        self.builds, self.stages = builds, list(stages)
        self.stage_done: dict[str, int] = dict.fromkeys(self.stages, 0)
        self.running: dict[str, int] = {}
        self._changed = threading.Condition()
        created = create_progress_artifact(
            0.0, key="question-progress", description=self._text(0, 0, 0)
        )
        self._id = cast(UUID, created)  # a UUID when called from a sync flow
        self._latest: tuple[int, int, int] | None = None
        self._closed = False
        # run in this context: the settings that name the run's Prefect API go with it
        context = contextvars.copy_context()
        self._sender = threading.Thread(
            target=context.run, args=(self._send_loop,), name="progress", daemon=True
        )
        self._sender.start()

    def stage_finished(self, stage: str) -> None:
        """One more ingestion (of a build) or one more question's other stage done."""
        with self._changed:
            if stage in self.stage_done:
                self.stage_done[stage] += 1

    def tick(self, running: dict[str, int], done: int, failed: int, reused: int = 0) -> None:
        """The scheduler's heartbeat: the task runs in flight by stage, sent (at most once a
        second, and only when it changed) before any question is done."""
        with self._changed:
            running = {stage: n for stage, n in running.items() if n}
            if running == self.running:
                return
            self.running = running
        self.update(done, failed, reused)

    def update(self, done: int, failed: int, reused: int = 0) -> None:
        with self._changed:
            self._latest = (done, failed, reused)
            self._changed.notify()

    def close(self, done: int, failed: int, reused: int = 0) -> None:
        with self._changed:
            self._latest, self._closed = (done, failed, reused), True
            self.running = {}
            self._changed.notify()
        self._sender.join(timeout=30)

    def _send_loop(self) -> None:
        while True:
            with self._changed:
                while self._latest is None and not self._closed:
                    self._changed.wait()
                latest, self._latest, closed = self._latest, None, self._closed
            if latest is not None:
                self._send(*latest)
            if closed:
                return
            with self._changed:  # the pause between updates; `close` cuts it short
                self._changed.wait_for(lambda: self._closed, timeout=self.every_s)

    def _text(self, done: int, failed: int, reused: int) -> str:
        with self._changed:
            counts, running = dict(self.stage_done), dict(self.running)
        return progress_text(
            self.total, done, failed, reused, builds=self.builds, stage_done=counts, running=running
        )

    def _send(self, done: int, failed: int, reused: int) -> None:
        text = self._text(done, failed, reused)
        try:
            update_progress_artifact(self._id, 100.0 * done / self.total, description=text)
        except Exception as exc:  # progress is a courtesy: it never fails the run
            logging.getLogger(__name__).warning("progress artifact not updated: %s", exc)


def publish_report(report: RunReport, link_base: str | None = None) -> None:
    """The run's tables and its run-summary report; links to files under `link_base` when set
    (the URL serving the results folder), file:// otherwise."""
    where = f"run {report.run_id}; files in {report.run_dir}"
    session = report.summary["session"]
    if session["questions"] and not not_applicable(session):  # else the report says why
        create_table_artifact(
            table=retrieval_table(report.summary, "session"),
            key="retrieval-summary",
            description=(
                "Session retrieval by question type; overall: skips _abs (official printer); "
                f"overall, with user-turn evidence: run_retrieval.py's average; {where}"
            ),
        )
    if report.summary.get("qa"):
        create_table_artifact(
            table=qa_table(report.summary["qa"]),
            key="qa-scores",
            description=(
                f"{qa_artifact_words(report.summary)}; {judges_words(report.summary['qa'])};"
                f" {where}"
            ),
        )
    create_markdown_artifact(
        report_markdown(report, link_base), key="run-summary", description=where
    )


def publish_comparison(baseline: str, report: RunReport, link_base: str | None = None) -> None:
    """The run against `baseline` (a run id in the same results folder, or "previous") as the
    run compared it (its summary's `baseline` record, lme_bench.run.baseline), as an artifact;
    a comparison that could not be made, or a first run with no baseline yet, is said there."""
    record = report.summary.get("baseline") or {}
    against = record.get("run_id") or baseline
    paths = [Path(p) for p in record.get("files") or []]
    markdown = next((p for p in paths if p.suffix == ".md"), None)
    if record.get("status") == "no_baseline":
        text = f"# No baseline yet\n\n{record['message']}\n"
    elif markdown is None or not markdown.is_file():
        text = f"# No comparison with {against}\n\n{record.get('message', 'not compared')}\n"
    else:
        results_dir = report.run_dir.parent
        text = compare_markdown(markdown.read_text(encoding="utf-8"), paths, results_dir, link_base)
        text = f"**{record['message']}**\n\n{text}"
    create_markdown_artifact(
        text, key="compare", description=f"run {report.run_id} against {against}"
    )


def publish_history(
    report: RunReport, link_base: str | None = None, results_url: str | None = None
) -> None:
    """The trend of the run's series (lme_bench.report.history_artifact) as its
    `history-<series>` artifact; history.html is written beside (and at `results_url` when
    the run is kept at one). Never fails the run."""
    from lme_bench.report.history_artifact import history_artifact

    try:
        found = history_artifact(report.run_dir, link_base, results_url)
    except Exception as exc:  # the history is a view of the results: it never fails the run
        logging.getLogger(__name__).warning("history artifact not published: %s", exc)
        return
    create_markdown_artifact(
        found.markdown, key=found.key, description=f"the series of run {report.run_id}"
    )
