"""report.html: what the page holds for each question, escaping, tables and the chart."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

from lme_bench.dataset.models import Instance
from lme_bench.report.html_chart import Bar, bars_svg
from lme_bench.report.html_questions import TOP_TURNS, retrieved_turns
from tests.factories import make_question
from tests.html_report_data import (
    CASES,
    EVIDENCE_TURN,
    FILLER_TURN,
    HOSTILE,
    JUDGE,
    write_sample_report,
)


class _Sections(HTMLParser):
    """The question sections' data attributes, and every <script> element's text."""

    def __init__(self) -> None:
        super().__init__()
        self.sections: list[dict[str, str | None]] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "section" and "q" in (found.get("class") or "").split():
            self.sections.append(found)
        self._in_script = tag == "script"

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts.append(data)

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False


def _page(tmp_path: Path) -> str:
    page, _ = write_sample_report(tmp_path)
    return page.read_text(encoding="utf-8")


def test_every_question_has_a_section_with_its_filter_marks(tmp_path: Path) -> None:
    parser = _Sections()
    parser.feed(_page(tmp_path))
    marks = {(s["data-type"], s["data-wrong"], s["data-failed"]) for s in parser.sections}
    assert len(parser.sections) == len(CASES)
    assert marks == {
        ("single-session-user", "0", "0"),
        ("temporal-reasoning", "1", "0"),
        ("multi-session", "0", "1"),
        ("multi-session", "1", "0"),
    }


def test_hostile_text_is_escaped_and_the_only_script_is_the_page_s(tmp_path: Path) -> None:
    text = _page(tmp_path)
    parser = _Sections()
    parser.feed(text)
    assert HOSTILE not in text
    assert "&lt;script&gt;document.title=&quot;pwned&quot;&lt;/script&gt;" in text
    assert len(parser.scripts) == 1 and "fromAddress" in parser.scripts[0]
    assert not re.search(r"(src|href)=\"?(https?:)?//", text)  # nothing loaded from elsewhere


def test_a_question_shows_date_gold_answer_verdict_reply_and_evidence(tmp_path: Path) -> None:
    text = _page(tmp_path)
    wrong = text[text.index("<h3>q-wrong") : text.index("</section>", text.index("<h3>q-wrong"))]
    assert "2023/05/30 (Tue) 23:40" in wrong  # the question date
    assert "golden retriever" in wrong  # the gold answer
    assert f"<td>{JUDGE}</td>" in wrong and ">wrong<" in wrong
    assert "<td>wrong though the evidence was retrieved</td>" in wrong  # the attribution
    assert "no, it says &lt;script&gt;" in wrong  # the judge's reply
    items = re.findall(r"<li( class=\"evidence\")?>(.*?)</li>", wrong)
    assert [bool(css) for css, _ in items] == [True, False]
    assert EVIDENCE_TURN in items[0][1] and "My golden retriever Max chews" in items[0][1]
    assert FILLER_TURN in items[1][1] and "sourdough" in items[1][1]


def test_a_failed_question_names_what_failed(tmp_path: Path) -> None:
    text = _page(tmp_path)
    failed = text[text.index("<h3>q-failed") :]
    assert "answer: model call failed: 500" in failed[: failed.index("</section>")]
    assert "Incomplete run" in text


def test_tables_hold_the_abstention_row_and_rounded_figures(tmp_path: Path) -> None:
    text = _page(tmp_path)
    assert '<td>abstention questions</td><td class="n">0.0%</td><td class="n">0 / 1</td>' in text
    assert '<td>overall</td><td class="n">33.3%</td><td class="n">1 / 3</td>' in text
    assert "1 question(s) without a verdict" in text
    overall = re.findall(r'<td>overall</td><td class="n">3</td><td class="n">([^<]*)</td>', text)
    assert overall == ["0.333", "0.333"]  # session and turn recall_any@5: 1 of 3, rounded


def test_the_chart_has_a_whisker_per_type_with_an_interval() -> None:
    svg = bars_svg(
        "t", [Bar("a", 0.5, (0.3, 0.7), 10), Bar("b", 0.9, None, 5), Bar("c", None, None, 0)]
    )
    assert svg.count('class="whisker"') == 1
    assert svg.count("<rect") == 2
    assert "n/a" in svg


def test_retrieved_turns_are_the_top_ones_with_text_or_none() -> None:
    instance = Instance.model_validate(make_question())
    ranked = [EVIDENCE_TURN, "answer_4be1b6b4_99"] + [FILLER_TURN] * 20
    turns = retrieved_turns(instance, ranked)
    assert len(turns) == TOP_TURNS
    assert turns[0].evidence and turns[0].date == "2023/05/01 (Mon) 09:15"
    assert turns[1].text is None  # not a turn of this haystack: shown as such
    assert not turns[2].evidence and turns[2].text is not None


def test_the_page_is_written_atomically(tmp_path: Path) -> None:
    page, _ = write_sample_report(tmp_path)
    assert [p.name for p in page.parent.iterdir()] == ["report.html"]


def test_cost_and_ingestion_are_shown(tmp_path: Path) -> None:
    text = _page(tmp_path)
    assert "<th>run total</th><td>$0.0160</td>" in text
    assert "<th>per correct answer (primary judge)</th><td>$0.0160</td>" in text
    assert "<th>questions</th><td>4</td>" in text


def test_turn_texts_of_wanted_ids_equal_a_scan_of_every_turn() -> None:
    """Looking up only the wanted ids finds what a scan of the whole haystack finds."""
    from lme_bench.dataset.loader import iter_questions
    from lme_bench.metrics.ranking_metrics import official_turn_id
    from lme_bench.report.html_questions import turn_texts
    from lme_bench.run.steps import bundled_sample

    for loaded in list(iter_questions(bundled_sample()))[:10]:
        instance = loaded.instance
        every: dict[str, tuple[str, str]] = {}
        for session_id, date, turns in zip(
            instance.haystack_session_ids,
            instance.haystack_dates,
            instance.haystack_sessions,
            strict=True,
        ):
            for number, turn in enumerate(turns, start=1):
                turn_id = official_turn_id(session_id, number, turn.role, bool(turn.has_answer))
                every[turn_id] = (date, turn.content)
        wanted = [*every, "answer_missing_1", "no_number", "x_0", f"{next(iter(every))}9"]
        assert turn_texts(instance, wanted) == every
