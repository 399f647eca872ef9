"""Streaming loader for LongMemEval oracle / S / M files (one JSON array of question objects).

The file is parsed item by item (ijson), so the 2.7 GB M file never sits in memory whole.
Every problem becomes one `DatasetError` naming the file, the question and the field.
"""

from __future__ import annotations

import codecs
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import ijson
from pydantic import ValidationError

from lme_bench.dataset.errors import DatasetError
from lme_bench.dataset.models import FieldProblem, Instance


@dataclass(frozen=True, slots=True)
class LoadedQuestion:
    index: int
    instance: Instance
    canonical_json: bytes  # the question as sorted-key JSON: stable bytes to hash and store

    @property
    def content_sha256(self) -> str:
        return hashlib.sha256(self.canonical_json).hexdigest()


def _field_path(loc: tuple[int | str, ...]) -> str | None:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or None


def _first_byte(handle: BinaryIO, path: Path) -> bytes:
    head = handle.read(4096).lstrip(b"\xef\xbb\xbf").lstrip()
    if not head:
        raise DatasetError(path, "the file is empty, expected a JSON array of questions")
    return head[:1]


def _instance(path: Path, index: int, raw: Any) -> Instance:
    question_id = raw.get("question_id") if isinstance(raw, dict) else None
    qid = question_id if isinstance(question_id, str) else None
    if not isinstance(raw, dict):
        raise DatasetError(path, f"expected a JSON object, got {type(raw).__name__}", index=index)
    try:
        return Instance.model_validate(raw)
    except ValidationError as exc:
        error = exc.errors()[0]
        message = str(error["msg"]).removeprefix("Value error, ")
        field = _field_path(tuple(error["loc"]))
        cause = error.get("ctx", {}).get("error")
        if field is None and isinstance(cause, FieldProblem):
            field = cause.field
        raise DatasetError(path, message, index=index, question_id=qid, field=field) from None


def _first_bad_utf8(path: Path) -> int | None:
    """Byte offset of the first byte that is not UTF-8 (read again only on that error)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset = 0
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            pending = len(decoder.getstate()[0])
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError as exc:
                return offset - pending + exc.start
            offset += len(chunk)
    return None


def _json_error(path: Path, exc: Exception, index: int, last_id: str | None) -> DatasetError:
    """One line for a parser error: where (after which question) and what, without the
    parser's multi-line caret drawing."""
    raw = exc.args[0] if exc.args else str(exc)
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    # yajl (C) and pure-Python ijson backends word their errors differently
    not_utf8 = "UTF8" in text or isinstance(exc, UnicodeDecodeError)
    not_utf8 = not_utf8 or isinstance(raw, UnicodeDecodeError)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    what = lines[0] if lines else "invalid JSON"
    near = lines[1] if len(lines) > 2 else ""
    where = f"after question #{index} (question_id {last_id!r})" if index >= 0 else "in question #0"
    if not_utf8:
        bad = _first_bad_utf8(path)
        at = f" at byte {bad:,}" if bad is not None else ""
        return DatasetError(path, f"not UTF-8 text{at} ({where}); save the file as UTF-8")
    if "premature EOF" in what or what.startswith("Incomplete"):
        return DatasetError(path, f"truncated JSON: the file ends {where}, before the array closes")
    shown = f" near {near[:60]!r}" if near else ""
    return DatasetError(path, f"invalid JSON {where}: {what}{shown}")


def iter_questions(path: Path) -> Iterator[LoadedQuestion]:
    """Yield each question of a LongMemEval file, validated, in file order."""
    path = Path(path)
    if not path.is_file():
        raise DatasetError(path, "not a file" if path.exists() else "no such file")
    seen: dict[str, int] = {}
    index, last_id = -1, None
    with path.open("rb") as handle:
        first = _first_byte(handle, path)
        if first != b"[":
            kind = "a JSON object" if first == b"{" else "not a JSON array"
            raise DatasetError(path, f"top level is {kind}; expected an array of questions")
        handle.seek(0)
        try:
            for index, raw in enumerate(ijson.items(handle, "item", use_float=True)):
                instance = _instance(path, index, raw)
                if instance.question_id in seen:
                    first_seen = seen[instance.question_id]
                    raise DatasetError(
                        path,
                        f"duplicate question_id, first seen at question #{first_seen}",
                        index=index,
                        question_id=instance.question_id,
                        field="question_id",
                    )
                seen[instance.question_id] = index
                last_id = instance.question_id
                canonical = json.dumps(raw, sort_keys=True, ensure_ascii=False).encode()
                yield LoadedQuestion(index=index, instance=instance, canonical_json=canonical)
        except (ijson.JSONError, UnicodeDecodeError) as exc:
            raise _json_error(path, exc, index, last_id) from None
    if index < 0:
        raise DatasetError(path, "the array holds no questions")
