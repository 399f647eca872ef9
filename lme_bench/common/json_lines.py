"""Reading a JSON-lines file one object a line, each bad line one error naming its place."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def json_object_lines(
    path: Path, text: str, error: type[Exception]
) -> Iterator[tuple[int, str, dict[str, Any]]]:
    """(line number, "PATH: line N", object) for each non-blank line of `text`; a line that is
    not JSON, or not a JSON object, raises `error` naming it."""
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        place = f"{path}: line {number}"
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise error(f"{place}: not valid JSON: {exc.msg}") from None
        if not isinstance(item, dict):
            raise error(f"{place}: expected a JSON object")
        yield number, place, item
