"""Check that two run folders hold the same results, timing and identity aside.

    python scripts/compare_runs.py BASE_RUN_DIR NEW_RUN_DIR [--tolerance 1e-9] [--ignore COLUMN]

For a change that promises the same rankings, answers and figures (a refactoring, a dependency
upgrade): run one config before and after, then compare the two run folders.

- Every Parquet table (retrieval, ingest, hypotheses, scores, ...): rows matched by their key
  (question_id plus granularity, session_index, judge and repeat where the table has them), then
  every shared column compared cell by cell. Timing and identity columns (seconds, run_id,
  started_at, memory and vault ids, ...) are skipped; columns only one side has are listed as
  added or removed, not counted as differences.
- summary.json (the headline metrics) and the figures of manifest.json (ingestion totals, entries
  per memory, failed questions, errors, models, prompts, search mode), timing and identity aside.
  The recorded config is shown when it differs but not counted: a restructuring may respell it.
- The official JSON-lines files (hypotheses.jsonl and its judged copies), by question_id.
- The figures of summary.md's tables, row by row, whatever their wording (headers, labels);
  the rest of its text, run ids, durations and ids masked, is shown when it differs but not
  counted (the same figures are in summary.json and manifest.json).

Exit status: 0 the same, 1 some difference, 2 a folder that is not a run folder.
"""

from __future__ import annotations

import argparse
import difflib
import json
import math
import re
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

KEY_COLUMNS = ("question_id", "granularity", "session_index", "judge", "repeat")
IDENTITY_COLUMNS = frozenset(
    {
        "run_id",
        "started_at",
        "finished_at",
        "memory_id",
        "memory_ids",
        "ingestion_id",
        "vault",
        "vault_id",
        "vault_ids",
    }
)
# Top-level manifest keys that describe the run's identity, place or environment, not its results.
MANIFEST_SKIPPED = frozenset(
    {
        "run_id",
        "request",
        "memories",
        "memory_titles",
        "started_at",
        "finished_at",
        "git",
        "python",
        "platform",
        "packages",
    }
)
MANIFEST_SKIPPED_PATHS = frozenset(
    {"dataset.path", "code_version", "schedule.flow_run_id", "schedule.scheduled_start"}
)
# Timing leaves of summary.json: search latencies in seconds and how many searches waited, and
# the headline's durations.
TIMING_PATH = re.compile(r"^search_latency\.(\w+_s|waited)$")
CONFIG_SKIPPED_PATHS = frozenset({"run.id", "run.results_dir"})
MAX_EXAMPLES = 5
MAX_WORDING_LINES = 40

_MASKS = (
    (re.compile(r"\b\d{4}-\d\d-\d\dT[\d:.]+(?:[+-]\d\d:\d\d|Z)?"), "<time>"),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"), "<uuid>"),
    (re.compile(r"\blme-[0-9a-f]{40}\b"), "<vault>"),
    (re.compile(r"\b\d+(?:\.\d+)?\s?(?:s|ms|sec|seconds|min|minutes)\b"), "<duration>"),
    (re.compile(r"\b\d+:\d\d(?::\d\d)?\b"), "<clock>"),
)


@dataclass
class Section:
    """What one compared file showed: differences fail the comparison, notes do not."""

    name: str
    differences: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    counted: bool = True  # False: shown when it differs, never a failure


def is_ignored(column: str, extra: frozenset[str]) -> bool:
    return (
        column in IDENTITY_COLUMNS
        or column in extra
        or column.endswith("seconds")
        or column.endswith("_at")
    )


def normalized(value: Any) -> Any:
    """Parquet maps come back as lists of pairs: make them dicts, whose order does not count."""
    if isinstance(value, list):
        if value and all(isinstance(item, tuple) and len(item) == 2 for item in value):
            return {str(key): normalized(item) for key, item in value}
        return [normalized(item) for item in value]
    if isinstance(value, dict):
        return {str(key): normalized(item) for key, item in value.items()}
    return value


def same(left: Any, right: Any, tolerance: float) -> bool:
    if isinstance(left, float) and isinstance(right, float):
        if math.isnan(left) or math.isnan(right):
            return math.isnan(left) and math.isnan(right)
        return math.isclose(left, right, rel_tol=tolerance, abs_tol=tolerance)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(
            same(a, b, tolerance) for a, b in zip(left, right, strict=True)
        )
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(same(left[k], right[k], tolerance) for k in left)
    return bool(type(left) is type(right) and left == right)


