"""The real LoCoMo data, when a copy is on this machine (it is never committed: CC BY-NC 4.0).

Found at LOCOMO_DATA (a locomo10.json, the zip or a folder), in LOCOMO_REPO's data/locomo10.zip,
or in a bare git mirror of the repository (LOCOMO_MIRROR); skipped otherwise.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import zipfile
from collections import Counter
from pathlib import Path

import pytest

from lme_bench.builtin_benchmarks.locomo.dates import parse_session_date
from lme_bench.builtin_benchmarks.locomo.reader import load_samples

MIRROR = Path(os.environ.get("LOCOMO_MIRROR", "/work/.mirror/snap-research+locomo/repo"))


@pytest.fixture(scope="module")
def real_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if given := os.environ.get("LOCOMO_DATA"):
        return Path(given)
    if repo := os.environ.get("LOCOMO_REPO"):
        return Path(repo) / "data" / "locomo10.zip"
    if not MIRROR.is_dir():
        pytest.skip("no LoCoMo data here (set LOCOMO_DATA or LOCOMO_REPO)")
    copy = tmp_path_factory.mktemp("locomo") / "locomo10.zip"
    found = subprocess.run(
        ["git", "--git-dir", str(MIRROR), "show", "HEAD:data/locomo10.zip"],
        capture_output=True,
        check=False,
    )
    if found.returncode != 0:
        pytest.skip(f"no data/locomo10.zip in {MIRROR}")
    copy.write_bytes(found.stdout)
    return copy


def _raw_conversations(path: Path) -> list[dict[str, object]]:
    if path.suffix == ".zip":
        with zipfile.ZipFile(path) as archive:
            names = [n for n in archive.namelist() if n.endswith(".json")]
            return [json.loads(archive.read(n)) for n in names]
    raw = json.loads(path.read_text(encoding="utf-8"))
    return [sample["conversation"] for sample in raw]


def test_every_session_date_of_the_real_data_parses(real_data: Path) -> None:
    dates = [
        value
        for conversation in _raw_conversations(real_data)
        for key, value in conversation.items()
        if re.fullmatch(r"session_\d+_date_time", key)
    ]
    assert len(dates) > 200
    for text in dates:
        assert isinstance(text, str)
        parse_session_date(text)


def test_the_real_data_reads_whole(real_data: Path) -> None:
    samples = load_samples(real_data)
    assert len(samples) == 10
    categories = Counter(gold.category for sample in samples for gold in sample.gold)
    assert categories == {1: 282, 2: 321, 3: 96, 4: 841, 5: 446}
    for sample in samples:
        sessions = sample.conversation.sessions
        assert 19 <= len(sessions) <= 32
        assert all(parse_session_date(s.date_time) == s.date for s in sessions)
        ids = {turn.dia_id for turn in sample.conversation.turns()}
        assert all(turn.speaker for turn in sample.conversation.turns())
        assert len(ids) == len(sample.conversation.turns())
