"""The real BEAM files, when a copy is on this machine (never committed: no licence published).

Read from BEAM_REPO (a checkout) or from a bare git mirror of the repository (BEAM_MIRROR);
skipped otherwise. The 1M and 10M chat files are too large for the mirror, so only the 100K
chats are read here; every tier's probing questions are.
"""

from __future__ import annotations

import os
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from lme_bench.builtin_benchmarks.beam.benchmark import Beam, conversation_layout, source_ids
from lme_bench.builtin_benchmarks.beam.chat import read_conversation
from lme_bench.builtin_benchmarks.beam.models import ABILITIES
from lme_bench.builtin_benchmarks.beam.questions import read_probing_questions

MIRROR = Path(os.environ.get("BEAM_MIRROR", "/work/.mirror/mohammadtavakoli78+BEAM/repo"))


def _from_mirror(root: Path) -> Path:
    listing = subprocess.run(
        ["git", "--git-dir", str(MIRROR), "ls-tree", "-r", "--name-only", "HEAD", "chats"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    wanted = [
        name
        for name in listing
        if name.endswith("probing_questions/probing_questions.json")
        or (
            name.startswith("chats/100K/")
            and name.endswith(("/chat.json", "/chat_trunecated.json"))
        )
    ]
    for name in wanted:
        shown = subprocess.run(
            ["git", "--git-dir", str(MIRROR), "show", f"HEAD:{name}"], capture_output=True
        )
        if shown.returncode == 0:
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_bytes(shown.stdout)
    return root


@pytest.fixture(scope="module")
def beam_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if given := os.environ.get("BEAM_REPO"):
        return Path(given)
    if not MIRROR.is_dir():
        pytest.skip("no BEAM data here (set BEAM_REPO or BEAM_MIRROR)")
    return _from_mirror(tmp_path_factory.mktemp("beam"))


def test_every_probing_file_reads_with_two_questions_per_ability(beam_root: Path) -> None:
    paths = sorted((beam_root / "chats").glob("*/*/probing_questions/probing_questions.json"))
    sets = [read_probing_questions(path) for path in paths]
    assert len(sets) == 100
    tiers = Counter(s.conversation_id.split("-")[0] for s in sets)
    assert tiers == {"100K": 20, "500K": 35, "1M": 35, "10M": 10}
    for probing in sets:
        abilities = Counter(g.ability for g in probing.gold.values())
        assert abilities == dict.fromkeys(ABILITIES, 2), probing.conversation_id
        for question in probing.questions:
            gold = probing.gold_for(question)
            assert gold.rubric and all(item not in question.question for item in gold.rubric)


def test_the_100k_chats_read_into_dated_sessions(beam_root: Path) -> None:
    paths = sorted((beam_root / "chats" / "100K").glob("*/chat.json"))
    if not paths:
        pytest.skip("no 100K chat files in this copy")
    for path in paths:
        conversation = read_conversation(path)
        assert conversation.sessions and conversation.turn_count > 0
        roles = Counter(t.role for s in conversation.sessions for t in s.turns)
        assert roles["user"] == roles["assistant"]  # every message answered
        dates = [s.date for s in conversation.sessions]
        assert dates == sorted(dates)


def test_the_100k_chats_are_the_histories_their_questions_were_written_against(
    beam_root: Path,
) -> None:
    """Ten 100K chats have a chat_trunecated.json, which BEAM's generation read: the builds
    hold it (chat 10: 286 of chat.json's 344 messages, its last batch dated 15 Aug 2024, not
    5 Oct), and every message a question names as its source is in it."""
    tier = beam_root / "chats" / "100K"
    truncated = sorted(int(p.parent.name) for p in tier.glob("*/chat_trunecated.json"))
    if not truncated:
        pytest.skip("no 100K chat_trunecated.json files in this copy")
    assert truncated == [5, 7, 10, 11, 12, 16, 17, 18, 19, 20]
    builds = {b.build_id: b for b in Beam().builds(tier)}
    tenth = builds["100K-10"]
    assert sum(len(s.turns) for s in tenth.sessions) == 286
    assert tenth.sessions[-1].date == "2024-08-15"
    for number in truncated:
        build = builds[f"100K-{number}"]
        full = read_conversation(tier / str(number) / "chat.json")
        assert sum(len(s.turns) for s in build.sessions) < full.turn_count
        probing = read_probing_questions(
            tier / str(number) / "probing_questions" / "probing_questions.json"
        )
        named = {
            i for g in probing.gold.values() for i in source_ids(g.extra.get("source_chat_ids"))
        }
        _, positions = conversation_layout(
            read_conversation(tier / str(number) / "chat_trunecated.json")
        )
        assert named <= set(positions), number
