"""Finished runs to bundle (the fake models on the bundled sample) and archive surgery: a
bundle's members read, changed and written back as tampering would."""

from __future__ import annotations

import io
import json
import shutil
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lme_bench.config.settings import load_settings
from lme_bench.publish.archive import read_members
from lme_bench.results.recorded_settings import record_settings
from lme_bench.run.steps import plan_run
from tests.every_stage import run_every_stage

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "lme_bench" / "dataset" / "sample" / "longmemeval_sample.json"
FAKE = {"models.qa": "fake:quote-memory", "models.judge": "fake:match-judge"}


def make_run(results_dir: Path, run_id: str = "pub", limit: int = 4, **overrides: Any) -> Path:
    settings = load_settings(
        overrides.pop("config", None),
        **{"run.results_dir": str(results_dir), "run.id": run_id, **FAKE, **overrides},
    )
    report, _, _ = run_every_stage(settings, limit)
    record_settings(report.run_dir, settings, plan_run(settings).request)  # as the flow does
    return report.run_dir


def copy_run(run_dir: Path, to: Path) -> Path:
    """A copy of the run in a results folder of its own (so a test may change its files)."""
    target = to / run_dir.name
    shutil.copytree(run_dir, target)
    return target


def write_members(path: Path, members: dict[str, bytes]) -> None:
    with tarfile.open(path, "w:gz") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))


def tampered(bundle: Path, out: Path, change: Callable[[dict[str, bytes]], None]) -> Path:
    members = read_members(bundle)
    change(members)
    write_members(out, members)
    return out


def flip_byte(data: bytes, at: int | None = None) -> bytes:
    """`data` with one byte changed (in the middle unless `at`)."""
    index = len(data) // 2 if at is None else at
    return data[:index] + bytes([data[index] ^ 0x01]) + data[index + 1 :]


def json_of(members: dict[str, bytes], name: str) -> Any:
    return json.loads(members[name])
