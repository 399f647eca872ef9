"""Cache keys see what a stage's result depends on: its own source (not other stages'), the
ingestion that filled the memory, and the settings of the providers its models come from."""

from __future__ import annotations

import re
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from lme_bench.common import code_digest
from lme_bench.config.settings import Settings, load_settings
from lme_bench.dataset.shards import QuestionRef
from lme_bench.ingest.question import IngestOutcome, MemoryLocation
from lme_bench.run import cache_keys
from lme_bench.run.stage_table import STAGES as STAGES_BY_NAME
from tests.factories import hypothesis_row

STAGES = ("ingest", "retrieval", "answer", "judge")
REF = QuestionRef(0, "q1", "single-session-user", False, "ab" * 32, 2, 4, "shard-0")
LOCATION = MemoryLocation("q1", "memory-1", 0)
OUTCOME = IngestOutcome("q1", "memory-1", 4, 0.1, ingestion_id="first")


def _settings(tmp_path: Path, **overrides: object) -> Settings:
    every = {"run.results_dir": tmp_path} | overrides
    return load_settings(Path("configs/full-fake.toml"), **every)


def _key(stage: str, settings: Settings) -> str | None:
    upstream = {"ingest": LOCATION, "judge": hypothesis_row()}.get(stage, OUTCOME)
    return cache_keys.stage_key(stage, REF, settings, "run-1", upstream)


@pytest.fixture
def edited_tree(tmp_path: Path) -> Path:
    """A copy of the package whose retrieval metrics have one function edited."""
    tree = tmp_path / "lme_bench"
    shutil.copytree(code_digest.SOURCE_ROOT, tree, ignore=shutil.ignore_patterns("__pycache__"))
    metrics = tree / "metrics" / "ranking_metrics.py"
    source = metrics.read_text()
    edited = re.sub(r"(\ndef \w+\(.*?\).*?:\n)", r"\1    _ = 'a fix'\n", source, count=1)
    assert edited != source
    metrics.write_text(edited)
    return tree


def test_editing_a_retrieval_metric_changes_the_retrieval_code_but_not_the_ingestion(
    edited_tree: Path,
) -> None:
    before = {stage: code_digest.entry_code_digest(STAGES_BY_NAME[stage].entry) for stage in STAGES}
    after = {
        stage: code_digest.entry_code_digest(STAGES_BY_NAME[stage].entry, edited_tree)
        for stage in STAGES
    }
    assert after["retrieval"] != before["retrieval"]
    assert after["answer"] != before["answer"]  # the reader ranks with the same module
    assert after["ingest"] == before["ingest"]
    assert after["judge"] == before["judge"]


