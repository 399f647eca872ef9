"""The stage table (lme_bench.run.stage_table): a stage's cache key hashes every setting of its
section but those declared to change no result, so a setting added to a section is in the key
without anyone listing it."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import create_model

from lme_bench.config.settings import Settings, load_settings
from lme_bench.dataset.shards import QuestionRef
from lme_bench.ingest.question import IngestOutcome, MemoryLocation
from lme_bench.run import cache_keys
from lme_bench.run.stage_table import PER_QUESTION, SERVE_ORDER, STAGE_TABLE, STAGES
from tests.factories import hypothesis_row

REF = QuestionRef(0, "q1", "single-session-user", False, "ab" * 32, 2, 4, "shard-0")
UPSTREAM = {
    "ingest": MemoryLocation("q1", "memory-1", 0),
    "retrieval": IngestOutcome("q1", "memory-1", 4, 0.1, ingestion_id="first"),
    "answer": IngestOutcome("q1", "memory-1", 4, 0.1, ingestion_id="first"),
    "judge": hypothesis_row(),
}


def _settings(tmp_path: Path) -> Settings:
    # an ingestion with a memory agent reads its section (a raw one only copies sessions in)
    every = {"run.results_dir": tmp_path, "ingest.mode": "agentic"}
    return load_settings(Path("configs/full-fake.toml"), **every)


def _with_new_setting(settings: Settings, stage: str, value: int) -> Settings:
    """The settings with a setting no stage knows of added to `stage`'s section."""
    name = STAGES[stage].section
    section = getattr(settings, name)
    grown = create_model(
        f"Grown{type(section).__name__}", __base__=type(section), new_knob=(int, 0)
    )
    return settings.model_copy(update={name: grown(**section.model_dump(), new_knob=value)})


@pytest.mark.parametrize("stage", PER_QUESTION)
def test_a_new_setting_in_a_stages_section_changes_its_key(tmp_path: Path, stage: str) -> None:
    settings = _settings(tmp_path)
    keys = {
        cache_keys.stage_key(
            stage, REF, _with_new_setting(settings, stage, n), "run-1", UPSTREAM[stage]
        )
        for n in (1, 2)
    }
    assert len(keys) == 2


@pytest.mark.parametrize("stage", PER_QUESTION)
def test_a_setting_declared_not_hashed_leaves_the_key_alone(tmp_path: Path, stage: str) -> None:
    settings = _settings(tmp_path)
    spec = STAGES[stage]
    section = getattr(settings, spec.section)
    assert spec.not_hashed <= set(type(section).model_fields)  # no name misspelt
    for name in spec.not_hashed:
        if name.endswith("_poll_s"):
            changed = section.model_copy(update={name: 5.0})
        elif name == "batch":
            changed = section.model_copy(update={name: True})
        else:
            continue  # a path stands for files whose contents the key hashes instead
        moved = settings.model_copy(update={spec.section: changed})
        assert cache_keys.stage_key(stage, REF, moved, "run-1", UPSTREAM[stage]) == (
            cache_keys.stage_key(stage, REF, settings, "run-1", UPSTREAM[stage])
        )


def test_each_stage_follows_one_before_it_and_the_scheduler_serves_the_last_first() -> None:
    for position, spec in enumerate(STAGE_TABLE):
        assert spec.upstream is None or spec.upstream in PER_QUESTION[:position]
    assert SERVE_ORDER == ("judge", "answer", "retrieval", "ingest")
