"""What this machine's SQLite can do for raw ingestion and search, as a floor for lme-bench's own
figures: rows inserted per second and FTS5 rows indexed per second, on a generated file's turns.

    python perf/sqlite_limits.py [--scale s] [--questions 500] [--seed 0] [--data FILE]

Every variant writes the same rows (the entries raw ingestion makes: text, summary, tags, one
memory per question) into a fresh WAL file (synchronous NORMAL, as the store), one
transaction per question unless said otherwise:

- *bare table*: no index but the row id: the floor;
- *store schema*: the store's entries table and indexes (entry id, memory + content key,
  memory + time), with random (version 4) or time-ordered entry ids, one transaction per
  session (raw ingestion before) or per question (now; the Python work of making the rows is
  left out: these are SQLite's own rates);
- *FTS5 per memory*: each question's rows into a fresh in-memory FTS5 index, as a search
  builds it before ranking.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sqlite3
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from itertools import islice
from pathlib import Path

from support import ROOT

from lme_bench.dataset.generate import generate_dataset
from lme_bench.dataset.loader import iter_questions
from lme_bench.dataset.views import make_view
from lme_bench.ingest.as_they_are import session_entries
from lme_bench.reference_memory.store import _SCHEMA, new_entry_ids

Row = tuple[str, str, str, str, str, str, str]
_INSERT = (
    "INSERT OR IGNORE INTO entries (entry_id, memory_id, raw_entry, summary, tags,"
    " creation_time, content_key) VALUES (?, ?, ?, ?, ?, ?, ?)"
)


def _questions(path: Path, n: int) -> list[list[list[Row]]]:
    """Per question, per session, the rows raw ingestion stores."""
    out = []
    for loaded in islice(iter_questions(path), n):
        view, _ = make_view(loaded.instance)
        memory_id = str(uuid.uuid4())
        sessions = []
        for session in view.sessions:
            rows = []
            for e in session_entries(session):
                tags = json.dumps(e.tags, sort_keys=True)
                key = hashlib.sha256(f"{e.raw_entry}{e.summary}{tags}".encode()).hexdigest()
                stamp = f"{time.time_ns():020d}"
                rows.append(
                    (str(uuid.uuid4()), memory_id, e.raw_entry, e.summary, tags, stamp, key)
                )
            sessions.append(rows)
        out.append(sessions)
    return out


def _db(folder: Path, name: str) -> sqlite3.Connection:
    db = sqlite3.connect(folder / f"{name}.sqlite", isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    return db


def _timed(work: Callable[[], int]) -> tuple[int, float]:
    started = time.perf_counter()
    rows = work()
    return rows, time.perf_counter() - started


def _transactions(db: sqlite3.Connection, batches: Iterator[list[Row]], sql: str) -> int:
    rows = 0
    for batch in batches:
        db.execute("BEGIN IMMEDIATE")
        db.executemany(sql, batch)
        db.execute("COMMIT")
        rows += len(batch)
    return rows


def _store(folder: Path, name: str) -> sqlite3.Connection:
    db = _db(folder, name)
    db.executescript(_SCHEMA)
    db.execute("PRAGMA foreign_keys = OFF")  # memories are not created here
    return db


def _ordered(rows: list[Row]) -> list[Row]:
    """The rows with time-ordered entry ids, as the store now makes them."""
    ids = new_entry_ids(len(rows))
    return [(entry_id, *row[1:]) for entry_id, row in zip(ids, rows, strict=True)]


def _fts(db: sqlite3.Connection, memories: list[str], rows: int) -> int:
    db.execute("PRAGMA temp_store = MEMORY")
    for index, memory_id in enumerate(memories):
        name = f"idx{index}"
        db.execute(
            f"CREATE VIRTUAL TABLE temp.{name} USING fts5(summary, raw_entry,"
            " tokenize = 'porter unicode61 remove_diacritics 2')"
        )
        db.execute(
            f"INSERT INTO {name} (rowid, summary, raw_entry) SELECT seq, summary, raw_entry"
            " FROM entries WHERE memory_id = ?",
            (memory_id,),
        )
        db.execute(f"DROP TABLE temp.{name}")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", choices=("s", "m"), default="s")
    parser.add_argument("--questions", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data", type=Path, help="a LongMemEval file (default: generated)")
    args = parser.parse_args()
    data = args.data or ROOT / "perf" / "data" / f"lme_{args.scale}_500_seed{args.seed}.json"
    if not data.exists():
        generate_dataset(data, n_questions=500, scale=args.scale, seed=args.seed)
    questions = _questions(data, args.questions)
    per_question = [[row for session in q for row in session] for q in questions]
    total = sum(len(q) for q in per_question)
    results: dict[str, tuple[int, float]] = {}
    with tempfile.TemporaryDirectory(prefix="lme-sqlite-") as tmp:
        folder = Path(tmp)
        bare = _db(folder, "bare")
        bare.execute(
            "CREATE TABLE entries (seq INTEGER PRIMARY KEY, entry_id TEXT, memory_id TEXT,"
            " raw_entry TEXT, summary TEXT, tags TEXT, creation_time TEXT, content_key TEXT)"
        )
        plain_insert = _INSERT.replace(" OR IGNORE", "")
        results["bare table (no index but the row id), per question"] = _timed(
            lambda: _transactions(bare, iter(per_question), plain_insert)
        )
        sessions = _store(folder, "sessions")
        results["store schema, random ids, per session (raw ingestion before)"] = _timed(
            lambda: _transactions(sessions, (s for q in questions for s in q), _INSERT)
        )
        random_ids = _store(folder, "random")
        results["store schema, random ids, per question"] = _timed(
            lambda: _transactions(random_ids, iter(per_question), _INSERT)
        )
        ordered = _store(folder, "ordered")
        results["store schema, time-ordered ids, per question (now)"] = _timed(
            lambda: _transactions(ordered, (_ordered(q) for q in per_question), _INSERT)
        )
        memories = [q[0][1] for q in per_question if q]
        results["FTS5 index per memory, in memory (each search's first step)"] = _timed(
            lambda: _fts(ordered, memories, total)
        )
    print(f"{len(questions)} questions, {total:,} rows, SQLite {sqlite3.sqlite_version}")
    print("| variant | rows | seconds | rows/s |\n|---|---:|---:|---:|")
    for name, (rows, seconds) in results.items():
        print(f"| {name} | {rows:,} | {seconds:.2f} | {rows / seconds:,.0f} |")


if __name__ == "__main__":
    main()
