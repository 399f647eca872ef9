"""The `score` command: arguments in, summary.md and one line per outcome out.

Exit 0: every question of the dataset answered and judged; 1: the folder is written but
questions are missing from the file (their count and ids in summary.json and summary.md; 0
with --allow-missing) or their judging failed; 2: bad input, one error naming the file, the
line and the field (nothing is judged).
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

EXIT_INCOMPLETE = 1
JUDGES_AT_MOST = 2  # [models] judge and [judge] second_model


def add_parser(commands: Any) -> None:
    score = commands.add_parser(
        "score",
        help="judge and report answers written by any harness (LongMemEval hypotheses.jsonl,"
        " LoCoMo predictions, BEAM answers) as a run does, or score a LongMemEval retrieval log",
    )
    score.add_argument(
        "file",
        type=Path,
        metavar="FILE",
        help="hypotheses.jsonl, LoCoMo predictions, a BEAM chat's answers, or a retrieval log",
    )
    score.add_argument("--dataset", type=Path, required=True, help="the benchmark's dataset file")
    score.add_argument(
        "--judge",
        action="append",
        default=[],
        metavar="PROVIDER:MODEL",
        help="the judge (default: [models] judge of --config); twice: a second judge",
    )
    score.add_argument("--config", type=Path, help="TOML run config: [judge], [limits], …")
    score.add_argument(
        "--out", type=Path, help="the folder to write (default: results/score-<time>)"
    )
    score.add_argument(
        "--allow-missing",
        action="store_true",
        help="exit 0 when the file leaves questions of the dataset unanswered (they are still"
        " counted and listed, never scored)",
    )


def _overrides(judges: list[str]) -> dict[str, Any]:
    from lme_bench.config.settings import ConfigError

    if len(judges) > JUDGES_AT_MOST:
        raise ConfigError(f"--judge: at most {JUDGES_AT_MOST} judges, got {len(judges)}")
    keys = ("models.judge", "judge.second_model")
    return dict(zip(keys, judges, strict=False))


def score_command(args: argparse.Namespace) -> int:
    from lme_bench.config.settings import load_settings
    from lme_bench.score.scoring import score_file

    settings = load_settings(args.config, **_overrides(args.judge))
    out = args.out or settings.run.results_dir / datetime.now(UTC).strftime("score-%Y%m%d-%H%M%S")
    scored = score_file(args.file, args.dataset, settings, out)
    print(scored.report.markdown)
    print(f"wrote: {scored.report.run_dir}")
    code = 0
    if scored.missing:
        shown = ", ".join(scored.missing[:10]) + (" …" if len(scored.missing) > 10 else "")
        print(
            f"lme-bench: {len(scored.missing)} questions of {args.dataset} have no answer in"
            f" {args.file} ({shown}); the figures are over the answered ones",
            file=sys.stderr,
        )
        code = 0 if args.allow_missing else EXIT_INCOMPLETE
    if scored.failed:
        print(
            f"lme-bench: judging failed for {len(scored.failed)} questions:"
            f" {', '.join(scored.failed[:10])}",
            file=sys.stderr,
        )
        code = EXIT_INCOMPLETE
    return code
