"""The judge stage on BEAM questions: rubric scores from each LLM judge in the `score` column
(no yes/no label), the official prompts from [judge] beam_repo, and the plan-time errors."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from langchain_core.messages import HumanMessage

from lme_bench.benchmarks.split import splitter_for
from lme_bench.builtin_benchmarks.beam.prompts import load_beam_prompts
from lme_bench.builtin_benchmarks.beam.stored import stored_beam_gold
from lme_bench.config.settings import ConfigError, Settings, load_settings
from lme_bench.dataset.shards import QuestionRef, prepare_dataset
from lme_bench.judge.panel import judge_panel
from lme_bench.judge.stage import judge_question
from lme_bench.providers.fake_policies import rubric_judge
from lme_bench.results.qa_tables import SCORES_SCHEMA, HypothesisRow, ScoreRow
from lme_bench.results.readback import read_scores
from lme_bench.run.steps import plan_run
from tests.benchmarks.beam.samples import write_chat, write_checkout, write_questions


def _beam(tmp_path: Path) -> tuple[Path, list[QuestionRef]]:
    write_chat(tmp_path)
    write_questions(tmp_path)
    split, kind = splitter_for(None, tmp_path / "chats")
    refs = prepare_dataset(tmp_path / "chats", tmp_path / "cache", split, kind).questions
    return tmp_path / "chats", refs


def _settings(tmp_path: Path, dataset: Path, **more: Any) -> Settings:
    overrides = {
        "run.results_dir": str(tmp_path / "results"),
        "models.qa": "fake:quote-memory",
        "models.judge": "fake:rubric-judge",
        "dataset.path": str(dataset),
        **more,
    }
    return load_settings(None, **overrides)


def _answer(ref: QuestionRef, text: str) -> HypothesisRow:
    return HypothesisRow(ref.question_id, ref.question_type, False, text, "single", "q", "v", 5, 0)


def test_each_judge_and_repeat_gives_a_rubric_score_and_no_label(tmp_path: Path) -> None:
    chats, refs = _beam(tmp_path)
    checkout = write_checkout(tmp_path)
    settings = _settings(tmp_path, chats, **{"judge.beam_repo": str(checkout), "judge.repeats": 2})
    ref = next(r for r in refs if r.question_type == "information_extraction")
    rows = asyncio.run(
        judge_question(ref, _answer(ref, "Basil, it grows fast"), judge_panel(settings))
    )
    assert [(r.judge, r.repeat) for r in rows] == [
        ("fake:rubric-judge", 0),
        ("fake:rubric-judge", 1),
    ]
    gold = stored_beam_gold(ref.shard)
    prompts = load_beam_prompts(checkout)
    # the fake judge's score per item, as the official evaluator adds them (int: 0.5 counts 0)
    items = [
        int(
            json.loads(rubric_judge_reply(prompts.rubric_prompt(i, "Basil, it grows fast")))[
                "score"
            ]
        )
        for i in gold.rubric
    ]
    for row in rows:
        assert row.label is None and row.status == "ok" and row.judge_kind == "llm"
        assert row.score == pytest.approx(sum(items) / len(items))
        assert row.llm_calls == len(gold.rubric) and row.input_tokens > 0
        assert row.prompt_sha256 == prompts.rubric_sha256
        assert json.loads(row.raw_verdict)["item_scores"] == items


def rubric_judge_reply(prompt: str) -> str:
    return str(rubric_judge([HumanMessage(prompt)]).content)


def test_no_llm_judge_gives_no_beam_score(tmp_path: Path) -> None:
    chats, refs = _beam(tmp_path)
    settings = _settings(tmp_path, chats, **{"models.judge": "none"})
    assert (
        asyncio.run(judge_question(refs[0], _answer(refs[0], "anything"), judge_panel(settings)))
        == []
    )


def test_a_beam_run_with_an_llm_judge_and_no_checkout_stops_at_plan_time(tmp_path: Path) -> None:
    chats, _ = _beam(tmp_path)
    with pytest.raises(ConfigError, match=r"\[judge\] beam_repo is not set") as stopped:
        plan_run(_settings(tmp_path, chats))
    assert "mohammadtavakoli78/BEAM" in str(stopped.value)
    plan_run(_settings(tmp_path, chats, **{"models.judge": "none"}))  # no judge: no checkout
    plan_run(_settings(tmp_path, chats, **{"run.stages": ["ingest", "retrieval", "answer"]}))


def test_batch_judging_of_beam_questions_is_refused_at_plan_time(tmp_path: Path) -> None:
    chats, _ = _beam(tmp_path)
    checkout = str(write_checkout(tmp_path))
    settings = _settings(tmp_path, chats, **{"judge.beam_repo": checkout, "judge.batch": True})
    with pytest.raises(ConfigError, match=r"\[judge\] batch = true: BEAM questions"):
        plan_run(settings)


def test_a_checkout_without_the_prompt_is_named_at_plan_time(tmp_path: Path) -> None:
    chats, _ = _beam(tmp_path)
    checkout = str(write_checkout(tmp_path, prompts=None))
    with pytest.raises(ConfigError, match=r"src/prompts.py not found"):
        plan_run(_settings(tmp_path, chats, **{"judge.beam_repo": checkout}))


def test_scores_tables_before_the_score_column_still_read(tmp_path: Path) -> None:
    row = ScoreRow("q1", "t", False, "j", "llm", 0, "v", "p", "", True, True, "yes", "ok", "")
    values = {f.name: getattr(row, f.name, None) for f in SCORES_SCHEMA if f.name != "score"}
    values["run_id"] = "old"
    old = pa.Table.from_pylist(
        [values], schema=SCORES_SCHEMA.remove(SCORES_SCHEMA.get_field_index("score"))
    )
    pq.write_table(old, tmp_path / "scores.parquet")
    (read,) = read_scores(tmp_path / "scores.parquet")
    assert read.score is None and read.label is True


def test_the_estimate_counts_a_call_per_rubric_item_and_the_ordering_questions(
    tmp_path: Path,
) -> None:
    from lme_bench.run.estimate import estimate_run

    chats, refs = _beam(tmp_path)
    checkout = write_checkout(tmp_path)
    settings = _settings(tmp_path, chats, **{"judge.beam_repo": str(checkout), "judge.repeats": 2})
    golds = [stored_beam_gold(r.shard) for r in refs]
    items = sum(len(g.rubric) for g in golds)
    ordering = sum(len(g.rubric) for g in golds if g.ability == "event_ordering")
    found = estimate_run((r.load() for r in refs), settings, builds=[r.build for r in refs])
    (judge,) = [s for s in found.stages if s.stage == "judge"]
    assert judge.calls == 2 * (items + ordering)


def test_a_beam_questions_judge_key_follows_the_checkouts_prompts_not_its_path(
    tmp_path: Path,
) -> None:
    import shutil
    from dataclasses import replace

    from lme_bench.run.cache_keys import stage_key

    chats, refs = _beam(tmp_path)
    checkout = write_checkout(tmp_path)
    copy = tmp_path / "copy"
    shutil.copytree(checkout, copy)
    longmemeval = replace(refs[0], benchmark="longmemeval", build_shard="", build_sha256="")

    def keys(path: Path) -> tuple[str | None, str | None]:
        settings = _settings(tmp_path, chats, **{"judge.beam_repo": str(path)})
        answer = _answer(refs[0], "Basil")
        found = (stage_key("judge", r, settings, "run", answer) for r in (refs[0], longmemeval))
        return next(found), next(found)

    beam, other = keys(checkout)
    assert keys(copy) == (beam, other)  # the same prompts elsewhere: the same keys
    prompts = copy / "src" / "prompts.py"
    prompts.write_text(prompts.read_text().replace("STANDIN JUDGE", "STANDIN JUDGE, EDITED"))
    edited_beam, edited_other = keys(copy)
    assert edited_beam != beam and edited_other == other
