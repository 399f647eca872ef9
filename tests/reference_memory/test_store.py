from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from lme_bench.entries.models import NewEntry
from lme_bench.reference_memory.store import EmbeddedStore, NotFoundError


@pytest.fixture
def store(tmp_path: Path) -> EmbeddedStore:
    return EmbeddedStore(tmp_path / "memory.sqlite")


def _entry(text: str, **tags: str) -> NewEntry:
    return NewEntry(raw_entry=text, summary=text, tags=tags)


def test_vault_and_memory_are_get_or_create(store: EmbeddedStore) -> None:
    vault = store.get_or_create_vault("lme-bench-host")
    assert store.get_or_create_vault("lme-bench-host") == vault
    memory = store.get_or_create_memory(vault, "q1__run")
    assert store.get_or_create_memory(vault, "q1__run") == memory
    assert store.get_or_create_memory(vault, "q2__run") != memory
    with pytest.raises(NotFoundError):
        store.get_or_create_memory("no-such-vault", "q1__run")


def test_entries_round_trip_in_order_and_are_idempotent(store: EmbeddedStore) -> None:
    memory = store.get_or_create_memory(store.get_or_create_vault("v"), "q__r")
    batch = [_entry("first turn", session_key="s000", turn_index="0"), _entry("second turn")]
    assert store.add_entries(memory, batch) == 2
    assert store.add_entries(memory, batch) == 0
    entries = store.list_entries(memory)
    assert [e.raw_entry for e in entries] == ["first turn", "second turn"]
    assert entries[0].tags == {"session_key": "s000", "turn_index": "0"}
    assert entries[0].creation_time.endswith("Z")
    # Same text with other tags is another entry (the same words said in another session).
    assert store.add_entries(memory, [_entry("first turn", session_key="s001")]) == 1


def test_search_ranks_by_bm25_within_one_memory_only(store: EmbeddedStore) -> None:
    vault = store.get_or_create_vault("v")
    mine = store.get_or_create_memory(vault, "q1__r")
    other = store.get_or_create_memory(vault, "q2__r")
    store.add_entries(
        mine,
        [
            _entry("We talked about sourdough starters and flour."),
            _entry("My golden retriever puppy Max loves the park with other retrievers."),
            _entry("A retriever is a dog."),
        ],
    )
    query = "Which golden retriever did I get?"
    before = store.search(mine, query, top_ke=10)
    texts = [hit.raw_entry for hit in before.entries]
    assert texts == [
        "My golden retriever puppy Max loves the park with other retrievers.",
        "A retriever is a dog.",
        "We talked about sourdough starters and flour.",  # no query word: ranked after
    ]
    assert before.entries[0].score > before.entries[1].score > before.entries[2].score == 0
    assert [h.raw_entry for h in store.search(mine, query, top_ke=1).entries] == texts[:1]
    # Another memory's words change neither the hits nor the scores of this one.
    store.add_entries(other, [_entry(f"golden retriever number {i}") for i in range(50)])
    after = store.search(mine, query, top_ke=10)
    assert [(h.entry_id, h.score) for h in after.entries] == [
        (h.entry_id, h.score) for h in before.entries
    ]
    # A write to this memory is visible to the next search (the index is rebuilt).
    store.add_entries(mine, [_entry("golden golden golden retriever retriever")])
    assert store.search(mine, query, top_ke=1).entries[0].raw_entry.startswith("golden golden")


@pytest.mark.parametrize(
    "query", ['what "quoted" AND OR NOT ( ) * : ^', "", "the of and", "Ünïcödé?"]
)
def test_search_accepts_any_text(store: EmbeddedStore, query: str) -> None:
    memory = store.get_or_create_memory(store.get_or_create_vault("v"), "q__r")
    store.add_entries(memory, [_entry("the quoted text of unicode Ünïcödé")])
    store.search(memory, query, top_ke=5)  # must not raise an FTS syntax error


