"""A build's content digest is stable across reads and changes with its content only."""

from __future__ import annotations

import json
from pathlib import Path

from lme_bench.benchmarks.protocol import Build, BuildSession, BuildTurn, content_digest
from lme_bench.benchmarks.registry import load_benchmark
from tests.benchmarks.datasets import LONGMEMEVAL_SAMPLE
from tests.benchmarks.locomo.samples import listed_sample, write_json


def _digests(name: str, path: Path) -> dict[str, str]:
    return {b.build_id: b.content_digest for b in load_benchmark(name).builds(path)}


def test_digests_are_stable_across_reads() -> None:
    first = _digests("longmemeval", LONGMEMEVAL_SAMPLE)
    assert first == _digests("longmemeval", LONGMEMEVAL_SAMPLE)
    assert len(set(first.values())) == len(first)  # every haystack differs


def test_a_changed_turn_changes_its_builds_digest_only(tmp_path: Path) -> None:
    original = _digests(
        "locomo",
        write_json(tmp_path / "a.json", [listed_sample("conv-1"), listed_sample("conv-2")]),
    )
    changed = listed_sample("conv-2")
    changed["conversation"]["session_2"][1]["text"] = "I started the cello."
    edited = _digests("locomo", write_json(tmp_path / "b.json", [listed_sample("conv-1"), changed]))
    assert edited["conv-1"] == original["conv-1"]
    assert edited["conv-2"] != original["conv-2"]
    assert original["conv-1"] == original["conv-2"]  # same content, same digest


def test_the_digest_covers_dates_roles_speakers_and_order() -> None:
    turn = BuildTurn(index=0, role="user", content="hello", speaker="Ada")
    base = [BuildSession(key="s000", date="2023/01/01 (Sun) 10:00", turns=(turn,))]
    variants = [
        [BuildSession(key="s000", date="2023/01/02 (Mon) 10:00", turns=(turn,))],
        [
            BuildSession(
                key="s000", date=base[0].date, turns=(BuildTurn(0, "assistant", "hello", "Ada"),)
            )
        ],
        [
            BuildSession(
                key="s000", date=base[0].date, turns=(BuildTurn(0, "user", "hello", "Ben"),)
            )
        ],
        [BuildSession(key="s000", date=base[0].date, turns=(turn, turn))],
    ]
    digests = {content_digest(v) for v in variants}
    assert content_digest(base) not in digests and len(digests) == len(variants)
    assert Build("x", tuple(base)).content_digest == Build("y", tuple(base)).content_digest


def test_a_longmemeval_build_id_follows_the_haystack_not_the_question(tmp_path: Path) -> None:
    questions = json.loads(LONGMEMEVAL_SAMPLE.read_text())[:1]
    renamed = [{**questions[0], "question_id": "other_abs", "question": "Something else?"}]
    path = tmp_path / "renamed.json"
    path.write_text(json.dumps(questions + renamed))
    pairs = list(load_benchmark("longmemeval").questions(path))
    assert pairs[0][0].build_id == pairs[1][0].build_id  # one haystack, one build
    assert len(list(load_benchmark("longmemeval").builds(path))) == 1
