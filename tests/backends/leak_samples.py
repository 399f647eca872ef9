"""Benchmark files for the leak tests, written with gold labels no conversation text holds, so
a copy of one anywhere on the memory side is seen: each writer returns the dataset's path, the
strings (besides the question ids) that must not leave the scorer's side, and the gold words
common enough to be in a memory system's own instructions (sought only in what lme-bench
composes)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from tests.benchmarks.beam.samples import CHAT, QUESTIONS, write_chat, write_questions
from tests.benchmarks.locomo.samples import listed_sample, write_json

LOCOMO_SAMPLE_ID = "conv-9071"
BEAM_CHAT = 917  # its build id is "100K-917"
BEAM_ID_OFFSET = 7_340_000  # message ids no date or count shows


def locomo_file(folder: Path) -> tuple[Path, list[str], list[str]]:
    """One conversation with distinctive answers and adversarial answers."""
    sample = listed_sample(LOCOMO_SAMPLE_ID)
    for n, item in enumerate(sample["qa"]):
        if "answer" in item:
            item["answer"] = f"Quillfeather-{n}"
        if "adversarial_answer" in item:
            item["adversarial_answer"] = f"Marrowdusk-{n}"
    gold = ["Quillfeather-", "Marrowdusk-", "D1:", "D2:", LOCOMO_SAMPLE_ID]
    gold += ["multi-hop", "open-domain", "single-hop"]  # the category names (and numbers' keys)
    folder.mkdir(parents=True, exist_ok=True)
    return write_json(folder / "locomo.json", [sample]), gold, ["temporal", "adversarial"]


def _beam_chat() -> list[dict[str, Any]]:
    chat = copy.deepcopy(CHAT)
    for batch in chat:
        for exchange in batch["turns"]:
            for message in exchange:
                message["id"] += BEAM_ID_OFFSET
    return chat


def _beam_questions() -> dict[str, list[dict[str, Any]]]:
    questions = copy.deepcopy(QUESTIONS)
    fields = ("answer", "ideal_response", "instruction_being_tested", "expected_compliance")
    for ability, items in questions.items():
        for n, item in enumerate(items):
            for name in fields:
                if name in item:
                    item[name] = f"Thistlewick-{name}-{ability[:3]}{n}"
            item["rubric"] = [
                f"Emberquill-{ability[:3]}{n}-{i}" for i in range(len(item["rubric"]))
            ]
            if "ordering_tested" in item:
                item["ordering_tested"] = [f"Gallowmere-{i}" for i in range(3)]
            if "source_chat_ids" in item:
                item["source_chat_ids"] = [i + BEAM_ID_OFFSET for i in item["source_chat_ids"]]
    return questions


def beam_folder(folder: Path) -> tuple[Path, list[str], list[str]]:
    """One 100K chat (user and assistant turns) with distinctive reference answers, rubric
    items, orderings and message ids, and its probing questions of four abilities."""
    chat = _beam_chat()
    write_chat(folder, number=BEAM_CHAT, data=chat)
    questions = _beam_questions()
    write_questions(folder, number=BEAM_CHAT, data=questions)
    gold = [
        "Thistlewick-",
        "Emberquill-",
        "Gallowmere-",
        f"100K-{BEAM_CHAT}",
    ]
    # each message id whole: a four-digit prefix turns up by chance in a session id's hex
    gold += [str(m["id"]) for batch in chat for exchange in batch["turns"] for m in exchange]
    gold += [ability for ability in questions if "_" in ability]  # the ability names
    return folder / "chats", gold, ["abstention"]
