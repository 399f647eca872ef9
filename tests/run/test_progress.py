"""The progress line: counts per stage, failures, calls and spend, time left; redrawn in a
terminal, plain lines at most every `every_s` elsewhere, and always at the end."""

from __future__ import annotations

import io

from lme_bench.config.settings import PriceSettings
from lme_bench.ingest.records import SessionRecord
from lme_bench.results.qa_tables import HypothesisRow
from lme_bench.run.progress import RunProgress


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Outcome:
    def __init__(self, records: list[SessionRecord]) -> None:
        self.sessions = records


def _answer(calls: int, tokens_in: int) -> HypothesisRow:
    row = HypothesisRow("q", "multi-session", False, "x", "single", "openai:m", "v1", 10, 3)
    row.llm_calls, row.input_tokens, row.output_tokens = calls, tokens_in, 0
    return row


def test_line_counts_calls_spend_and_time_left() -> None:
    clock, out = Clock(), io.StringIO()
    prices = {
        "openai:m": PriceSettings(input_per_mtok=2.0, output_per_mtok=0.0),
        "openai:agent": PriceSettings(input_per_mtok=1.0, output_per_mtok=0.0),
    }
    progress = RunProgress(
        4, ["ingest", "answer"], prices, agent_model="openai:agent", out=out, clock=clock
    )
    record = SessionRecord("q", "s000", 0, "agentic", 4, llm_calls=5, input_tokens=1_000_000)
    progress.record("ingest", Outcome([record]))
    progress.record("answer", _answer(2, 500_000))
    progress.record("answer", None)  # a failed stage: counted, nothing to add
    clock.now = 30.0
    progress.update(questions_done=1, failed=1)
    assert progress.line() == (
        "1/4 questions | ingest 1 answer 2 | 1 failed | 7 model calls | spent $2.00 | "
        "0:30 wall, ~1:30 left"
    )
    assert out.getvalue() == progress.line() + "\n"  # not a terminal: a plain line


def test_plain_lines_at_most_every_interval_and_at_the_end() -> None:
    clock, out = Clock(), io.StringIO()
    progress = RunProgress(3, ["ingest"], {}, out=out, every_s=10.0, clock=clock)
    for second, done in ((0.0, 0), (4.0, 1), (12.0, 2)):
        clock.now = second
        progress.record("ingest", None)
        progress.update(questions_done=done, failed=0)
    clock.now = 13.0
    progress.show(final=True)
    lines = out.getvalue().splitlines()
    assert [line.split(" | ")[0] for line in lines] == [
        "0/3 questions",
        "2/3 questions",
        "2/3 questions",
    ]
    assert "spent" not in lines[0]  # no prices: no spend shown


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_gets_one_line_redrawn_in_place() -> None:
    out = Terminal()
    progress = RunProgress(2, ["ingest"], {}, out=out, clock=Clock())
    progress.update(questions_done=1, failed=0)
    progress.update(questions_done=2, failed=0)
    progress.show(final=True)
    text = out.getvalue()
    assert text.count("\r\x1b[2K") == 3 and text.endswith("\n") and text.count("\n") == 1


def test_ingestion_counts_builds_where_questions_share_them() -> None:
    clock, out = Clock(), io.StringIO()
    progress = RunProgress(5, ["ingest", "answer"], {}, out=out, clock=clock, builds=2)
    progress.record("ingest", None)
    progress.record("answer", None)
    assert progress.line().startswith("0/5 questions | ingest 1/2 builds answer 1 |")
    one_each = RunProgress(2, ["ingest"], {}, out=out, clock=clock, builds=2)
    assert one_each.line().startswith("0/2 questions | ingest 0 |")  # as before builds


def test_the_line_shows_as_work_starts_and_every_interval_while_nothing_finishes() -> None:
    clock, out = Clock(), io.StringIO()
    progress = RunProgress(2, ["ingest", "answer"], {}, out=out, every_s=10.0, clock=clock)
    assert out.getvalue() == ""
    progress.tick({"ingest": 2, "answer": 0})  # the first ingestions submitted
    assert (
        out.getvalue()
        == "0/2 questions | ingest 0 (2 running) answer 0 | 0 model calls | 0:00 wall\n"
    )
    for second in (1.0, 5.0, 9.0):  # the scheduler's heartbeat while no ingestion finishes
        clock.now = second
        progress.tick({"ingest": 2})
    assert len(out.getvalue().splitlines()) == 1  # at most one plain line an interval
    clock.now = 10.0
    progress.tick({"ingest": 2})
    lines = out.getvalue().splitlines()
    assert len(lines) == 2 and lines[1].endswith("| 0:10 wall")
    progress.record("ingest", None)
    progress.record("ingest", None)
    progress.show(final=True)
    assert out.getvalue().splitlines()[-1].split(" | ")[1] == "ingest 2 answer 0"  # none running


def test_model_calls_count_calls_made_not_results_taken_from_the_cache() -> None:
    clock, out = Clock(), io.StringIO()
    prices = {"openai:m": PriceSettings(input_per_mtok=2.0, output_per_mtok=0.0)}
    progress = RunProgress(3, ["ingest", "answer"], prices, agent_model="openai:m", out=out,
                           clock=clock)  # fmt: skip
    made = SessionRecord("q1", "s000", 0, "agentic", 4, llm_calls=3, input_tokens=500_000)
    resumed = SessionRecord("q1", "s001", 1, "agentic", 4, llm_calls=20, input_tokens=10**6)
    resumed.resumed = True  # from a checkpoint of an earlier attempt
    progress.record("ingest", Outcome([made, resumed]))
    progress.record("answer", _answer(2, 0))
    progress.record("answer", _answer(40, 10**6), from_cache=True)
    progress.record("ingest", Outcome([made]), from_cache=True)
    progress.update(questions_done=2, failed=0)
    assert "| 5 model calls (63 more in earlier results) | spent $1.00 |" in progress.line()
