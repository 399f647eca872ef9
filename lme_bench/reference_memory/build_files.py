"""One memory of the embedded store as a file of its own: what a memory build travels as.

`export_memory` writes a memory (its vault's row, the memory's row, its entries, context
snapshots and the embeddings of their texts) to a new SQLite file with the store's schema;
`import_memory` merges such a file into another store, keeping the memory's id, its entry ids
and their order, so a search of the imported memory ranks as the original did (ties go to the
older row, and the rows keep their order). Plain SQLite throughout: no storage, no network.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from lme_bench.common.sqlite_writes import immediate, write_lock
from lme_bench.reference_memory.hybrid import sha256
from lme_bench.reference_memory.store import SCHEMA_VERSION, EmbeddedStore

_ENTRY_COLUMNS = "entry_id, memory_id, raw_entry, summary, tags, creation_time, content_key"
_CONTEXT_COLUMNS = "memory_id, content, created_at"


class BuildFileError(ValueError):
    """A memory cannot be exported (not in the store) or a build file is not one memory of the
    embedded store's schema."""


def holds_memory(store: Path, memory_id: str) -> bool:
    """Whether the store file at `store` exists and holds the memory `memory_id`."""
    if not Path(store).is_file():
        return False
    db = sqlite3.connect(f"file:{Path(store).resolve()}?mode=ro", uri=True, timeout=60)
    try:
        found = db.execute("SELECT 1 FROM memories WHERE memory_id = ?", (memory_id,)).fetchone()
    except sqlite3.OperationalError:  # no memories table: a store never written
        return False
    finally:
        db.close()
    return found is not None


def export_memory(store: Path, memory_id: str, target: Path) -> int:
    """Write memory `memory_id` of the store at `store` to a new file `target`; returns how many
    entries it holds. Raises BuildFileError when the store has no such memory."""
    target = Path(target)
    target.unlink(missing_ok=True)
    db = sqlite3.connect(target, isolation_level=None)
    try:
        db.create_function("sha256_hex", 1, sha256, deterministic=True)
        db.execute("ATTACH DATABASE ? AS src", (str(store),))
        row = db.execute(
            "SELECT vault_id FROM src.memories WHERE memory_id = ?", (memory_id,)
        ).fetchone()
        if row is None:
            raise BuildFileError(f"{store}: no memory {memory_id} to save")
        schema = db.execute(
            "SELECT sql FROM src.sqlite_master WHERE sql IS NOT NULL"
            " AND name NOT LIKE 'sqlite_%' ORDER BY type = 'index'"
        ).fetchall()
        db.execute("BEGIN")
        for (sql,) in schema:
            db.execute(sql)
        db.execute("INSERT INTO vaults SELECT * FROM src.vaults WHERE vault_id = ?", row)
        db.execute(
            "INSERT INTO memories SELECT * FROM src.memories WHERE memory_id = ?", (memory_id,)
        )
        for table in ("entries", "contexts"):
            db.execute(
                f"INSERT INTO {table} SELECT * FROM src.{table} WHERE memory_id = ? ORDER BY seq",
                (memory_id,),
            )
        db.execute(
            "INSERT INTO embeddings SELECT * FROM src.embeddings WHERE content_sha256 IN"
            " (SELECT sha256_hex(summary) FROM entries"
            " UNION SELECT sha256_hex(content) FROM contexts)"
        )
        (entries,) = db.execute("SELECT count(*) FROM entries").fetchone()
        db.execute("COMMIT")
        db.execute("DETACH DATABASE src")
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    finally:
        db.close()
    return int(entries)


def _build_memory(db: sqlite3.Connection, build: Path) -> tuple[str, str, str]:
    """(memory id, its title, its vault's title) of the one memory the attached build holds."""
    try:
        version = db.execute("PRAGMA build.user_version").fetchone()[0]
        rows = db.execute(
            "SELECT m.memory_id, m.title, v.title FROM build.memories m"
            " JOIN build.vaults v ON v.vault_id = m.vault_id"
        ).fetchall()
    except sqlite3.DatabaseError as exc:
        raise BuildFileError(f"{build}: not a memory build of the embedded store ({exc})") from None
    if version != SCHEMA_VERSION or len(rows) != 1:
        raise BuildFileError(
            f"{build}: not a memory build of the embedded store (schema {version}, "
            f"{len(rows)} memories; expected schema {SCHEMA_VERSION} and one memory)"
        )
    memory_id, title, vault_title = rows[0]
    return str(memory_id), str(title), str(vault_title)


def _local_vault(db: sqlite3.Connection, vault_title: str) -> str:
    """The store's vault of that title, or the build's vault row copied in."""
    found = db.execute(
        "SELECT vault_id FROM main.vaults WHERE title = ?", (vault_title,)
    ).fetchone()
    if found is not None:
        return str(found[0])
    db.execute("INSERT INTO main.vaults SELECT * FROM build.vaults")
    return str(db.execute("SELECT vault_id FROM build.vaults").fetchone()[0])


def _clear_empty_namesake(db: sqlite3.Connection, vault_id: str, title: str, build: Path) -> None:
    """An empty memory of the same title (opened here before the build arrived) gives way; one
    holding anything is another memory, and the build is refused."""
    row = db.execute(
        "SELECT memory_id FROM main.memories WHERE vault_id = ? AND title = ?", (vault_id, title)
    ).fetchone()
    if row is None:
        return
    held = db.execute(
        "SELECT (SELECT count(*) FROM main.entries WHERE memory_id = ?)"
        " + (SELECT count(*) FROM main.contexts WHERE memory_id = ?)",
        (row[0], row[0]),
    ).fetchone()[0]
    if held:
        raise BuildFileError(
            f"{build}: this store already holds another memory titled {title!r} with contents;"
            " the build is not merged over it"
        )
    db.execute("DELETE FROM main.memories WHERE memory_id = ?", row)


def import_memory(store: Path, build: Path) -> str:
    """Merge the memory of the build file `build` into the store at `store` (made if missing);
    returns its memory id. A memory the store holds already is left as it is."""
    EmbeddedStore(store).close()  # the store's schema, made as a store makes it
    db = sqlite3.connect(store, timeout=60, isolation_level=None)
    try:
        db.execute("PRAGMA foreign_keys = ON")
        db.execute("ATTACH DATABASE ? AS build", (str(build),))
        memory_id, title, vault_title = _build_memory(db, build)
        with immediate(db, write_lock(store)):
            if db.execute(
                "SELECT 1 FROM main.memories WHERE memory_id = ?", (memory_id,)
            ).fetchone():
                return memory_id
            vault_id = _local_vault(db, vault_title)
            _clear_empty_namesake(db, vault_id, title, build)
            db.execute(
                "INSERT INTO main.memories SELECT memory_id, ?, title, memory_type, description,"
                " created_at FROM build.memories",
                (vault_id,),
            )
            db.execute(
                f"INSERT INTO main.entries ({_ENTRY_COLUMNS})"
                f" SELECT {_ENTRY_COLUMNS} FROM build.entries ORDER BY seq"
            )
            db.execute(
                f"INSERT INTO main.contexts ({_CONTEXT_COLUMNS})"
                f" SELECT {_CONTEXT_COLUMNS} FROM build.contexts ORDER BY seq"
            )
            db.execute("INSERT OR IGNORE INTO main.embeddings SELECT * FROM build.embeddings")
        db.execute("DETACH DATABASE build")
    finally:
        db.close()
    return memory_id
