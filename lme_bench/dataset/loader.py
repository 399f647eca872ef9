"""Streaming loader for LongMemEval oracle / S / M files (one JSON array of question objects).

The file is parsed item by item (ijson), so the 2.7 GB M file never sits in memory whole.
Every problem becomes one `DatasetError` naming the file, the question and the field.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import ijson
from pydantic import ValidationError

from lme_bench.dataset.errors import DatasetError
from lme_bench.dataset.models import Instance


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
        raise DatasetError(
            path, message, index=index, question_id=qid, field=_field_path(tuple(error["loc"]))
        ) from None


def iter_questions(path: Path) -> Iterator[LoadedQuestion]:
    """Yield each question of a LongMemEval file, validated, in file order."""
    path = Path(path)
    if not path.is_file():
        raise DatasetError(path, "no such file")
    seen: dict[str, int] = {}
    index = -1
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
                canonical = json.dumps(raw, sort_keys=True, ensure_ascii=False).encode()
                yield LoadedQuestion(index=index, instance=instance, canonical_json=canonical)
        except ijson.JSONError as exc:
            where = f"after question #{index}" if index >= 0 else "before the first question"
            detail = " ".join(str(exc).split())
            if "UTF8" in detail:
                raise DatasetError(path, f"not UTF-8 text {where}: {detail}") from None
            raise DatasetError(path, f"invalid or truncated JSON {where}: {detail}") from None
        except UnicodeDecodeError as exc:
            raise DatasetError(path, f"not UTF-8 text: {exc}") from None
    if index < 0:
        raise DatasetError(path, "the array holds no questions")
