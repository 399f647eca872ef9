"""A plug-in benchmark's questions are judged by the prompt set's generic criterion with their
first gold answer, and a question whose answer is not in the history by the abstention prompt
with the neutral explanation; checked on the request bodies a loopback OpenAI-compatible server
receives, and counted so by the cost estimate."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

from lme_bench.benchmarks.split import splitter_for
from lme_bench.builtin_benchmarks.locomo.judge_stage import NO_ANSWER_EXPLANATION
from lme_bench.config.settings import load_settings
from lme_bench.dataset.shards import prepare_dataset
from lme_bench.judge.panel import judge_panel
from lme_bench.judge.prompts import bundled_prompts_dir
from lme_bench.judge.stage import judge_question
from lme_bench.qa.stage import unanswered_row
from lme_bench.run.estimate import estimate_run
from tests.providers.fake_openai_server import serve

PLUGIN = """
from pathlib import Path
from lme_bench.benchmarks.protocol import Build, BuildSession, BuildTurn, Gold, Question, Scoring


class Diary:
    name = "diary"
    scoring = Scoring(official_scorers=("none",), headline=("accuracy",), module=__name__)

    def detect(self, path):
        return Path(path).suffix == ".diary"

    def validate(self, path):
        pass

    def builds(self, path):
        turns = (BuildTurn(0, "user", "I planted basil-7 today."),)
        yield Build("d", (BuildSession("s000", "2024-02-03", turns),))

    def questions(self, path):
        yield Question("p1", "d", "recall", "What did I plant?"), Gold("p1", ("basil-7",))
        yield (
            Question("p2", "d", "unknown", "What did I harvest?"),
            Gold("p2", (), abstention=True),
        )
"""
RESPONSE = "You planted basil-7."


def test_plugin_questions_get_the_generic_and_abstention_prompts(tmp_path: Path) -> None:
    (tmp_path / "diary.py").write_text(PLUGIN)
    data = tmp_path / "garden.diary"
    data.write_text("")
    split = splitter_for(f"{tmp_path / 'diary.py'}:Diary", data)
    refs = prepare_dataset(data, tmp_path / "split", *split).questions
    assert [(r.benchmark, r.is_abstention) for r in refs] == [("diary", False), ("diary", True)]
    with serve([{"content": "yes"}]) as (url, fake):
        settings = load_settings(
            None,
            **{
                "run.results_dir": str(tmp_path / "results"),
                "run.stages": ["judge"],
                "models.judge": "local:judge",
                "models.retry_attempts": 1,
                "providers.local": {"base_url": url},
            },
        )
        rows = [
            asyncio.run(
                judge_question(
                    r,
                    replace(unanswered_row(r, settings), hypothesis=RESPONSE),
                    judge_panel(settings),
                )
            )
            for r in refs
        ]
        sent = [body["messages"][0]["content"] for body in fake.requests]
    folder = bundled_prompts_dir()
    fill = {"{question}": "", "{answer}": "", "{response}": RESPONSE}
    expected = []
    for name, question, answer in (
        ("default", "What did I plant?", "basil-7"),
        ("abstention", "What did I harvest?", NO_ANSWER_EXPLANATION),
    ):
        text = (folder / f"{name}.txt").read_text()
        for field, value in (fill | {"{question}": question, "{answer}": answer}).items():
            text = text.replace(field, value)
        expected.append(text)
    assert sent == expected
    llm = [(r.prompt_name, r.label) for found in rows for r in found if r.judge_kind == "llm"]
    assert llm == [("default", True), ("abstention", True)]
    estimate = estimate_run((r.load() for r in refs), settings, builds=[r.build for r in refs])
    (judge,) = [s for s in estimate.stages if s.stage == "judge"]
    assert judge.calls == 2
