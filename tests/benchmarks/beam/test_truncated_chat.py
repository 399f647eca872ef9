"""A chat folder holding `chat_trunecated.json` (BEAM's spelling) is read from that file: BEAM's
own question and answer generation read it instead of `chat.json` where it exists, so the
memory gets the history the questions were written against and the reader its last date.
Made-up chats in BEAM's layout, never BEAM's data."""

from __future__ import annotations

import json
from pathlib import Path

from lme_bench.benchmarks.split import splitter_for
from lme_bench.builtin_benchmarks.beam.benchmark import Beam
from lme_bench.dataset.shards import prepare_dataset
from tests.benchmarks.beam.samples import CHAT, batch, write_chat, write_questions

# chat.json goes on past the history the questions were written against: a later batch, and a
# longer second batch
LATER = batch(3, "October-5-2024", [[("user", "I moved the pots indoors."), ("assistant", "Ok.")]])
LONGER = batch(
    2,
    "April-2-2024",
    [
        [("user", "The basil sprouted today."), ("assistant", "Great!")],
        [("user", "The mint is wilting."), ("assistant", "Water it more.")],
    ],
)
FULL = [CHAT[0], LONGER, LATER]


def _chat_folder(root: Path, number: int, truncated: bool) -> Path:
    path = write_chat(root, number=number, data=FULL)
    if truncated:
        (path.parent / "chat_trunecated.json").write_text(json.dumps(CHAT), encoding="utf-8")
    write_questions(root, number=number)
    return path.parent


def test_a_chat_with_a_truncated_file_is_ingested_from_it(tmp_path: Path) -> None:
    _chat_folder(tmp_path, 3, truncated=True)
    _chat_folder(tmp_path, 4, truncated=False)
    builds = {b.build_id: b for b in Beam().builds(tmp_path / "chats")}
    cut, full = builds["100K-3"], builds["100K-4"]
    assert [s.date for s in cut.sessions] == ["2024-03-15", "2024-04-02"]
    assert [len(s.turns) for s in cut.sessions] == [6, 2]
    assert [s.date for s in full.sessions] == ["2024-03-15", "2024-04-02", "2024-10-05"]
    assert [len(s.turns) for s in full.sessions] == [6, 4, 2]
    assert cut.content_digest != full.content_digest


def test_the_reader_is_told_the_truncated_historys_last_date(tmp_path: Path) -> None:
    _chat_folder(tmp_path, 3, truncated=True)
    _chat_folder(tmp_path, 4, truncated=False)
    split, kind = splitter_for(None, tmp_path / "chats")
    refs = prepare_dataset(tmp_path / "chats", tmp_path / "cache", split, kind).questions
    dates = {r.build_id: r.load().question_date for r in refs}
    assert dates == {"100K-3": "2024/04/02 (Tue) 00:00", "100K-4": "2024/10/05 (Sat) 00:00"}
    record = next(r for r in refs if r.build_id == "100K-3").load()
    texts = [t.content for turns in record.haystack_sessions for t in turns]
    assert "The mint is wilting." not in texts and "I moved the pots indoors." not in texts