def test_contexts_latest_wins_and_all_are_searchable(store: EmbeddedStore) -> None:
    memory = store.get_or_create_memory(store.get_or_create_vault("v"), "q__r")
    assert store.search(memory, "anything", top_ke=1).latest_context is None
    store.put_context(memory, "User lives in Denver and owns a bike.")
    store.put_context(memory, "User moved to Austin.")
    found = store.search(memory, "Denver bike", top_ke=0, top_kc=2)
    assert found.latest_context == "User moved to Austin."
    assert [c.context for c in found.contexts] == [
        "User lives in Denver and owns a bike.",
        "User moved to Austin.",  # no query word: ranked after the match
    ]
    assert found.entries == []


def test_unknown_memory_is_an_error(store: EmbeddedStore) -> None:
    with pytest.raises(NotFoundError):
        store.add_entries("nope", [_entry("x")])
    with pytest.raises(NotFoundError):
        store.search("nope", "x")


def test_file_is_wal_and_survives_reopen(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite"
    store = EmbeddedStore(path)
    memory = store.get_or_create_memory(store.get_or_create_vault("v"), "q__r")
    store.add_entries(memory, [_entry("durable words")])
    store.close()
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    reopened = EmbeddedStore(path)
    assert [h.raw_entry for h in reopened.search(memory, "durable", top_ke=5).entries] == [
        "durable words"
    ]


def test_concurrent_writers_to_different_memories(store: EmbeddedStore) -> None:
    vault = store.get_or_create_vault("v")
    memories = [store.get_or_create_memory(vault, f"q{i}__r") for i in range(4)]
    errors: list[BaseException] = []

    def write(memory: str) -> None:
        try:
            for start in range(0, 200, 20):
                store.add_entries(
                    memory, [_entry(f"{memory} turn {i}") for i in range(start, start + 20)]
                )
        except BaseException as exc:  # collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(m,)) for m in memories]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert [store.count_entries(m) for m in memories] == [200] * 4


def test_content_keys_are_the_sha256_of_the_entrys_sorted_json(store: EmbeddedStore) -> None:
    """The key that de-duplicates an entry stays what it always was, so a store written by an
    earlier version ignores the same entries: sha256(json.dumps([raw, summary, tags],
    sort_keys=True)), whatever the text holds."""
    import hashlib
    import json

    memory = store.get_or_create_memory(store.get_or_create_vault("v"), "q__r")
    texts = ["plain", 'quotes " and \\ and\nnew lines\t', "accents é, ü; emoji 😀; \u2028"]
    entries = [
        NewEntry(raw_entry=t, summary=t[:5], tags={"turn_index": str(i), "role": "user"})
        for i, t in enumerate(texts)
    ]
    entries += [
        NewEntry(raw_entry=texts[2], summary=texts[2], tags={"ключ é": 'va"l\\ue', "a": ""}),
        NewEntry(raw_entry="no tags", summary="no tags"),
        NewEntry(raw_entry="a number", summary="x", tags={"n": 7, "z": None}),  # type: ignore[dict-item]
    ]
    store.add_entries(memory, entries)
    db = sqlite3.connect(store.path)
    try:
        stored = [k for (k,) in db.execute("SELECT content_key FROM entries ORDER BY seq")]
    finally:
        db.close()
    expected = [
        hashlib.sha256(
            json.dumps([e.raw_entry, e.summary, e.tags], sort_keys=True).encode()
        ).hexdigest()
        for e in entries
    ]
    assert stored == expected


def test_entry_ids_are_time_ordered_uuid7s_and_stamps_count_microseconds() -> None:
    import time
    import uuid
    from datetime import UTC, datetime, timedelta

    from lme_bench.reference_memory.store import _stamps, format_rfc3339, new_entry_ids

    before = time.time_ns() // 1_000_000
    ids = new_entry_ids(1000)
    after = time.time_ns() // 1_000_000
    parsed = [uuid.UUID(i) for i in ids]
    assert [str(u) for u in parsed] == ids and len(set(ids)) == 1000
    assert {u.version for u in parsed} == {7} and {u.variant for u in parsed} == {uuid.RFC_4122}
    assert all(before <= u.int >> 80 <= after for u in parsed)

    start = datetime(2026, 1, 2, 3, 4, 59, 999_990, tzinfo=UTC)  # crosses a second and a minute
    expected = [format_rfc3339(start + timedelta(microseconds=n)) for n in range(25)]
    assert _stamps(start, 25) == expected
    assert _stamps(start, 0) == []
