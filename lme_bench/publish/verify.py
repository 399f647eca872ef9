"""`lme-bench verify`: a bundle's files against its manifest, its signature, the dataset, and
its figures computed again from its own rows (and by the official printer when a checkout is
named). Every problem is named; none means the bundle holds."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lme_bench.benchmarks.scoring_hooks import BenchmarkScoring
from lme_bench.dataset.shards import file_sha256, folder_sha256
from lme_bench.publish.archive import read_members
from lme_bench.publish.errors import PublishError
from lme_bench.publish.figures import (
    Tables,
    bundle_scoring,
    bundle_tables,
    differences,
    summary_of,
)
from lme_bench.publish.pack import MANIFEST, SIGNATURE
from lme_bench.publish.sections import has_section, section_again
from lme_bench.publish.signing import check_signature
from lme_bench.results.run_summary import RunSummary

# A further check of a bundle that holds (`verify --rejudge`): its members, BUNDLE.json and
# summary in, its problems and what holds out.
Check = Callable[[Mapping[str, bytes], dict[str, Any], RunSummary], tuple[list[str], list[str]]]


@dataclass
class Verdict:
    problems: list[str] = field(default_factory=list)
    held: list[str] = field(default_factory=list)  # what was checked and holds, in words
    unchecked: list[str] = field(default_factory=list)  # checks left aside, and why

    @property
    def ok(self) -> bool:
        return not self.problems


def _files(members: dict[str, bytes], record: dict[str, Any], verdict: Verdict) -> None:
    listed: dict[str, Any] = record.get("files") or {}
    before = len(verdict.problems)
    for name, digest in sorted(listed.items()):
        if name not in members:
            verdict.problems.append(f"{name}: missing from the bundle")
        elif hashlib.sha256(members[name]).hexdigest() != digest.get("sha256"):
            verdict.problems.append(f"{name}: changed (its sha256 is not {MANIFEST}'s)")
    for name in sorted(set(members) - set(listed) - {MANIFEST, SIGNATURE}):
        verdict.problems.append(f"{name}: added (not in {MANIFEST})")
    if len(verdict.problems) == before:
        verdict.held.append(f"{len(listed)} files, each as {MANIFEST} lists it")


def _signature(members: dict[str, bytes], required: bool, verdict: Verdict) -> None:
    if SIGNATURE not in members:
        if required:
            verdict.problems.append(f"{SIGNATURE}: the bundle is unsigned")
        else:
            verdict.held.append("unsigned (no BUNDLE.sig): nobody vouches for it")
        return
    signer, why = check_signature(members[MANIFEST], members[SIGNATURE])
    if signer is None:
        verdict.problems.append(why)
    else:
        verdict.held.append(f"signed by the Ed25519 key with fingerprint {signer}")


def _dataset(record: dict[str, Any], dataset: Path, verdict: Verdict) -> bool:
    expected = (record.get("dataset") or {}).get("sha256")
    found = folder_sha256(dataset) if dataset.is_dir() else file_sha256(dataset)
    if found != expected:
        verdict.problems.append(
            f"{dataset}: not the run's dataset (sha256 {found}, the bundle's {expected})"
        )
        return False
    verdict.held.append(f"{dataset.name}: the run's dataset (sha256 {expected})")
    return True


def _official(
    summary: RunSummary,
    members: Mapping[str, bytes],
    scoring: BenchmarkScoring,
    repo: Path,
    dataset: Path | None,
    verdict: Verdict,
) -> None:
    """The benchmark's official code on the bundle (its `official_check` hook)."""
    if scoring.official_check is None:
        verdict.problems.append(
            f"--official-repo: {summary.benchmark} has no official check (no official_check hook)"
        )
        return
    problems, held = scoring.official_check(members, summary, repo, dataset)
    verdict.problems += problems
    verdict.held += [held] if held else []


def _section(
    summary: RunSummary,
    members: Mapping[str, bytes],
    tables: Tables,
    scoring: BenchmarkScoring,
    dataset: Path | None,
    same_dataset: bool,
    verdict: Verdict,
) -> dict[str, Any] | None:
    """The benchmark's own section computed again, where it has one and the run's dataset is
    given; what is left aside is said."""
    if not has_section(summary, scoring):
        return None
    name = summary.benchmark
    if not same_dataset:
        why = "the dataset's gold (--dataset)" if dataset is None else "the run's dataset"
        verdict.unchecked.append(f"summary.json's {name} section: its figures need {why}")
        return None
    assert dataset is not None
    try:
        return section_again(summary, members, tables, scoring, dataset)
    except Exception as exc:  # a table or setting changed past reading: named, no traceback
        verdict.problems.append(f"summary.json's {name} section cannot be computed again: {exc}")
        return None


def _figures(
    summary: RunSummary,
    members: Mapping[str, bytes],
    scoring: BenchmarkScoring,
    dataset: Path | None,
    same_dataset: bool,
    verdict: Verdict,
) -> None:
    """summary.json's figures against the bundle's rows (read once), the benchmark's own
    section among them where the run's dataset is given."""
    try:
        tables = bundle_tables(members)
    except Exception as exc:  # a table changed past reading: named, never a traceback
        verdict.problems.append(f"the figures cannot be computed from the rows: {exc}")
        return
    section = _section(summary, members, tables, scoring, dataset, same_dataset, verdict)
    try:
        found, compared = differences(summary, tables, scoring, section)
    except Exception as exc:  # rows that read but give no figures: named, never a traceback
        verdict.problems.append(f"the figures cannot be computed from the rows: {exc}")
        return
    verdict.problems += found
    if not found:
        given = " and the dataset's gold" if section is not None else ""
        verdict.held.append(f"{compared} figures of summary.json, each as its rows{given} give it")


def verify_bundle(
    bundle: Path | str,
    dataset: Path | None = None,
    official_repo: Path | None = None,
    require_signature: bool = False,
    further: Check | None = None,
) -> Verdict:
    return verify_members(
        bundle, read_members(bundle), dataset, official_repo, require_signature, further
    )


def verify_members(
    bundle: Path | str,
    members: dict[str, bytes],
    dataset: Path | None = None,
    official_repo: Path | None = None,
    require_signature: bool = False,
    further: Check | None = None,
) -> Verdict:
    """`verify_bundle` on a bundle's members already read (`bundle`: its path or URL, for
    errors); `further` runs last, only on a bundle that holds so far (nothing is spent on one
    that does not)."""
    if MANIFEST not in members:
        raise PublishError(f"{bundle}: no {MANIFEST}; not an lme-bench bundle")
    try:
        record: dict[str, Any] = json.loads(members[MANIFEST])
    except ValueError as exc:
        raise PublishError(f"{bundle}: {MANIFEST} is not JSON ({exc})") from exc
    verdict = Verdict()
    _files(members, record, verdict)
    _signature(members, require_signature, verdict)
    same_dataset = dataset is not None and _dataset(record, dataset, verdict)
    try:
        summary = summary_of(Path("summary.json"), members["summary.json"])
    except KeyError:
        verdict.problems.append("summary.json: not in the bundle")
        return verdict
    except PublishError as exc:
        verdict.problems.append(str(exc))
        return verdict
    scoring = bundle_scoring(summary, members)
    _figures(summary, members, scoring, dataset, same_dataset, verdict)
    if official_repo is not None:
        _official(summary, members, scoring, official_repo, dataset, verdict)
    if further is not None:
        if verdict.problems:
            verdict.unchecked.append("--rejudge: not judged again, as the bundle does not hold")
        else:
            problems, holding = further(members, record, summary)
            verdict.problems += problems
            verdict.held += holding
    return verdict
