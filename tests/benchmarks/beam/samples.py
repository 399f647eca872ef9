"""Small made-up files in BEAM's layouts (nothing of BEAM's data or prompts), for the tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def message(role: str, mid: int, content: str, **extra: Any) -> dict[str, Any]:
    return {"role": role, "id": mid, "content": content, **extra}


def batch(
    number: int, anchor: str | None, exchanges: list[list[tuple[str, str]]]
) -> dict[str, Any]:
    """A batch; the anchor goes on its first message, as in the published files."""
    turns: list[list[dict[str, Any]]] = []
    mid = number * 100
    for e, exchange in enumerate(exchanges):
        messages = []
        for m, (role, text) in enumerate(exchange):
            extra: dict[str, Any] = {}
            if role == "user":
                extra = {"index": f"{number},{e}", "question_type": "main_question"}
            if e == 0 and m == 0 and anchor is not None:
                extra["time_anchor"] = anchor
            messages.append(message(role, mid, text, **extra))
            mid += 1
        turns.append(messages)
    return {"batch_number": number, "time_anchor": None, "turns": turns}


CHAT = [
    batch(
        1,
        "March-15-2024",
        [
            [("user", "I am planning a herb garden on my balcony."), ("assistant", "Nice plan.")],
            [
                ("user", "Basil or mint first?"),
                ("assistant", "Basil."),
                ("user", "Why?"),
                ("assistant", "It grows fast."),
            ],
        ],
    ),
    batch(2, "April-2-2024", [[("user", "The basil sprouted today."), ("assistant", "Great!")]]),
]

QUESTIONS: dict[str, list[dict[str, Any]]] = {
    "abstention": [
        {
            "question": "What soil brand did I buy?",
            "ideal_response": "There is no information about a soil brand.",
            "difficulty": "easy",
            "rubric": ["There is no information about a soil brand"],
        }
    ],
    "event_ordering": [
        {
            "question": "In which order did I bring up the garden topics?",
            "answer": "Planning, choosing basil, sprouting.",
            "ordering_tested": ["1st: Planning", "2nd: Choosing basil", "3rd: Sprouting"],
            "source_chat_ids": [100, 102, 200],
            "rubric": ["Planning the garden", "Choosing basil", "Basil sprouting"],
        }
    ],
    "information_extraction": [
        {
            "question": "Which herb did I start with?",
            "answer": "Basil",
            "source_chat_ids": [102],
            "rubric": ["LLM response should state: basil", "LLM response should state: fast"],
        },
        {
            "question": "Where is my garden?",
            "answer": "On the balcony",
            "rubric": ["LLM response should state: balcony"],
        },
    ],
    "instruction_following": [
        {
            "question": "Show me a watering schedule.",
            "instruction_being_tested": "Always answer in a table.",
            "expected_compliance": "A table.",
            "rubric": ["LLM response should contain: a table"],
        }
    ],
}


def write_chat(root: Path, tier: str = "100K", number: int = 3, data: Any = CHAT) -> Path:
    path = root / "chats" / tier / str(number) / "chat.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def write_questions(root: Path, tier: str = "100K", number: int = 3, data: Any = QUESTIONS) -> Path:
    path = root / "chats" / tier / str(number) / "probing_questions" / "probing_questions.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


# A stand-in checkout: files of the official names and shapes with our own placeholder wording.
STANDIN_PROMPTS = '''
unused_prompt = """not this one"""

unified_llm_judge_base_prompt = """STANDIN JUDGE
question: <question>
item: <rubric_item>
response: <llm_response>
reply with JSON"""
'''

STANDIN_METRICS = """
import a_package_that_is_not_installed
from src.prompts import *


def llm_equivalence(first_paragraph, second_paragraph, llm):
    system_msg = {"role": "system", "content": "STANDIN same event? YES or NO"}
    user_msg = {"role": "user", "content": f"A: {first_paragraph} | B: {second_paragraph}"}
    response = llm.invoke([system_msg, user_msg]).content.lower()
    return "yes" in response
"""


def write_checkout(
    root: Path, prompts: str | None = STANDIN_PROMPTS, metrics: str | None = STANDIN_METRICS
) -> Path:
    checkout = root / "BEAM"
    (checkout / "src" / "evaluation").mkdir(parents=True, exist_ok=True)
    if prompts is not None:
        (checkout / "src" / "prompts.py").write_text(prompts, encoding="utf-8")
    if metrics is not None:
        (checkout / "src" / "evaluation" / "compute_metrics.py").write_text(
            metrics, encoding="utf-8"
        )
    return checkout