def shown(value: Any, limit: int = 160) -> str:
    text = json.dumps(value, default=str, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def shown_key(key: tuple[Any, ...]) -> str:
    """A row key, with its occurrence number only when the key repeats."""
    return shown(list(key[:-1]) if key[-1] == 0 else list(key))


def contrast(base: Any, new: Any) -> str:
    """Two differing values; for lists, where they part and their lengths."""
    if isinstance(base, list) and isinstance(new, list):
        at = next(
            (i for i, (a, b) in enumerate(zip(base, new, strict=False)) if a != b),
            min(len(base), len(new)),
        )
        part = f"first difference at [{at}] of {len(base)} base / {len(new)} new items"
        return f"{part}: base {shown(base[at : at + 3])} | new {shown(new[at : at + 3])}"
    return f"base {shown(base)} | new {shown(new)}"


def keyed_rows(
    rows: list[dict[str, Any]], keys: Sequence[str]
) -> dict[tuple[Any, ...], dict[str, Any]]:
    """Rows by key; a key that repeats gets its occurrence number, in file order."""
    seen: Counter[tuple[Any, ...]] = Counter()
    keyed = {}
    for row in rows:
        key = tuple(row[name] for name in keys)
        keyed[(*key, seen[key])] = row
        seen[key] += 1
    return keyed


def compare_table(
    name: str, base_path: Path, new_path: Path, tolerance: float, extra: frozenset[str]
) -> Section:
    section = Section(name)
    base_rows = pq.read_table(base_path).to_pylist()
    new_rows = pq.read_table(new_path).to_pylist()
    base_columns = pq.read_schema(base_path).names
    new_columns = pq.read_schema(new_path).names
    keys = [column for column in KEY_COLUMNS if column in base_columns and column in new_columns]
    compared = [c for c in base_columns if c in new_columns and not is_ignored(c, extra)]
    ignored = [c for c in base_columns if c in new_columns and is_ignored(c, extra)]
    section.notes.append(
        f"{len(base_rows)} rows base, {len(new_rows)} new; key ({', '.join(keys) or 'row order'});"
        f" ignored: {', '.join(ignored) or 'none'}"
    )
    if added := [c for c in new_columns if c not in base_columns]:
        section.notes.append(f"added columns (new only): {', '.join(added)}")
    if removed := [c for c in base_columns if c not in new_columns]:
        section.notes.append(f"removed columns (base only): {', '.join(removed)}")
    base_keyed = keyed_rows(base_rows, keys)
    new_keyed = keyed_rows(new_rows, keys)
    for label, only in (
        ("base only", [k for k in base_keyed if k not in new_keyed]),
        ("new only", [k for k in new_keyed if k not in base_keyed]),
    ):
        if only:
            examples = "; ".join(shown_key(k) for k in only[:MAX_EXAMPLES])
            section.differences.append(f"{len(only)} rows {label}, e.g. {examples}")
    for column in compared:
        differing = [
            (key, base_keyed[key][column], new_keyed[key][column])
            for key in base_keyed
            if key in new_keyed
            and not same(
                normalized(base_keyed[key][column]), normalized(new_keyed[key][column]), tolerance
            )
        ]
        if differing:
            section.differences.append(f"column {column}: {len(differing)} rows differ")
            for key, base_value, new_value in differing[:MAX_EXAMPLES]:
                section.differences.append(
                    f"  {shown_key(key)}: {contrast(normalized(base_value), normalized(new_value))}"
                )
    return section


def flattened(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """Leaves of a JSON document by dotted path; lists of objects are indexed."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from flattened(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list) and any(isinstance(item, dict | list) for item in value):
        for index, item in enumerate(value):
            yield from flattened(item, f"{path}[{index}]")
    else:
        yield path, value


def compare_figures(
    name: str,
    base: dict[str, Any],
    new: dict[str, Any],
    tolerance: float,
    extra: frozenset[str],
    skipped_paths: frozenset[str] = frozenset(),
) -> Section:
    """Leaf by leaf, timing and identity leaves aside; leaves only one side has are notes."""
    section = Section(name)

    def kept(document: dict[str, Any]) -> dict[str, Any]:
        return {
            path: leaf
            for path, leaf in flattened(document)
            if path not in skipped_paths
            and not TIMING_PATH.match(path)
            and not is_ignored(re.split(r"[.\[]", path)[-1].rstrip("]"), extra)
        }

    base_leaves, new_leaves = kept(base), kept(new)
    if added := [path for path in new_leaves if path not in base_leaves]:
        section.notes.append(f"added (new only): {', '.join(added)}")
    if removed := [path for path in base_leaves if path not in new_leaves]:
        section.notes.append(f"removed (base only): {', '.join(removed)}")
    for path, base_leaf in base_leaves.items():
        new_leaf = new_leaves.get(path)
        if isinstance(base_leaf, str) and isinstance(new_leaf, str):
            base_leaf, new_leaf = masked(base_leaf), masked(new_leaf)
        if path in new_leaves and not same(base_leaf, new_leaf, tolerance):
            section.differences.append(
                f"{path}: base {shown(base_leaf)} | new {shown(new_leaves[path])}"
            )
    return section


def parsed_number(cell: str) -> float | None:
    try:
        return float(cell.replace(",", "").rstrip("%"))
    except ValueError:
        return None


def table_figures(lines: Sequence[str]) -> list[tuple[str, tuple[float, ...]]]:
    """The numeric cells of each Markdown table row, with the row's first cell as its label."""
    rows = []
    for line in lines:
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not line.startswith("|") or not cells:
            continue
        numbers = [parsed_number(cell) for cell in cells[1:]]
        figures = tuple(number for number in numbers if number is not None)
        if figures:
            rows.append((cells[0], figures))
    return rows


def compare_table_figures(
    base_md: Sequence[str], new_md: Sequence[str], tolerance: float
) -> Section:
    """The figures of summary.md's tables, row by row in order, whatever their wording: rows the
    new summary lacks or changed are differences, rows it adds are notes."""
    section = Section("summary.md figures")
    base_rows, new_rows = table_figures(base_md), table_figures(new_md)
    matcher = difflib.SequenceMatcher(
        a=[figures for _, figures in base_rows],
        b=[figures for _, figures in new_rows],
        autojunk=False,
    )
    section.notes.append(f"{len(base_rows)} table rows with figures base, {len(new_rows)} new")
    for operation, i1, i2, j1, j2 in matcher.get_opcodes():
        if operation == "equal":
            continue
        pairs = list(zip(base_rows[i1:i2], new_rows[j1:j2], strict=False))
        if (
            operation == "replace"
            and len(pairs) == i2 - i1 == j2 - j1
            and all(same(list(a[1]), list(b[1]), tolerance) for a, b in pairs)
        ):
            continue  # the same figures, within the tolerance
        for label, figures in base_rows[i1:i2]:
            section.differences.append(f"- {label}: {shown(list(figures))}")
        lines = [f"+ {label}: {shown(list(figures))}" for label, figures in new_rows[j1:j2]]
        (section.differences if operation == "replace" else section.notes).extend(lines)
    return section


def masked(text: str) -> str:
    """`text` with its times, ids and durations masked."""
    for pattern, mask in _MASKS:
        text = pattern.sub(mask, text)
    return text


def masked_lines(text: str, run_id: str) -> list[str]:
    lines = []
    for line in text.splitlines():
        if run_id:
            line = line.replace(run_id, "<run_id>")
        for pattern, mask in _MASKS:
            line = pattern.sub(mask, line)
        if not line.startswith("results: "):  # the run folder's path
            lines.append(line)
    return lines


def read_json(path: Path) -> dict[str, Any]:
    document = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(document, dict):
        raise SystemExit(f"{path}: expected a JSON object")
    return document


def read_json_lines(path: Path) -> dict[str, Any]:
    """The official JSON-lines files (hypotheses, judged hypotheses) by question_id."""
    records = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            record = json.loads(line)
            key = record.get("question_id") if isinstance(record, dict) else None
            records[str(key) if key is not None else f"line {number}"] = record
    return records


def compare_runs(
    base: Path, new: Path, tolerance: float, extra: frozenset[str]
) -> Iterator[Section]:
    base_manifest = read_json(base / "manifest.json")
    new_manifest = read_json(new / "manifest.json")
    base_tables = {path.name for path in base.glob("*.parquet")}
    new_tables = {path.name for path in new.glob("*.parquet")}
    for table in sorted(base_tables | new_tables):
        if table in base_tables and table in new_tables:
            yield compare_table(table, base / table, new / table, tolerance, extra)
        else:
            side = "base" if table in base_tables else "new"
            yield Section(table, differences=[f"only the {side} run has this table"])
    base_lines = {path.name for path in base.glob("*.jsonl*")}
    new_lines = {path.name for path in new.glob("*.jsonl*")}
    for name in sorted(base_lines | new_lines):
        if name in base_lines and name in new_lines:
            yield compare_figures(
                name, read_json_lines(base / name), read_json_lines(new / name), tolerance, extra
            )
        else:
            side = "base" if name in base_lines else "new"
            yield Section(name, differences=[f"only the {side} run has this file"])
    if (base / "summary.json").is_file() or (new / "summary.json").is_file():
        if (base / "summary.json").is_file() and (new / "summary.json").is_file():
            yield compare_figures(
                "summary.json",
                read_json(base / "summary.json"),
                read_json(new / "summary.json"),
                tolerance,
                extra,
            )
        else:
            yield Section("summary.json", differences=["only one run has summary.json"])
    yield compare_figures(
        "manifest.json",
        {k: v for k, v in base_manifest.items() if k not in MANIFEST_SKIPPED | {"config"}},
        {k: v for k, v in new_manifest.items() if k not in MANIFEST_SKIPPED | {"config"}},
        tolerance,
        extra,
        MANIFEST_SKIPPED_PATHS,
    )
    config = compare_figures(
        "manifest.json config (not counted)",
        base_manifest.get("config", {}),
        new_manifest.get("config", {}),
        tolerance,
        extra,
        CONFIG_SKIPPED_PATHS,
    )
    yield Section(config.name, notes=config.notes + config.differences, counted=False)
    base_md = masked_lines(
        (base / "summary.md").read_text(encoding="utf-8"), str(base_manifest.get("run_id", ""))
    )
    new_md = masked_lines(
        (new / "summary.md").read_text(encoding="utf-8"), str(new_manifest.get("run_id", ""))
    )
    yield compare_table_figures(base_md, new_md, tolerance)
    diff = list(difflib.unified_diff(base_md, new_md, "base", "new", lineterm="", n=0))
    wording = [line for line in diff if line[:3] not in {"---", "+++"}]
    if len(wording) > MAX_WORDING_LINES:
        wording = [*wording[:MAX_WORDING_LINES], f"... {len(wording) - MAX_WORDING_LINES} more"]
    yield Section("summary.md wording (not counted)", notes=wording, counted=False)


def print_report(sections: Sequence[Section]) -> int:
    """Print each section and a verdict; the number of differing sections."""
    failed = 0
    for section in sections:
        verdict = "DIFFERENT" if section.differences else "same"
        if not section.counted and section.notes:
            verdict = "differs, not counted"
        failed += bool(section.differences)
        print(f"== {section.name}: {verdict}")
        for line in [*section.notes, *section.differences]:
            print(f"   {line}")
    return failed


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("base", type=Path, help="the run folder before the change")
    parser.add_argument("new", type=Path, help="the run folder after the change")
    parser.add_argument(
        "--tolerance", type=float, default=1e-9, help="float tolerance (relative and absolute)"
    )
    parser.add_argument(
        "--ignore", action="append", default=[], metavar="COLUMN", help="another column to skip"
    )
    args = parser.parse_args(argv)
    for folder in (args.base, args.new):
        if not (folder / "manifest.json").is_file() or not (folder / "summary.md").is_file():
            print(f"{folder}: not a run folder (no manifest.json or summary.md)", file=sys.stderr)
            return 2
    print(f"base: {args.base}\nnew:  {args.new}")
    sections = list(compare_runs(args.base, args.new, args.tolerance, frozenset(args.ignore)))
    failed = print_report(sections)
    print("RESULT: " + (f"DIFFERENT ({failed} sections)" if failed else "the same"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
