"""Opaque memory titles: nothing in a title tells the memory system which question it holds.

A title is an HMAC of (scope, question id) under a random secret kept in the results folder
(`.memory-title-key`, never sent anywhere), so it shows neither the question id nor its `_abs`
suffix, and hashing the public question ids does not undo it. The same results folder, scope
and question always give the same title: a rerun of a run id, and every run sharing a
`[cache] scope = "shared"` ingestion, find their memories again. The manifest maps titles back
to question ids on the scorer side.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import re
import secrets
import tempfile
from pathlib import Path

KEY_FILE = ".memory-title-key"
TITLE_PREFIX = "lme-"
_DIGEST_CHARS = 40  # 160 bits; with the prefix, within Mycelian's 50-character title limit
_KEY = re.compile(r"[0-9a-f]{64}")


class TitleKeyError(ValueError):
    """The results folder's title key file is unreadable or not a key."""


def _read_key(path: Path) -> bytes:
    text = path.read_text("ascii", errors="replace").strip()
    if not _KEY.fullmatch(text):
        raise TitleKeyError(
            f"{path}: not a memory title key (64 hex digits); it names this folder's memories,"
            " so restore it, or delete it to start with new memories"
        )
    return bytes.fromhex(text)


def title_key(results_dir: Path) -> bytes:
    """The folder's secret, made on first use. Two processes making it at once agree: the
    key is written to a temporary file and linked into place only if none is there yet."""
    path = Path(results_dir) / KEY_FILE
    try:
        return _read_key(path)
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f"{KEY_FILE}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as handle:  # mkstemp: readable by us only
            handle.write(secrets.token_hex(32) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        with contextlib.suppress(FileExistsError):  # another process linked its key first
            os.link(tmp_name, path)
    finally:
        os.unlink(tmp_name)
    return _read_key(path)


def opaque_title(key: bytes, question_id: str, scope: str) -> str:
    """`lme-` and 40 hex digits: lowercase letters, digits and a hyphen, 44 characters."""
    message = f"{scope}\n{question_id}".encode()
    return TITLE_PREFIX + hmac.new(key, message, hashlib.sha256).hexdigest()[:_DIGEST_CHARS]


def memory_title(question_id: str, scope: str, results_dir: Path) -> str:
    """The title of a question's memory for a scope (run id or shared settings)."""
    return opaque_title(title_key(results_dir), question_id, scope)


def memory_titles(question_ids: list[str], scope: str, results_dir: Path) -> dict[str, str]:
    """Title → question id, for the manifest."""
    key = title_key(results_dir)
    return {opaque_title(key, question_id, scope): question_id for question_id in question_ids}
