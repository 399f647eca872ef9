"""Small LoCoMo-shaped data written for the tests (never the real, CC BY-NC data)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any


def conversation_file() -> dict[str, Any]:
    """One conversation in the per-conversation layout of the repository's zip."""
    return {
        "speaker_a": "Ada",
        "speaker_b": "Ben",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ada", "dia_id": "D1:1", "text": "I adopted a greyhound called Pip."},
            {
                "speaker": "Ben",
                "dia_id": "D1:2",
                "text": "Lovely! Here is my garden.",
                "img_url": ["https://example.invalid/garden.jpg"],
                "blip_caption": "a photo of tomatoes on a vine",
                "query": "tomato garden",
            },
        ],
        "session_2_date_time": "10:04 am on 19 June, 2023",
        "session_2": [
            {"speaker": "Ada", "dia_id": "D2:1", "text": "Pip and I ran a 5k in Leeds."},
            {"speaker": "Ben", "dia_id": "D2:2", "text": "I started violin and clarinet."},
        ],
        "events_session_1": {"Ada": ["Ada adopts a dog."]},
        "session_1_summary": "Ada talks about her new dog.",
        "qa": [
            {
                "question": "What instruments does Ben play?",
                "answer": "violin, clarinet",
                "evidence": ["D2:2"],
                "category": 1,
            },
            {
                "question": "When did Ada run a 5k?",
                "answer": 2023,
                "evidence": ["D2:1"],
                "category": 2,
            },
            {
                "question": "Would Ada like a cat?",
                "answer": "Likely no; she has a dog",
                "evidence": ["D1:1"],
                "category": 3,
            },
            {
                "question": "What is Ada's dog called?",
                "answer": "Pip",
                "evidence": ["D1:1"],
                "category": 4,
            },
            {
                "question": "What is Ben's dog called?",
                "adversarial_answer": "Pip",
                "evidence": [],
                "category": 5,
            },
        ],
    }


def listed_sample(sample_id: str = "conv-7") -> dict[str, Any]:
    """The same conversation as one item of the `locomo10.json` array."""
    raw = conversation_file()
    conversation = {
        key: value
        for key, value in raw.items()
        if key.startswith("speaker") or (key.startswith("session_") and "summary" not in key)
    }
    return {
        "sample_id": sample_id,
        "conversation": conversation,
        "qa": raw["qa"],
        "event_summary": {"events_session_1": raw["events_session_1"]},
        "observation": {},
        "session_summary": {"session_1_summary": raw["session_1_summary"]},
    }


def write_json(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def edited(value: dict[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(value)
