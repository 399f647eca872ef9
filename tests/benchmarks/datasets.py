"""One small dataset per built-in benchmark, written for the tests (none of it real data)."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable
from importlib import resources
from pathlib import Path

from tests.benchmarks.beam.samples import write_chat, write_questions
from tests.benchmarks.locomo.samples import conversation_file, listed_sample, write_json

LONGMEMEVAL_SAMPLE = Path(
    str(resources.files("lme_bench.dataset") / "sample" / "longmemeval_sample.json")
)


def longmemeval_file(root: Path) -> Path:
    return LONGMEMEVAL_SAMPLE


def locomo_list(root: Path) -> Path:
    return write_json(root / "locomo10.json", [listed_sample("conv-7"), listed_sample("conv-8")])


def locomo_zip(root: Path) -> Path:
    path = root / "locomo10.zip"
    with zipfile.ZipFile(path, "w") as archive:
        for stem in ("26", "30"):
            archive.writestr(f"data/locomo10_v2/{stem}.json", json.dumps(conversation_file()))
    return path


def locomo_folder(root: Path) -> Path:
    folder = root / "locomo"
    folder.mkdir()
    write_json(folder / "26.json", conversation_file())
    write_json(folder / "30.json", conversation_file())
    return folder


def locomo_one_file(root: Path) -> Path:
    return write_json(root / "26.json", conversation_file())


def beam_checkout(root: Path) -> Path:
    for number in (1, 2):
        write_chat(root, number=number)
        write_questions(root, number=number)
    return root


def beam_chat(root: Path) -> Path:
    return beam_checkout(root) / "chats" / "100K" / "1"


# name -> (benchmark, a writer of one of its files or folders under a fresh folder)
DATASETS: dict[str, tuple[str, Callable[[Path], Path]]] = {
    "longmemeval": ("longmemeval", longmemeval_file),
    "locomo-list": ("locomo", locomo_list),
    "locomo-zip": ("locomo", locomo_zip),
    "locomo-folder": ("locomo", locomo_folder),
    "locomo-file": ("locomo", locomo_one_file),
    "beam-checkout": ("beam", beam_checkout),
    "beam-chats": ("beam", lambda root: beam_checkout(root) / "chats"),
    "beam-tier": ("beam", lambda root: beam_checkout(root) / "chats" / "100K"),
    "beam-chat": ("beam", beam_chat),
}
