"""Judge profiles in words: the calibration table `lme-bench judge calibrate` prints, and the
lines a run judged by a successor shows beside its accuracy (summary.md, report.html, the
Prefect UI)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lme_bench.dataset.models import QUESTION_TYPES
from lme_bench.report.labels import percent


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _span(ci: Sequence[float] | None, shown: Any = _number) -> str:
    return "-" if ci is None else f"[{shown(ci[0])}, {shown(ci[1])}]"


def _signed(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:+.1f} pt"


def _disagreement(part: dict[str, Any]) -> str:
    return f"{part['count']} ({percent(part['rate'])})"


_HEADER = (
    "| question type | n | agreement | κ | κ 95% interval | ref yes → cand no | "
    "ref no → cand yes | reference accuracy | candidate accuracy | difference | "
    "difference 95% interval |"
)


def calibration_table(figures: dict[str, Any]) -> list[str]:
    """Per question type (official order) and overall, as a Markdown table."""
    per_type = figures["per_type"]
    order = [t for t in QUESTION_TYPES if t in per_type] + sorted(
        set(per_type) - set(QUESTION_TYPES)
    )
    lines = [_HEADER, "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---|"]
    for name, group in [*((t, per_type[t]) for t in order), ("overall", figures["overall"])]:
        lines.append(
            f"| {name} | {group['n']} | {percent(group['agreement'])} | "
            f"{_number(group['kappa'])} | {_span(group['kappa_ci95'])} | "
            f"{_disagreement(group['reference_yes_candidate_no'])} | "
            f"{_disagreement(group['reference_no_candidate_yes'])} | "
            f"{percent(group['reference_accuracy'])} | {percent(group['candidate_accuracy'])} | "
            f"{_signed(group['accuracy_difference'])} | "
            f"{_span(group['accuracy_difference_ci95'], _signed)} |"
        )
    return lines


def calibration_markdown(profile: dict[str, Any], path: str) -> str:
    """The profile as the calibrate command prints it."""
    reference, prompts = profile["reference"], profile["prompts"]
    failed = profile["failed"]
    lines = [
        f"## Judge {profile['candidate']['judge']} against {reference['judge_model']}",
        "",
        f"Reference: {reference['path']} ({reference['kind']}, sha256 "
        f"{reference['sha256'][:12]}…"
        + (
            f", judged with prompts {reference['prompt_version']}"
            if reference["prompt_version"]
            else ""
        )
        + f"); candidate prompts: {prompts['version']} ({prompts['description']}).",
        "",
        *calibration_table(profile["figures"]),
        "",
        f"Rates: ref yes → cand no of the reference's yes; ref no → cand yes of its no. "
        f"Difference: candidate minus reference accuracy. Intervals: 95%, percentile "
        f"bootstrap over questions within each type ({profile['bootstrap']['resamples']} "
        f"resamples, seed {profile['bootstrap']['seed']}).",
        "",
    ]
    if failed["n"]:
        shown = ", ".join(failed["question_ids"][:20]) + (" …" if failed["n"] > 20 else "")
        lines.append(
            f"**{failed['n']} question(s) left out**: the candidate's call failed after its "
            f"retries ({shown}).\n"
        )
    table = profile["figures"]["overall"]["table"]
    for kind, cells in (("yes", ("both_yes", "reference_yes_candidate_no")),
                        ("no", ("both_no", "reference_no_candidate_yes"))):  # fmt: skip
        if not sum(table[c] for c in cells):
            lines.append(
                f"The reference gave no {kind} verdict: the rate of disagreement on its "
                f"{kind} verdicts cannot be measured, and no run can be corrected through "
                "this profile.\n"
            )
    if not prompts["official"]:
        lines.append(
            "The candidate judged with prompts that are not the official ones; the "
            "differences include the prompts' as well as the model's.\n"
        )
    lines += [f"profile: {path}", ""]
    return "\n".join(lines)


def successor_facts(record: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, value) pairs for a run judged by a successor with a profile."""
    estimate = record["estimate"]
    kappa = _number(record["kappa"])
    if record.get("kappa_ci95"):
        kappa += f" {_span(record['kappa_ci95'])}"
    value = percent(estimate["accuracy"])
    if estimate["accuracy"] is None:
        value = "not estimable (the profile's rates do not separate yes from no)"
    elif estimate["ci95"] is not None:
        value += f", 95% interval {_span(estimate['ci95'], percent)}"
    return [
        ("judge", f"{record['judge']} (not the official {record['reference_judge']})"),
        (
            f"agreement with {record['reference_judge']}",
            f"{percent(record['agreement'])}, κ {kappa}, over {record['calibration_n']} "
            "calibration questions",
        ),
        (f"estimated {record['reference_judge']} accuracy (overall)", value),
        ("judge profile", f"{record['path']} (sha256 {record['sha256'][:12]}…)"),
    ]


def successor_markdown(record: dict[str, Any]) -> list[str]:
    """summary.md's lines under the judge's accuracy table."""
    dropped = record["estimate"]["resamples_dropped"]
    lines = [f"- {name}: {value}" for name, value in successor_facts(record)]
    note = f"The estimate is {record['estimate']['note']}."
    if dropped:
        note += f" {dropped} bootstrap resamples whose rates did not separate were left out."
    return ["**Judged by a successor judge**:", "", *lines, "", note, ""]


def successor_words(record: dict[str, Any] | None) -> str:
    """For the run's headline: who judged and the estimate, when a successor judged."""
    if record is None:
        return ""
    estimate = record["estimate"]["accuracy"]
    shown = "not estimable" if estimate is None else percent(estimate)
    return (
        f" by {record['judge']}, not the official judge (estimated "
        f"{record['reference_judge']} accuracy: {shown})"
    )
