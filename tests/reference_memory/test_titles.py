"""Opaque memory titles: stable per results folder and scope, unguessable from question ids,
within Mycelian's title rules; the key is made once, even by processes racing to make it."""

from __future__ import annotations

import hashlib
import re
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from lme_bench.ingest.titles import KEY_FILE, TitleKeyError, memory_title, memory_titles, title_key

MYCELIAN_TITLE = re.compile(r"[a-z0-9-]{1,50}")


def test_titles_are_stable_per_folder_and_scope_and_say_nothing_of_the_question(
    tmp_path: Path,
) -> None:
    ids = ["9244d1d0_abs", "898f2907", "gpt4_cf742c7f"]
    title = memory_title(ids[0], "run-1", tmp_path)
    assert MYCELIAN_TITLE.fullmatch(title) and title.startswith("lme-")
    assert "9244d1d0" not in title and "abs" not in title
    assert memory_title(ids[0], "run-1", tmp_path) == title  # a rerun finds its memory
    assert memory_title(ids[0], "run-2", tmp_path) != title  # a new run id: a new memory
    assert memory_title(ids[0], "run-1", tmp_path / "other") != title  # another folder's key
    public = hashlib.sha256(ids[0].encode()).hexdigest()
    assert title.removeprefix("lme-") not in public  # not a plain hash of the public id
    titles = memory_titles(ids, "run-1", tmp_path)
    assert sorted(titles.values()) == sorted(ids) and len(set(titles)) == len(ids)
    assert titles[title] == ids[0]


def test_the_key_is_made_once_and_kept(tmp_path: Path) -> None:
    key = title_key(tmp_path)
    assert len(key) == 32
    path = tmp_path / KEY_FILE
    assert path.stat().st_mode & 0o077 == 0  # readable by its owner only
    assert title_key(tmp_path) == key
    assert [p.name for p in tmp_path.iterdir()] == [KEY_FILE]  # no temporary file left


def test_processes_making_the_key_at_once_agree(tmp_path: Path) -> None:
    with ProcessPoolExecutor(4) as pool:
        keys = set(pool.map(title_key, [tmp_path] * 16))
    assert keys == {title_key(tmp_path)}


def test_a_damaged_key_file_is_one_error_naming_it(tmp_path: Path) -> None:
    (tmp_path / KEY_FILE).write_text("not a key\n")
    with pytest.raises(TitleKeyError, match=re.escape(str(tmp_path / KEY_FILE))):
        memory_title("q1", "run", tmp_path)
