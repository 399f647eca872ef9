"""Wide Markdown tables split for the Prefect UI: each part repeats the key column, the parts
together hold every column and cell of the table in order, narrow tables stay as they are.
(That the parts fit the UI's page is checked in Chromium: tests/integration/test_ui_tables.py.)"""

from __future__ import annotations

from pathlib import Path

from lme_bench.report.compare import compare_runs
from lme_bench.report.ui_markdown import compare_markdown
from lme_bench.report.ui_tables import PAGE_PX, cells, column_groups, split_wide_tables
from tests.compare.test_compare import RUN_A, RUN_B, _retrieval, write_retrieval, write_run


def _tables(markdown: str) -> list[list[list[str]]]:
    """Every table of the text: its header and rows as cells (the delimiter left out)."""
    found: list[list[list[str]]] = []
    current: list[list[str]] = []
    for line in [*markdown.split("\n"), ""]:
        if line.startswith("|"):
            current.append(cells(line))
        elif current:
            found.append([current[0], *current[2:]])
            current = []
    return found


def _comparison(tmp_path: Path) -> tuple[str, str]:
    """(compare's own Markdown, the UI's) for two runs with QA and retrieval."""
    root = tmp_path / "results"
    write_retrieval(write_run(root, "run-a", RUN_A), [_retrieval("t0", (1.0, 0.0, 0.5))])
    write_retrieval(write_run(root, "run-b", RUN_B), [_retrieval("t0", (1.0, 1.0, 1.0))])
    out = compare_runs("run-a", "run-b", results_dir=root, resamples=50, out=root / "cmp")
    return out.markdown, compare_markdown(out.markdown, out.paths, root, None)


def test_compare_tables_are_split_with_the_key_column_repeated(tmp_path: Path) -> None:
    original, shown = _comparison(tmp_path)
    wide = next(t for t in _tables(original) if t[0][0] == "question type")
    assert len(wide[0]) == 9  # question type, A and B counts and accuracies, paired, Δ, CI
    parts = [t for t in _tables(shown) if t[0][0] == "question type"]
    assert len(parts) > 1
    assert all(len(p[0]) < len(wide[0]) for p in parts)
    for part in parts:  # every part: the same row labels, in the same order
        assert [row[0] for row in part] == [row[0] for row in wide]
    joined = [wide[0][:1] + [c for p in parts for c in p[0][1:]]]
    for r in range(1, len(wide)):
        joined.append(wide[r][:1] + [c for p in parts for c in p[r][1:]])
    assert joined == wide  # nothing lost, nothing reordered


def test_narrow_tables_and_text_stay_as_they_were(tmp_path: Path) -> None:
    original, shown = _comparison(tmp_path)
    flips = [t for t in _tables(original) if t[0] == ["question", "type"]]
    assert flips and flips == [t for t in _tables(shown) if t[0] == ["question", "type"]]
    text = "# Title\n\nA paragraph with a | pipe.\n\n| a | b |\n|---|---:|\n| 1 | 2 |\n"
    assert split_wide_tables(text) == text


def test_columns_are_packed_beside_the_key_up_to_the_page_width() -> None:
    key, column = 300.0, 200.0
    assert column_groups([key, *[column] * 5], PAGE_PX) == [[1, 2], [3, 4], [5]]
    assert column_groups([key, 900.0, column], PAGE_PX) == [[1], [2]]  # too wide: alone
    markdown = "| k | " + " | ".join("x" * 60 for _ in range(4)) + " |\n|---" + "|---:" * 4 + "|"
    parts = _tables(split_wide_tables(markdown + "\n| r | 1 | 2 | 3 | 4 |"))
    assert [p[0][0] for p in parts] == ["k"] * 4  # 60 characters a column: one beside the key
    assert [p[1] for p in parts] == [["r", "1"], ["r", "2"], ["r", "3"], ["r", "4"]]


def test_a_link_is_as_wide_as_its_text_not_its_target() -> None:
    target = "file:///a/results/folder/that/is/long/run-20261207-030000/report.html"
    header = "| run | QA overall | QA task-averaged | session recall_all@5 |"
    row = f"| [run-20261207-030000]({target}) | 14.7% [3.0%, 26.5%] | 13.5% | 0.759 |"
    table = "\n".join([header, "|---|---|---|---|", row])
    assert split_wide_tables(table) == table  # what it shows fits, whatever its target
    shown = table.replace("[run-20261207-030000]", "[" + "run-20261207-030000 " * 3 + "]")
    assert split_wide_tables(shown).count("| run") == 2  # what it shows is too wide: split
