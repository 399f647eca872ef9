"""The leaderboard's index.html: its tables, the files that are not bundles, what each bundle
was checked for, with the style and the column-sorting script inline."""

from __future__ import annotations

import html
from collections.abc import Sequence

from lme_bench.publish.leaderboard_html import table_html
from lme_bench.publish.leaderboard_tables import Table

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2rem; color: #1d2330; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.1rem; margin: 2rem 0 .2rem; }
p.key, .n, .ci { color: #5b6475; } .n, .ci { font-size: .85em; } .ci { white-space: nowrap; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; margin-top: .5rem; }
th, td { border-bottom: 1px solid #d9dde5; padding: .35rem .6rem; text-align: left;
  vertical-align: top; }
th button { font: inherit; font-weight: 600; background: none; border: 0; padding: 0;
  cursor: pointer; color: inherit; text-align: left; }
th[aria-sort="ascending"] button::after { content: " ▲"; }
th[aria-sort="descending"] button::after { content: " ▼"; }
.ok { color: #17663a; font-weight: 600; } .bad { color: #a8261b; font-weight: 600; }
.estimate { font-style: italic; color: #6b4e00; }
tr.unverified { background: #fbeeed; }
details summary { cursor: pointer; color: #5b6475; font-size: .85em; }
details ul { margin: .2rem 0; padding-left: 1.1rem; font-size: .85em; max-width: 32rem; }
code { font-size: .85em; } td[data-col="system"] { min-width: 13rem; }
"""

# Click a header: its rows sorted by the cells' data-value (largest first on the first click
# where the header says data-first="desc"), again to reverse; rows without a value stay last.
SCRIPT = """
for (const table of document.querySelectorAll('section.board table')) {
  const heads = [...table.tHead.rows[0].cells];
  heads.forEach((th, index) => th.querySelector('button').addEventListener('click', () => {
    const now = th.getAttribute('aria-sort');
    const order = now === 'none' ? (th.dataset.first === 'desc' ? 'descending' : 'ascending')
      : (now === 'ascending' ? 'descending' : 'ascending');
    heads.forEach(other => other.setAttribute('aria-sort', 'none'));
    th.setAttribute('aria-sort', order);
    const sign = order === 'ascending' ? 1 : -1, number = th.dataset.kind === 'number';
    const body = table.tBodies[0], rows = [...body.rows];
    rows.sort((a, b) => {
      const x = a.cells[index].dataset.value, y = b.cells[index].dataset.value;
      if (x === '' || y === '') return (x === '') - (y === '');
      return sign * (number ? parseFloat(x) - parseFloat(y) : x.localeCompare(y));
    });
    rows.forEach(row => body.appendChild(row));
  }));
}
"""

CHECKED = (
    "Each bundle was checked with <code>lme-bench verify</code> as it lies in the folder, with"
    " no dataset file and no LongMemEval checkout: every file's sha256 against BUNDLE.json, the"
    " signature when there is one, and summary.json's figures computed again from the bundle's"
    " own rows. The dataset's sha256 is the one each bundle records, not checked against a file;"
    " the official printer was not run. Open <em>checks</em> in a row for what held and what"
    " failed."
)
RULES = (
    "A table holds the runs of one benchmark on one dataset file, judged by one judge model with"
    " one set of prompts (digest below each heading): runs judged differently never share a"
    " table. A row's figures are its leading judge's (the first LLM judge, as its headline)."
    " An <em>estimated official figure</em> is a successor judge's estimate of the reference"
    " judge's accuracy through its judge profile: an estimate, not the official figure."
)


def _unread(unread: Sequence[tuple[str, str]]) -> str:
    if not unread:
        return ""
    items = "".join(
        f"<li><code>{html.escape(name)}</code>: {html.escape(why)}</li>" for name, why in unread
    )
    return (
        '<section id="unread"><h2>Not on the board</h2><p>These files are not bundles that can'
        f" be read, so they have no row:</p><ul>{items}</ul></section>"
    )


def page_html(tables: Sequence[Table], unread: Sequence[tuple[str, str]], made: str) -> str:
    bundles = sum(len(t.rows) for t in tables)
    body = "".join(table_html(t, i) for i, t in enumerate(tables))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>lme-bench leaderboard</title><style>{STYLE}</style></head><body>"
        f"<h1>lme-bench leaderboard</h1><p>{bundles} bundle(s) in {len(tables)} table(s);"
        f" made {html.escape(made)}.</p><p>{RULES}</p><p>{CHECKED}</p>"
        f"{body}{_unread(unread)}<script>{SCRIPT}</script></body></html>\n"
    )
