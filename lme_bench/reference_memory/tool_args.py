"""Argument checking for the memory tools: each tool's parameters, limits and error messages.

Every problem becomes a `ToolError` whose message names the tool and the parameter, because
that message is all an LLM agent sees when a call goes wrong.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from lme_bench.reference_memory.store import format_rfc3339

TOOL_PARAMS: dict[str, tuple[str, ...]] = {
    "create_vault": ("title", "description"),
    "list_vaults": (),
    "list_memories": ("vault_id",),
    "get_memory": ("vault_id", "memory_id"),
    "create_memory_in_vault": ("vault_id", "title", "memory_type", "description"),
    "add_entry": ("vault_id", "memory_id", "raw_entry", "summary", "tags"),
    "list_entries": ("vault_id", "memory_id", "limit", "before", "after"),
    "get_entry": ("vault_id", "memory_id", "entry_id"),
    "put_context": ("vault_id", "memory_id", "content"),
    "get_context": ("vault_id", "memory_id"),
    "await_consistency": ("memory_id",),
    "search_memories": ("memory_id", "query", "top_ke", "top_kc", "include_raw_entries"),
    "get_default_prompts": ("memory_type",),
}

VAULT_TITLE_MAX = 50
MEMORY_TITLE_MAX = 256
SUMMARY_MAX = 512  # Mycelian's entry summary rule; the server enforces it (see service.py)
CONTEXT_MAX = 65_536
# An entry's own limits, well inside the HTTP body limit (4 MiB) even when every character is
# sent as a 6-byte JSON escape, so a large entry gets this error instead of a dropped request.
RAW_ENTRY_MAX = 262_144
TAGS_MAX = 16_384  # characters of all tag keys and values together
LIST_LIMIT = (1, 50, 25)  # min, max, default
TOP_KE = (0, 25, 5)
TOP_KC = (1, 10, 2)

_VAULT_TITLE = re.compile(r"[a-z0-9-]+")
_MEMORY_TYPE = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,31}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_RFC3339 = re.compile(
    r"(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}:\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})"
)


class ToolError(Exception):
    """A tool call that cannot be served; the message is what the caller sees."""


class Args:
    """One call's arguments: typed getters that raise ToolError naming the parameter."""

    def __init__(self, tool: str, arguments: Mapping[str, Any] | None) -> None:
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, Mapping):
            raise ToolError(f"{tool}: arguments must be an object, got {_kind(arguments)}")
        allowed = TOOL_PARAMS[tool]
        unknown = sorted(str(key) for key in arguments if key not in allowed)
        if unknown:
            expected = ", ".join(allowed) or "none"
            raise ToolError(
                f"{tool}: unknown parameter(s) {', '.join(unknown)} (expected: {expected})"
            )
        self.tool = tool
        # JSON null counts as "not given", so optional parameters take their defaults.
        self._values = {key: value for key, value in arguments.items() if value is not None}

    def _fail(self, name: str, problem: str) -> ToolError:
        return ToolError(f"{self.tool}: parameter '{name}' {problem}")

    def given(self, name: str) -> bool:
        return name in self._values

    def text(self, name: str, default: str | None = None, *, max_len: int | None = None) -> str:
        """A string; required (and non-blank) unless a default is given."""
        if name not in self._values:
            if default is None:
                raise self._fail(name, "is required")
            return default
        value = self._values[name]
        if not isinstance(value, str):
            raise self._fail(name, f"must be a string, got {_kind(value)}")
        if default is None and not value.strip():
            raise self._fail(name, "must not be empty")
        if max_len is not None and len(value) > max_len:
            raise self._fail(name, f"must be at most {max_len:,} characters, got {len(value):,}")
        return value

    def ident(self, name: str) -> str:
        return self.text(name).strip()

    def integer(self, name: str, bounds: tuple[int, int, int]) -> int:
        low, high, default = bounds
        value = self._values.get(name, default)
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self._fail(name, f"must be an integer, got {_kind(value)}")
        if not low <= value <= high:
            raise self._fail(name, f"must be between {low} and {high}, got {value}")
        return value

    def flag(self, name: str, default: bool) -> bool:
        value = self._values.get(name, default)
        if not isinstance(value, bool):
            raise self._fail(name, f"must be true or false, got {_kind(value)}")
        return value

    def tags(self, name: str) -> dict[str, str]:
        value = self._values.get(name, {})
        if not isinstance(value, Mapping):
            raise self._fail(name, f"must be an object of strings, got {_kind(value)}")
        for key, item in value.items():
            if not isinstance(key, str) or not isinstance(item, str):
                raise self._fail(name, f"must map strings to strings; {key!r} -> {_kind(item)}")
        size = sum(len(key) + len(item) for key, item in value.items())
        if size > TAGS_MAX:
            raise self._fail(name, f"must hold at most {TAGS_MAX:,} characters, got {size:,}")
        return dict(value)

    def vault_title(self, name: str) -> str:
        title = self.text(name)
        if len(title) > VAULT_TITLE_MAX or not _VAULT_TITLE.fullmatch(title):
            raise self._fail(
                name,
                f"must be 1-{VAULT_TITLE_MAX} lowercase letters, digits or hyphens, got {title!r}",
            )
        return title

    def memory_title(self, name: str) -> str:
        title = self.text(name, max_len=MEMORY_TITLE_MAX).strip()
        if _CONTROL.search(title):
            raise self._fail(name, "must not contain control characters or newlines")
        return title

    def memory_type(self, name: str) -> str:
        value = self.text(name).strip()
        if not _MEMORY_TYPE.fullmatch(value):
            raise self._fail(name, f"must be a short word such as CHAT or NOTES, got {value!r}")
        return value.upper()

    def timestamp(self, name: str, *, round_up: bool) -> str | None:
        """An RFC 3339 time, normalised to the store's microsecond format.

        Finer fractions (Go writes nanoseconds) are rounded so that comparisons against
        microsecond creation times keep their meaning: up for `before`, down for `after`.
        """
        if name not in self._values:
            return None
        text = self.text(name).strip()
        match = _RFC3339.fullmatch(text)
        if match is None:
            raise self._fail(name, f"must be an RFC 3339 time like 2024-05-01T12:00:00Z: {text!r}")
        day, clock, fraction, offset = match.groups()
        digits = (fraction or "").ljust(6, "0")
        try:
            moment = datetime.fromisoformat(f"{day}T{clock}.{digits[:6]}")
            if offset not in ("Z", "z"):
                hours, minutes = int(offset[1:3]), int(offset[4:6])
                sign = -1 if offset[0] == "-" else 1
                moment -= sign * timedelta(hours=hours, minutes=minutes)
        except ValueError as exc:
            raise self._fail(name, f"is not a valid RFC 3339 time: {text!r} ({exc})") from None
        if round_up and digits[6:].strip("0"):
            moment += timedelta(microseconds=1)
        return format_rfc3339(moment.replace(tzinfo=UTC))


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list | tuple):
        return "an array"
    return type(value).__name__
