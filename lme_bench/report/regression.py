"""The regression gate in words: the one line a regressed run ends with ("regressed: QA
overall -14.7 pt [-26.5, -2.9] vs run-…", with true minus signs), and the banner summary.md
and report.html lead with, from the summary's `baseline` record (lme_bench.run.baseline)."""

from __future__ import annotations

import re
from html import escape
from typing import Any

from lme_bench.compare.gate import FigureChange, GateVerdict

MINUS = "\u2212"
RULE = (
    "a watched figure regressed when the paired 95% interval of its change lies wholly below"
    " zero and it fell at least {min_drop:g} points ([regression])"
)


def _points(value: float) -> str:
    return f"{100 * value:+.1f}".replace("-", MINUS)


def _interval(ci: list[float] | tuple[float, float] | None) -> str:
    if ci is None:
        return "(no interval)"
    low, high = _points(ci[0]), _points(ci[1])
    return f"(no spread, {low})" if low == high else f"[{low}, {high}]"


def change_words(label: str, delta: float, ci: Any) -> str:
    """`QA overall -14.7 pt [-26.5, -2.9]` (minus signs as MINUS)."""
    return f"{label} {_points(delta)} pt {_interval(ci)}"


def figure_record(change: FigureChange) -> dict[str, Any]:
    p = change.paired
    return {
        "name": change.name,
        "label": change.label,
        "n": p.n,
        "baseline": p.a,
        "run": p.b,
        "delta": p.delta,
        "ci95": list(p.ci95) if p.ci95 is not None else None,
        "fell": change.fell,
    }


def regression_message(verdict: GateVerdict) -> str:
    """The verdict in one line: what fell, by how much, with its interval, and the baseline."""
    if verdict.regressed:
        fallen = ", ".join(
            change_words(c.label, c.paired.delta or 0.0, c.paired.ci95) for c in verdict.fallen
        )
        return f"regressed: {fallen} vs {verdict.baseline}"
    watched = "; ".join(
        change_words(c.label, c.paired.delta or 0.0, c.paired.ci95) for c in verdict.changes
    )
    return f"no regression vs {verdict.baseline}" + (f": {watched}" if watched else "")


def _figure_line(figure: dict[str, Any]) -> str:
    before, after = figure.get("baseline"), figure.get("run")
    shown = (
        f"; {100 * before:.1f}% → {100 * after:.1f}%"
        if before is not None and after is not None
        else ""
    )
    words = change_words(figure["label"], figure["delta"], figure.get("ci95"))
    return f"{words} (paired n = {figure['n']}{shown})"


def _details(record: dict[str, Any]) -> tuple[str, str]:
    """The lead word of the banner and the sentence after it."""
    status, baseline = record["status"], record.get("run_id")
    if status == "no_baseline":
        return "No baseline yet", record["message"].removeprefix("no baseline yet: ") + "."
    if status == "not_compared":
        return "Not compared", record["message"] + "."
    fallen = [f for f in record.get("figures") or [] if f.get("fell")]
    shown = fallen if status == "regressed" else record.get("figures") or []
    figures = "; ".join(_figure_line(f) for f in shown) or "no watched figure in both runs"
    missing = record.get("not_measured") or []
    tail = f" Not in both runs: {', '.join(missing)}." if missing else ""
    rule = RULE.format(min_drop=record.get("min_drop", 2.0))
    lead = "Regressed" if status == "regressed" else "No regression"
    return lead, f"against `{baseline}`{_whose(record)}: {figures}. Rule: {rule}.{tail}"


def _whose(record: dict[str, Any]) -> str:
    if record.get("compare_to") == "previous":
        return f" (the previous run of series {record.get('series')})"
    return ""


def baseline_markdown(record: dict[str, Any]) -> str:
    """The banner summary.md leads with."""
    lead, text = _details(record)
    return f"**{lead}** {text}" if lead in ("Regressed", "No regression") else f"**{lead}**: {text}"


def baseline_html(record: dict[str, Any] | None) -> str:
    """The banner report.html leads with ("" without a baseline record)."""
    if not record:
        return ""
    lead, text = _details(record)
    css = ' class="wrong"' if record["status"] == "regressed" else ""
    sep = " " if lead in ("Regressed", "No regression") else ": "
    shown = re.sub(r"`([^`]+)`", r"<code>\1</code>", escape(text))
    return f'<p id="baseline"{css}><b>{escape(lead)}</b>{sep}{shown}</p>'


def with_baseline(markdown: str, record: dict[str, Any] | None) -> str:
    """summary.md with the baseline banner as the first paragraph after its title."""
    if not record:
        return markdown
    title, _, rest = markdown.partition("\n\n")
    return f"{title}\n\n{baseline_markdown(record)}\n\n{rest}"