def test_editing_a_retrieval_metric_changes_the_retrieval_key_not_the_ingest_key(
    edited_tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = _settings(tmp_path)
    before = {stage: _key(stage, settings) for stage in STAGES}
    monkeypatch.setattr(code_digest, "SOURCE_ROOT", edited_tree)
    after = {stage: _key(stage, settings) for stage in STAGES}
    assert after["retrieval"] != before["retrieval"]
    assert after["ingest"] == before["ingest"]
    assert after["judge"] == before["judge"]


def test_editing_a_judge_prompt_leaves_the_ingestion_alone(tmp_path: Path) -> None:
    tree = tmp_path / "lme_bench"
    shutil.copytree(code_digest.SOURCE_ROOT, tree, ignore=shutil.ignore_patterns("__pycache__"))
    prompt = next((tree / "judge" / "prompts").rglob("default.txt"))
    prompt.write_text(prompt.read_text() + "\nAnswer yes or no.\n")
    assert code_digest.entry_code_digest(
        STAGES_BY_NAME["judge"].entry, tree
    ) != code_digest.entry_code_digest(STAGES_BY_NAME["judge"].entry)
    assert code_digest.entry_code_digest(
        STAGES_BY_NAME["ingest"].entry, tree
    ) == code_digest.entry_code_digest(STAGES_BY_NAME["ingest"].entry)


def test_a_stage_closure_follows_lazy_imports_and_skips_type_checking_ones() -> None:
    source = (
        "from __future__ import annotations\n"
        "from typing import TYPE_CHECKING\n"
        "from . import sibling\n"
        "from ..metrics.ranking_metrics import score_ranking\n"
        "if TYPE_CHECKING:\n"
        "    from lme_bench.config.settings import Settings\n"
        "    import lme_bench.run.finish\n"
        "def run() -> None:\n"
        "    from lme_bench.judge import (\n"
        "        fallback,  # the labelled scorer\n"
        "        verdict as v,\n"
        "    )\n"
    )
    names = code_digest.imported_names(source, "lme_bench.qa.stage", is_package=False)
    assert {
        "lme_bench.qa.sibling",
        "lme_bench.metrics.ranking_metrics",
        "lme_bench.judge.fallback",
        "lme_bench.judge.verdict",
        "lme_bench.judge",
        "lme_bench",
    } <= names
    assert "lme_bench.config.settings" not in names and "lme_bench.run.finish" not in names


def test_the_closures_hold_the_stage_modules_they_should() -> None:
    ingest = code_digest.module_closure(STAGES_BY_NAME["ingest"].entry)
    retrieval = code_digest.module_closure(STAGES_BY_NAME["retrieval"].entry)
    judge = code_digest.module_closure(STAGES_BY_NAME["judge"].entry)
    assert {"lme_bench.ingest.agent", "lme_bench.reference_memory.store"} <= ingest.keys()
    assert "lme_bench.metrics.ranking_metrics" not in ingest
    assert not any(name.startswith("lme_bench.qa") for name in ingest)
    assert {
        "lme_bench.metrics.ranking_metrics",
        "lme_bench.reference_memory.store",
    } <= retrieval.keys()
    assert {"lme_bench.judge.runner", "lme_bench.judge.prompts"} <= judge.keys()
    assert "lme_bench.run.cache_keys" not in ingest | retrieval | judge


def test_a_stage_is_hashed_once_per_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = tmp_path / "lme_bench"  # a fresh copy: nothing of it was read before
    shutil.copytree(code_digest.SOURCE_ROOT, tree, ignore=shutil.ignore_patterns("__pycache__"))
    first = code_digest.entry_code_digest(STAGES_BY_NAME["retrieval"].entry, tree)

    def no_reading(path: Path, *args: object) -> None:
        raise AssertionError(f"{path} read again")

    monkeypatch.setattr(Path, "read_bytes", no_reading)
    monkeypatch.setattr(Path, "read_text", no_reading)
    assert code_digest.entry_code_digest(STAGES_BY_NAME["retrieval"].entry, tree) == first


def test_threads_asking_at_once_share_one_computation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run's first tasks ask for a stage's digest together: one thread computes it."""
    import threading

    tree = tmp_path / "lme_bench"
    shutil.copytree(code_digest.SOURCE_ROOT, tree, ignore=shutil.ignore_patterns("__pycache__"))
    computed: list[str] = []
    hashing = code_digest.closure_digest
    start = threading.Barrier(16)

    def counted(entry: str, root: Path = code_digest.SOURCE_ROOT) -> str:
        computed.append(entry)
        return hashing(entry, root)

    monkeypatch.setattr(code_digest, "closure_digest", counted)
    found: list[str] = []

    def ask() -> None:
        start.wait()
        found.append(code_digest.entry_code_digest(STAGES_BY_NAME["judge"].entry, tree))

    threads = [threading.Thread(target=ask) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert computed == [STAGES_BY_NAME["judge"].entry]
    assert found == [hashing(STAGES_BY_NAME["judge"].entry, tree)] * 16


def test_a_memory_ingested_again_changes_every_later_key(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    again = IngestOutcome("q1", "memory-1", 4, 0.1, ingestion_id="second")
    for stage in ("retrieval", "answer"):
        first = cache_keys.stage_key(stage, REF, settings, "run-1", OUTCOME)
        assert cache_keys.stage_key(stage, REF, settings, "run-1", again) != first
    judged = cache_keys.stage_key("judge", REF, settings, "run-1", hypothesis_row(), "first")
    rejudged = cache_keys.stage_key("judge", REF, settings, "run-1", hypothesis_row(), "second")
    assert judged != rejudged  # the same answer, from a memory filled again
    timing = IngestOutcome("q1", "memory-1", 4, 9.9, ingestion_id="first")
    assert _key("retrieval", settings) == cache_keys.stage_key(
        "retrieval", REF, settings, "run-1", timing
    )


@pytest.mark.parametrize(
    ("role", "stages"),
    [("qa", {"answer"}), ("judge", {"judge"}), ("agent", {"ingest"})],
)
def test_provider_kind_is_in_the_keys_of_the_stages_using_it_and_its_endpoint_is_not(
    tmp_path: Path, role: str, stages: set[str]
) -> None:
    base = {"ingest.mode": "agentic", f"models.{role}": "local:some-model"}

    def keys(**provider: object) -> dict[str, str | None]:
        settings = _settings(tmp_path, **base, **{"providers.local": provider})
        return {stage: _key(stage, settings) for stage in STAGES}

    first = keys(base_url="http://127.0.0.1:8001/v1")
    other_kind = keys(base_url="http://127.0.0.1:8001/v1", kind="openai")
    assert {s for s in STAGES if other_kind[s] != first[s]} == stages
    # how the same model is reached (config/transport.py) changes no key
    assert keys(base_url="http://127.0.0.1:8002/v1") == first
    assert keys(base_url="http://127.0.0.1:8001/v1", api_key_env="OTHER_KEY") == first


def test_a_second_judges_provider_is_in_the_judge_key(tmp_path: Path) -> None:
    def key(kind: str) -> str | None:
        provider = {"kind": kind, "base_url": "http://127.0.0.1:8001/v1"}
        second = {"judge.second_model": "local:judge-2", "providers.local": provider}
        return _key("judge", _settings(tmp_path, **second))

    assert key("openai-compatible") != key("openai")


def test_a_judge_sent_another_body_than_the_official_has_it_in_its_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lme_bench.providers import judge_shapes as request_shapes

    def judge_key(model: str) -> str | None:
        return _key("judge", _settings(tmp_path, **{"models.judge": model}))

    official, reasoning = judge_key("openai:gpt-4o-2024-08-06"), judge_key("openai:o4-mini")
    # the reasoning family's rules change: its verdicts are judged again, the official ones not
    cap = request_shapes.openai_reasoning_shape("o4-mini").fields["max_completion_tokens"]
    original = request_shapes.openai_reasoning_shape

    def larger_cap(model: str) -> request_shapes.RequestShape:
        shape = original(model)
        fields = shape.fields | {"max_completion_tokens": cap * 2}
        return request_shapes.RequestShape(shape.family, shape.endpoint, fields, shape.differs)

    monkeypatch.setattr(request_shapes, "openai_reasoning_shape", larger_cap)
    assert judge_key("openai:o4-mini") != reasoning
    assert judge_key("openai:gpt-4o-2024-08-06") == official


def test_an_ingestion_shared_by_questions_is_keyed_by_its_build(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    first = replace(REF, build_id="conv-26", build_sha256="cd" * 32)
    second = replace(first, index=1, question_id="q2", content_sha256="ef" * 32)
    ingest = [
        cache_keys.stage_key("ingest", r, settings, "run-1", LOCATION) for r in (first, second)
    ]
    assert ingest[0] == ingest[1] and ingest[0] is not None and "conv-26" in ingest[0]
    answers = {
        cache_keys.stage_key("answer", r, settings, "run-1", OUTCOME) for r in (first, second)
    }
    assert len(answers) == 2  # the questions' own stages stay apart
    own = cache_keys.stage_key("ingest", REF, settings, "run-1", LOCATION)
    assert own is not None and own.startswith("ingest-q1-")  # LongMemEval: the question's own


def test_a_locomo_questions_judge_key_holds_its_prompt_choice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lme_bench.builtin_benchmarks.locomo import judging as locomo_stage

    settings = _settings(tmp_path)
    questions = {
        category: replace(
            REF,
            question_id=f"conv-7-q{i}",
            question_type=category,
            build_id="conv-7",
            build_sha256="cd" * 32,
            benchmark="locomo",
        )
        for i, category in enumerate(("single-hop", "adversarial"))
    }

    def keys() -> dict[str, str | None]:
        found = {
            c: cache_keys.stage_key("judge", r, settings, "run-1", hypothesis_row())
            for c, r in questions.items()
        }
        return found | {"longmemeval": _key("judge", settings)}

    before = keys()
    monkeypatch.setattr(locomo_stage, "NO_ANSWER_EXPLANATION", "Nothing in the talk says.")
    explained = keys()
    assert explained["adversarial"] != before["adversarial"]
    assert {k: v for k, v in explained.items() if k != "adversarial"} == {
        k: v for k, v in before.items() if k != "adversarial"
    }
    chosen = locomo_stage.criterion
    monkeypatch.setattr(  # single-hop judged by the abstention prompt instead
        locomo_stage, "criterion", lambda c: "abstention" if c == "single-hop" else chosen(c)
    )
    rechosen = keys()
    assert rechosen["single-hop"] != explained["single-hop"]
    assert rechosen["longmemeval"] == before["longmemeval"]  # LongMemEval's keys are unchanged
