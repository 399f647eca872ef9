"""report.html in headless Chromium from a file:// URL: the filters named in the address hide
what they should once the page's script ran, and the page renders (a screenshot)."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from tests.html_report_data import write_sample_report
from tests.integration.chromium import find_chromium, in_ci, png_size, render


@pytest.fixture(scope="module")
def chromium() -> str:
    found = find_chromium()
    if found is None:
        if in_ci():
            pytest.fail("CI is set but chromium is not installed (Debian package chromium)")
        pytest.skip("chromium is not installed (Debian: apt-get install chromium)")
    return found


@pytest.fixture(scope="module")
def page_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    page, _ = write_sample_report(tmp_path_factory.mktemp("report"))
    return page.resolve().as_uri()


def _shown(dom: str) -> tuple[int, list[str]]:
    """(the count the page says it shows, the ids of the sections not hidden)."""
    count = re.search(r'id="shown">(\d+)<', dom)
    assert count is not None, "the page's script did not run"
    visible = re.findall(r'<section class="q[^"]*"(?![^>]*hidden)[^>]*><h3>([^ <]+)', dom)
    return int(count.group(1)), visible


@pytest.mark.parametrize(
    ("fragment", "expected"),
    [
        ("", ["q-right", "q-wrong", "q-failed", "q-none_abs"]),
        ("#filter=wrong", ["q-wrong", "q-none_abs"]),
        ("#filter=failed", ["q-failed"]),
        ("#type=multi-session", ["q-failed", "q-none_abs"]),
        ("#filter=wrong&type=multi-session", ["q-none_abs"]),
    ],
)
def test_filters_in_the_address_hide_the_other_questions(
    chromium: str, page_url: str, tmp_path: Path, fragment: str, expected: list[str]
) -> None:
    shot = tmp_path / "page.png"
    dom = render(chromium, page_url + fragment, shot, tmp_path / "profile")
    count, visible = _shown(dom)
    assert sorted(visible) == sorted(expected)
    assert count == len(expected)
    assert "pwned" not in html.unescape(dom.split("<title>")[1].split("</title>")[0])


def test_the_page_renders_its_chart_and_tables(
    chromium: str, page_url: str, tmp_path: Path
) -> None:
    shot = tmp_path / "page.png"
    dom = render(chromium, page_url, shot, tmp_path / "profile")
    assert png_size(shot) == (1400, 1000)
    assert shot.stat().st_size > 40_000  # text, tables and the chart, not a blank page
    assert 'class="whisker"' not in dom  # one question a type: no interval worth drawing
    assert "QA accuracy per question type" in dom
