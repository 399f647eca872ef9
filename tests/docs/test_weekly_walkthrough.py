"""docs/weekly.md works as written: its shell blocks, run in order in one folder as a user
types them, print what the page shows. Each ```text block after a shell block is that block's
output (stdout and stderr as a terminal shows them), trimmed: each of its lines is in the real
output, in order, where `…` stands for any text, run ids stand for the real runs' in the order
they were made, and timings, dates, clock times and the code version are whatever they are."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.docs.examples import ROOT, Example, examples, scratch_folder

pytestmark = pytest.mark.slow  # three whole runs, each with its temporary Prefect server
PAGE = ROOT / "docs" / "weekly.md"
WALKED = "tests/docs/test_weekly_walkthrough.py"  # named by the shell blocks' markers
RUN_ID = re.compile(r"run-\d{8}-\d{6}")
VARYING = [
    (re.compile(r"\d\d:\d\d:\d\d\.\d{3}"), "<clock>"),
    (re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d"), "<date>"),
    (re.compile(r"\d+(\.\d+)? (ms|s)\b"), "<time>"),
    (re.compile(r"\d+\.\d+\.\d+\+g[0-9a-f]+\S*"), "<code>"),
]


def _steps(page: Path) -> list[tuple[Example, Example]]:
    """Each shell block of the page with the output block that follows it."""
    blocks = [b for b in examples(page) if b.language in ("bash", "text")]
    steps = []
    for block, after in zip(blocks, [*blocks[1:], None], strict=True):
        if block.language != "bash" or WALKED not in block.reason:
            continue
        assert after is not None and after.language == "text", f"{block.name}: no output shown"
        steps.append((block, after))
    return steps


def _normal(text: str, runs: dict[str, str]) -> str:
    text = RUN_ID.sub(lambda m: runs.get(m.group(0), m.group(0)), text)
    for pattern, stand_in in VARYING:
        text = pattern.sub(stand_in, text)
    return text


def _shown_in(shown: str, printed: list[str]) -> None:
    """Every shown line matches a printed line, in order ("…" matching any text)."""
    at = 0
    for line in shown.splitlines():
        if not line.strip():
            continue
        pattern = re.compile(".*".join(re.escape(p.strip()) for p in line.split("…")))
        while at < len(printed) and not pattern.search(printed[at]):
            at += 1
        assert at < len(printed), f"shown but not printed (or out of order): {line}"
        at += 1


def test_the_weekly_walkthrough_prints_what_the_page_shows(tmp_path: Path) -> None:
    steps = _steps(PAGE)
    assert len(steps) == 5  # three runs, the history, the gate on run ids
    env = {k: v for k, v in scratch_folder(tmp_path).items() if not k.startswith("LME_")}
    env.pop("PREFECT_LOGGING_LEVEL", None)  # the flow's log lines, as a user sees them
    # a busy machine can need more than the default 20 s to start the temporary server
    env["PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS"] = "180"
    outputs = []
    for block, _ in steps:
        done = subprocess.run(
            ["bash", "-uo", "pipefail", "-c", block.text],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=900,
        )  # fmt: skip  (one stream, in the order a terminal shows them)
        outputs.append(done.stdout)
    made = sorted(p.name for p in (tmp_path / "weekly-demo").glob("run-*"))
    documented = sorted({m for _, shown in steps for m in RUN_ID.findall(shown.text)})
    assert len(made) == 3, made
    assert len(documented) == 3, documented  # the page's runs stand for these, oldest first
    runs = dict(zip(documented, made, strict=True))
    for (block, shown), output in zip(steps, outputs, strict=True):
        printed = _normal(output, {}).splitlines()
        try:
            _shown_in(_normal(shown.text, runs), printed)
        except AssertionError as error:
            raise AssertionError(f"{block.name}: {error}\nprinted:\n{output[-4000:]}") from None
    assert (tmp_path / "weekly-demo" / "series" / "weekly" / "history.html").is_file()
