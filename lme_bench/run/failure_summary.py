"""The failed run's message: its failures grouped by stage and cause with counts (`answer`,
the multiplication sign, `34`, then the cause), then the question ids it shows and how many it
leaves out:

    34 question(s) failed: answer \N{MULTIPLICATION SIGN} 34: OpenAIConnectionError: Connection
    error. (reader local:tiny at http://127.0.0.1:18099/v1); ids: q01, …, q20 and 14 more
    (manifest.json's failed_question_ids lists them all)
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence

TIMES = "\N{MULTIPLICATION SIGN}"
SHOWN_IDS = 20
SHOWN_CAUSES = 3
_ORIGIN = re.compile(r" \(at [^()]*:\d+ in [^()]*\)")  # lme_bench.run.failure_origin.with_origin
# wrappers that carry the cause in their text: a stage's failure rows, an ingestion's failure
_WRAPPERS = ("StageFailed: ", "not answered: ingestion failed: ")


def cause_of(error: str) -> str:
    """An error's text as failures of the same cause share it: without where it was raised
    (questions of one cause fail at the same line, or at lines of one call) and the wrappers
    that repeat it; the first of several row errors."""
    text = error.strip() or "failed"
    changed = True
    while changed:
        changed = False
        for wrapper in _WRAPPERS:
            if text.startswith(wrapper):
                text, changed = text[len(wrapper) :], True
    text = _ORIGIN.sub("", text).split("; ")[0]
    return text.strip() or "failed"


def grouped_failures(failed: Sequence[str], errors: Mapping[str, str],
                     stages: Mapping[str, str]) -> str:  # fmt: skip
    """`<stage> TIMES <count>: <cause>` per group, `; ` between, the most common first, at
    most SHOWN_CAUSES groups (then how many more causes)."""
    counts = Counter((stages.get(q, "report"), cause_of(errors.get(q, "failed"))) for q in failed)
    groups = counts.most_common()
    text = "; ".join(f"{stage} {TIMES} {n}: {cause}" for (stage, cause), n in groups[:SHOWN_CAUSES])
    left = groups[SHOWN_CAUSES:]
    if left:
        text += f"; {len(left)} more cause(s) ({sum(n for _, n in left)} question(s))"
    return text


def failure_message(failed: Sequence[str], errors: Mapping[str, str],
                    stages: Mapping[str, str]) -> str:  # fmt: skip
    """How many questions failed, why (grouped), and which: the first SHOWN_IDS ids and how
    many more there are."""
    ids = ", ".join(failed[:SHOWN_IDS])
    more = len(failed) - SHOWN_IDS
    if more > 0:
        ids += f" and {more} more (manifest.json's failed_question_ids lists them all)"
    return (
        f"{len(failed)} question(s) failed: {grouped_failures(failed, errors, stages)}; ids: {ids}"
    )
