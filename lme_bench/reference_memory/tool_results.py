"""What the memory tools return: the JSON shapes of memories and entries, and our default prompts.

The prompts are our own (prompts/<memory type>/v1/*.md, shipped as package data), written for a
note-taking memory agent; get_default_prompts serves them in Mycelian's shape.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from lme_bench.entries.models import Entry, Memory

PROMPT_TYPES = ("chat",)
_PROMPT_FILES = (
    "context_summary_rules",
    "context_prompt",
    "entry_capture_prompt",
    "summary_prompt",
)


@cache
def default_prompts(memory_type: str = "chat") -> dict[str, Any]:
    """Our own default prompts for a memory type, shipped with the package."""
    folder = resources.files("lme_bench.reference_memory").joinpath("prompts", memory_type, "v1")
    text = {
        name: folder.joinpath(f"{name}.md").read_text(encoding="utf-8") for name in _PROMPT_FILES
    }
    return {
        "version": folder.joinpath("VERSION").read_text(encoding="utf-8").strip(),
        "context_summary_rules": text["context_summary_rules"],
        "templates": {name: text[name] for name in _PROMPT_FILES[1:]},
    }


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def memory_json(memory: Memory) -> dict[str, str]:
    return {
        "memoryId": memory.memory_id,
        "vaultId": memory.vault_id,
        "title": memory.title,
        "memoryType": memory.memory_type,
        "description": memory.description,
        "createdAt": memory.created_at,
    }


def entry_json(entry: Entry) -> dict[str, Any]:
    return {
        "entryId": entry.entry_id,
        "memoryId": entry.memory_id,
        "rawEntry": entry.raw_entry,
        "summary": entry.summary,
        "tags": entry.tags,
        "creationTime": entry.creation_time,
    }
