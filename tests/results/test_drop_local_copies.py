"""A deployment's run kept at a results URL leaves no results folder in its worker's working
folder: the run folder and its series' history page go, with the folders they leave empty;
the working folder's scratch stays."""

from __future__ import annotations

from pathlib import Path

from lme_bench.report.history_html import history_page
from lme_bench.results.run_mirror import drop_local_copies


def _work(folder: Path) -> tuple[Path, Path]:
    run = folder / "r1"
    (run / "beam").mkdir(parents=True)
    (run / "manifest.json").write_text("{}")
    (run / "beam" / "x.json").write_text("{}")
    page = history_page(folder, "weekly")
    page.parent.mkdir(parents=True)
    page.write_text("<html></html>")
    (folder / "memory.sqlite").write_bytes(b"scratch")
    return run, page


def test_the_copies_and_the_folders_they_leave_empty_go(tmp_path: Path) -> None:
    run, page = _work(tmp_path)
    other = history_page(tmp_path, "nightly")  # another series' page stays
    other.parent.mkdir(parents=True)
    other.write_text("<html></html>")
    drop_local_copies("s3://bucket/runs", tmp_path, [run, page])
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == [
        "memory.sqlite",
        "series",
        "series/nightly",
        "series/nightly/history.html",
    ]
    drop_local_copies("s3://bucket/runs", tmp_path, [other])
    assert [p.name for p in tmp_path.iterdir()] == ["memory.sqlite"]


def test_a_local_results_folder_keeps_everything(tmp_path: Path) -> None:
    run, page = _work(tmp_path)
    drop_local_copies(None, tmp_path, [run, page])
    assert (run / "manifest.json").is_file() and page.is_file()


def test_copies_never_written_are_no_error(tmp_path: Path) -> None:
    (tmp_path / "memory.sqlite").write_bytes(b"scratch")
    never = [tmp_path / "r2", history_page(tmp_path, "weekly")]
    drop_local_copies("s3://bucket/runs", tmp_path, never)
    assert [p.name for p in tmp_path.iterdir()] == ["memory.sqlite"]
