"""`[regression]`: the figures watched by their stable names (a bad one refused, named), the
smallest drop; settings that change no result: no rerun refused for them, in no cache key,
not in the config digest."""

from __future__ import annotations

from pathlib import Path

import pytest

from lme_bench.config.settings import ConfigError, load_settings
from lme_bench.results.recorded_settings import check_settings, record_settings
from lme_bench.results.series import config_digest
from lme_bench.run import cache_keys
from tests.run.test_cache_keys import STAGES, _key

CONFIG = Path("configs/full-fake.toml")
STRICTER = {"regression.watch": ["qa.abstention", "retrieval.turn.ndcg_any@10"]}
STRICTER |= {"regression.min_drop": 0.5}


def test_the_defaults_watch_qa_overall_task_averaged_and_session_recall_all_at_5() -> None:
    gate = load_settings(CONFIG).regression
    assert gate.watch == ["qa.overall", "qa.task_averaged", "retrieval.session.recall_all@5"]
    assert gate.min_drop == 2.0
    chosen = load_settings(CONFIG, **STRICTER).regression
    assert chosen.watch == ["qa.abstention", "retrieval.turn.ndcg_any@10"]


def test_an_unknown_figure_is_refused_naming_it_and_where_it_came_from(tmp_path: Path) -> None:
    config = tmp_path / "gate.toml"
    config.write_text('[regression]\nwatch = ["qa.overall", "retrieval.session.recall@5"]\n')
    with pytest.raises(ConfigError) as caught:
        load_settings(config)
    message = str(caught.value)
    assert str(config) in message and "regression.watch" in message
    assert "'retrieval.session.recall@5'" in message and "qa.overall," in message
    with pytest.raises(ConfigError, match=r"regression\.min_drop"):
        load_settings(CONFIG, **{"regression.min_drop": -1})


def test_regression_settings_force_no_rerun_and_enter_no_cache_key_or_digest(
    tmp_path: Path,
) -> None:
    before = load_settings(CONFIG, **{"run.results_dir": tmp_path, "run.id": "r1"})
    after = load_settings(CONFIG, **{"run.results_dir": tmp_path, "run.id": "r1"}, **STRICTER)
    record_settings(tmp_path / "r1", before, {"config": str(CONFIG)})
    check_settings(tmp_path / "r1", after)  # a rerun with another gate is no other run
    assert config_digest(before) == config_digest(after)
    assert cache_keys.memory_scope(before, "r1") == cache_keys.memory_scope(after, "r1")
    for stage in STAGES:
        assert _key(stage, before) == _key(stage, after), stage


def test_every_retrieval_metric_a_run_scores_can_be_watched() -> None:
    from lme_bench.config.regression_section import figure_names
    from lme_bench.metrics.ranking_metrics import METRIC_NAMES

    names = set(figure_names())
    for granularity in ("session", "turn"):
        assert {f"retrieval.{granularity}.{m}" for m in METRIC_NAMES} <= names
