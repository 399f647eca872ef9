"""The per-question stages, in one table: what each is called, the module that runs it, what
it is given, and which settings its cached results depend on.

The stage names, the stage before each one, the order the scheduler serves them in, the name
its task takes its input by and the settings its cache key hashes (lme_bench.run.cache_keys)
all come from here. A stage's key hashes the whole settings section the stage reads except
the fields listed as not hashed (each changing none of its results), so a setting added to the
section is in the key without anyone having to add it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lme_bench.config.run_section import Stage
from lme_bench.config.settings import Settings

# Whether a stage's requests go through a batch API changes no result (the same requests).
HOW_SENT = frozenset({"batch", "batch_poll_s"})


@dataclass(frozen=True, slots=True)
class StageSpec:
    name: Stage
    entry: str  # the module holding the stage's function (its code closure is in its key)
    upstream: Stage | None  # the stage whose result it is given; None: the located memory
    given_as: str  # the parameter its task takes that result by
    section: str  # the settings section the stage reads
    not_hashed: frozenset[str] = frozenset()  # fields of the section that change no result
    # its key (and its task) also take the ingestion behind its input: a memory filled again
    # redoes it even where the stages between come out the same
    takes_ingestion: bool = False

    def section_settings(self, settings: Settings) -> dict[str, Any]:
        """The section's fields the stage's cache key hashes: every one but `not_hashed`."""
        section = getattr(settings, self.section)
        dumped: dict[str, Any] = section.model_dump(mode="json", exclude=set(self.not_hashed))
        return dumped


STAGE_TABLE: tuple[StageSpec, ...] = (
    StageSpec("ingest", "lme_bench.ingest.question", None, "location", "ingest"),
    StageSpec("retrieval", "lme_bench.retrieval.stage", "ingest", "outcome", "retrieval"),
    StageSpec(
        "answer",
        "lme_bench.qa.stage",
        "ingest",
        "outcome",
        "qa",
        frozenset({"prompts_dir", *HOW_SENT}),  # the prompts' contents are hashed instead
    ),
    StageSpec(
        "judge",
        "lme_bench.judge.stage",
        "answer",
        "hypothesis",
        "judge",
        # the prompts' contents are hashed instead, BEAM's checkout by its files' digests
        frozenset({"prompts_dir", "beam_repo", *HOW_SENT}),
        takes_ingestion=True,
    ),
)

STAGES: dict[str, StageSpec] = {spec.name: spec for spec in STAGE_TABLE}
PER_QUESTION: tuple[Stage, ...] = tuple(spec.name for spec in STAGE_TABLE)  # pipeline order
# The scheduler serves later stages first, so questions finish (and show) early.
SERVE_ORDER: tuple[Stage, ...] = tuple(reversed(PER_QUESTION))


def stage_spec(stage: str) -> StageSpec:
    found = STAGES.get(stage)
    if found is None:
        raise ValueError(f"no per-question stage {stage!r}")
    return found
