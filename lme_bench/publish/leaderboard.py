"""`lme-bench leaderboard`: a folder of bundles into a static site. Each bundle is verified
and becomes one row (its report.html extracted beside the page); a file that cannot be read as
a bundle is listed with the reason. The bundles may be at a URL (places.py); the site is
written to a local folder beside its target, then renamed into place, so a reader never sees
half a site."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from lme_bench.publish.archive import read_members
from lme_bench.publish.errors import PublishError
from lme_bench.publish.leaderboard_page import page_html
from lme_bench.publish.leaderboard_rows import Row, bundle_row
from lme_bench.publish.leaderboard_tables import Table, tables_of
from lme_bench.publish.places import SUFFIX, bundle_name, bundles_at, is_remote
from lme_bench.publish.verify import verify_members

PAGE = "index.html"
DATA = "leaderboard.json"  # the rows as data; also what marks a folder as a leaderboard site


@dataclass(frozen=True)
class Site:
    out: Path
    tables: list[Table]
    unread: list[tuple[str, str]]  # (file name, why it has no row)

    @property
    def rows(self) -> list[Row]:
        return [row for table in self.tables for row in table.rows]


def bundles_in(folder: Path | str) -> list[Path | str]:
    """The bundles (*.tar.gz) directly in a local folder or at a URL."""
    found: list[Path | str]
    if is_remote(folder):
        found = list(bundles_at(str(folder)))
    elif not Path(folder).is_dir():
        raise PublishError(f"{folder}: no such folder of bundles")
    else:
        found = sorted(p for p in Path(folder).iterdir() if p.is_file() and p.name.endswith(SUFFIX))
    if not found:
        raise PublishError(f"{folder}: no bundles (*{SUFFIX}) here")
    return found


def _check_target(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise PublishError(f"{out}: a file, not a folder; the site goes in a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / DATA).is_file():
        raise PublishError(
            f"{out}: a folder that is not a leaderboard site (no {DATA}); never overwritten"
        )


def _row(bundle: Path | str, site: Path) -> Row:
    members = read_members(bundle)
    verdict = verify_members(bundle, members)
    report = None
    if "report.html" in members:
        report = bundle_name(bundle)[: -len(SUFFIX)] + ".report.html"
        (site / report).write_bytes(members["report.html"])
    return bundle_row(bundle, members, verdict, report)


def _rows(bundles: list[Path | str], site: Path) -> tuple[list[Row], list[tuple[str, str]]]:
    rows, unread = [], []
    for bundle in bundles:
        name = bundle_name(bundle)
        try:
            rows.append(_row(bundle, site))
        except PublishError as exc:  # said on the page by file name, not this machine's path
            said = str(exc).replace(str(bundle), name)
            unread.append((name, said.removeprefix(f"{name}: ")))
    return rows, unread


def _data(tables: list[Table], unread: list[tuple[str, str]], made: str) -> dict[str, Any]:
    return {
        "made": made,
        "tables": [
            {"key": dataclasses.asdict(t.key), "rows": [dataclasses.asdict(r) for r in t.rows]}
            for t in tables
        ],
        "unread": [{"file": name, "reason": why} for name, why in unread],
    }


def _replace(folder: Path, out: Path) -> None:
    """`folder` renamed to `out`; an earlier site there is moved aside first, then removed."""
    earlier = None
    if out.exists():
        earlier = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.", suffix=".old"))
        os.replace(out, earlier)
    os.replace(folder, out)
    if earlier is not None:
        shutil.rmtree(earlier)


def build_site(bundles_dir: Path | str, out: Path) -> Site:
    bundles = bundles_in(bundles_dir)
    _check_target(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp"))
    try:
        rows, unread = _rows(bundles, folder)
        tables = tables_of(rows)
        made = datetime.now(UTC).isoformat(timespec="seconds")
        (folder / PAGE).write_text(page_html(tables, unread, made), encoding="utf-8")
        data = json.dumps(_data(tables, unread, made), indent=2, ensure_ascii=False) + "\n"
        (folder / DATA).write_text(data, encoding="utf-8")
        folder.chmod(0o755)  # mkdtemp's is the owner's only; a site is read by a web server
        _replace(folder, out)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return Site(out, tables, unread)
