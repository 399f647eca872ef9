"""Markdown tables narrow enough for the Prefect UI: a table wider than an artifact's page is
split into several, each repeating the key (first) column and holding as many of the other
columns as fit.

Widths are estimates from the text, with figures measured in headless Chromium on Prefect 3.8's
artifact page in a 1400 px window: the Markdown column is 818 px wide; its table cells do not
wrap (`white-space: nowrap`), are padded 12 px a side and set in Inter at 16 px, whose glyphs
measured 6.5 to 7.6 px on average in these tables' columns (runs of digits the widest).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

PAGE_PX = 800  # the Markdown column (818 px measured), less a margin
CHAR_PX = 7.6  # the widest average glyph measured
CELL_PAD_PX = 24

_DELIMITER = re.compile(r"^\|(\s*:?-+:?\s*\|)+\s*$")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")


def cells(line: str) -> list[str]:
    """A table line's cells ('\\|' inside a cell is kept)."""
    inner = line.strip().removeprefix("|").removesuffix("|")
    return [c.strip() for c in _CELL_SPLIT.split(inner)]


def _shown_length(cell: str) -> int:
    """The characters a cell shows: Markdown's code marks, escapes and a link's target are
    not drawn."""
    shown = _LINK.sub(r"\1", cell)
    return len(shown.replace("\\|", "|").replace("`", ""))


def column_px(column: Sequence[str]) -> float:
    """A column's estimated width: its longest cell (cells do not wrap) and the padding."""
    return max(_shown_length(c) for c in column) * CHAR_PX + CELL_PAD_PX


def column_groups(widths: Sequence[float], page_px: float = PAGE_PX) -> list[list[int]]:
    """The columns after the first (the key, repeated in each table) packed in order into
    groups that fit `page_px` beside the key; a column too wide for any table goes alone."""
    groups: list[list[int]] = []
    used = page_px  # start a new group at the first column
    for index in range(1, len(widths)):
        if not groups or used + widths[index] > page_px:
            groups.append([])
            used = widths[0]
        groups[-1].append(index)
        used += widths[index]
    return groups


def _line(row: Sequence[str]) -> str:
    return "| " + " | ".join(row) + " |"


def split_table(lines: Sequence[str], page_px: float = PAGE_PX) -> list[str]:
    """A Markdown table (header, delimiter, rows) as one or more tables that fit `page_px`,
    separated by blank lines."""
    header, delimiter, *rows = (cells(line) for line in lines)
    table = [header, *rows]
    widths = [column_px([r[i] if i < len(r) else "" for r in table]) for i in range(len(header))]
    if sum(widths) <= page_px or len(header) < 3:
        return list(lines)
    out: list[str] = []
    for group in column_groups(widths, page_px):
        keep = [0, *group]
        if out:
            out.append("")
        out += [_line([header[i] for i in keep]), "|" + "|".join(delimiter[i] for i in keep) + "|"]
        out += [_line([row[i] if i < len(row) else "" for i in keep]) for row in rows]
    return out


def split_wide_tables(markdown: str, page_px: float = PAGE_PX) -> str:
    """Markdown with every table wider than `page_px` split (see `split_table`); the rest of
    the text as it was."""
    lines = markdown.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        starts_table = (
            lines[i].lstrip().startswith("|")
            and i + 1 < len(lines)
            and _DELIMITER.match(lines[i + 1].strip()) is not None
        )
        if not starts_table:
            out.append(lines[i])
            i += 1
            continue
        end = i + 2
        while end < len(lines) and lines[end].lstrip().startswith("|"):
            end += 1
        out += split_table(lines[i:end], page_px)
        i = end
    return "\n".join(out)
