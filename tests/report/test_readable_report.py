"""report.html and summary.md read as words: labels instead of summary keys, formatted numbers,
the memory system named with its parameters' digest and provenance, its own calls shown, and
intervals flagged on small samples and never shown as [x, x]."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from lme_bench.report.labels import SMALL_SAMPLE, dollars, interval_text, percent, seconds
from lme_bench.report.qa import qa_markdown
from lme_bench.report.run_report import run_markdown
from lme_bench.results.memory_identity import memory_identity, params_digest
from lme_bench.results.qa_scores import qa_summary
from lme_bench.results.summary import search_latency, summarize_retrieval
from lme_bench.retrieval.official_ids import RetrievalRow
from tests.html_report_data import CASES, _hypothesis, _score, write_sample_report

MEM0_PARAMS = {"collection": "lme", "top_k": 20}


def _memory_parts(summary: dict[str, Any]) -> None:
    summary["memory"] = {
        **memory_identity({"backend": "mem0", "params": MEM0_PARAMS}),
        "search": "the memory system's own",
        "provenance": {"session": ["attributed"], "turn": ["attributed"]},
    }
    summary["session"]["provenance"] = summary["turn"]["provenance"] = ["attributed"]
    summary["memory_system"] = {
        "backend": "mem0",
        "model": "openai:gpt-4o-mini",
        "model_calls": 1234,
        "input_tokens": 1_500_000,
        "output_tokens": 2500,
        "embedding_calls": 40,
        "embedded_texts": 900,
        "capped_replies": 0,
        "timeouts": 1,
    }
    summary["search_latency"] = {"n": 4, "p50_s": 0.012, "p95_s": 1.5, "max_s": 2.0}
    summary["ingestion"] = {
        "modes": ["raw"],
        "questions": 4,
        "sessions": 12,
        "turns": 4321,
        "llm_calls": 0,
        "llm_calls_per_turn": None,
        "memory_calls": {"add": 4321},
        "input_tokens": 0,
        "output_tokens": 0,
        "sessions_not_ok": 0,
        "resumed_sessions": 0,
        "seconds": 125.0,
    }


def _page(tmp_path: Path) -> str:
    page, _ = write_sample_report(tmp_path, _memory_parts)
    return page.read_text(encoding="utf-8")


def _visible_text(page: str) -> str:
    """The page's text without its tags, script and style."""
    body = re.sub(r"<(script|style)>.*?</\1>", "", page, flags=re.S)
    return re.sub(r"<[^>]+>", " ", body)


def test_the_page_shows_words_not_summary_keys(tmp_path: Path) -> None:
    text = _visible_text(_page(tmp_path))
    for key in ("llm_calls_per_turn", "memory_calls", "per_correct_answer", "['raw']", "None"):
        assert key not in text
    assert "ingestion mode" in text and "raw (every turn stored verbatim)" in text
    assert "wrong though the evidence was retrieved" in text  # an attribution, in words
    assert "not answered in this run" not in text and "the answer stage failed" in text


def test_numbers_are_formatted(tmp_path: Path) -> None:
    text = _visible_text(_page(tmp_path))
    assert "4,321" in text  # turns, with a thousands separator
    assert "2 min 5 s" in text  # ingestion time
    assert "$0.0160" in text  # run total, in dollars
    assert "33.3%" in text  # overall accuracy, one decimal
    assert (percent(0.5), dollars(12.5), seconds(0.012)) == ("50.0%", "$12.50", "12 ms")


def test_the_memory_system_its_digest_provenance_and_latency_are_named(tmp_path: Path) -> None:
    text = _visible_text(_page(tmp_path))
    assert f"mem0 (parameters digest {params_digest(MEM0_PARAMS)})" in text
    assert "attributed (hits matched to turns by their words)" in text
    assert "p50 12 ms, p95 1.5 s over 4 searches" in text


def test_the_memory_systems_own_calls_are_shown(tmp_path: Path) -> None:
    text = _visible_text(_page(tmp_path))
    assert "The memory system's own calls" in text
    assert "1,234 model calls with openai:gpt-4o-mini (1,500,000 input, 2,500 output" in text
    assert "40 embedding calls (900 texts)" in text


def test_small_samples_are_flagged_and_degenerate_intervals_are_not_shown(
    tmp_path: Path,
) -> None:
    page = _page(tmp_path)
    # one question a type: every per-type interval is [x, x]
    assert not re.search(r"(\d+\.\d%) to \1", page)
    assert f'no spread <span class="flag">{SMALL_SAMPLE}, n = 1</span>' in page
    assert f'<span class="flag">{SMALL_SAMPLE}, n = 3</span>' in page  # overall: 3 judged
    assert interval_text((0.42, 0.58), 400) == "42.0% to 58.0%"
    assert interval_text((0.2, 0.7), 9) == f"20.0% to 70.0% ({SMALL_SAMPLE}, n = 9)"
    assert interval_text((1.0, 1.0), 9) == f"no spread ({SMALL_SAMPLE}, n = 9)"
    assert interval_text((1.0, 1.0), 40) == "no spread (n = 40)"


def _rows(question_id: str, seconds_taken: float | None) -> list[RetrievalRow]:
    return [
        RetrievalRow(
            question_id, "multi-session", False, g, [], {}, 1, search_seconds=seconds_taken
        )
        for g in ("session", "turn")
    ]


def test_search_latency_counts_one_search_a_question() -> None:
    rows = [r for i in range(1, 11) for r in _rows(f"q{i}", i / 10)]
    latency = search_latency(rows)
    assert latency is not None and latency["n"] == 10
    assert latency["p50_s"] == 0.55 and round(latency["p95_s"], 3) == 0.955
    assert search_latency(_rows("q1", None)) is None  # tables from before the column


def test_summary_md_names_the_memory_system_and_its_calls() -> None:
    summary = summarize_retrieval([r for i in range(3) for r in _rows(f"q{i}", 0.02)])
    _memory_parts(summary)
    markdown = run_markdown(summary, "lme-bench run x", "x", 3)
    memory = markdown.split("## Memory system", 1)[1].split("\n## ", 1)[0]
    assert f"memory system: mem0 (parameters digest {params_digest(MEM0_PARAMS)})" in memory
    assert (
        "hits mapped to the haystack: attributed (hits matched to turns by their words)" in memory
    )
    assert "1,234 model calls with openai:gpt-4o-mini" in memory
    assert "search latency: p50 12 ms" in memory
    assert "## Ingestion: raw (every turn stored verbatim)" in markdown
    assert "4,321 turns; ingestion 2 min 5 s summed over 4 questions (not wall time)" in markdown


def test_summary_md_qa_flags_small_samples_and_names_causes_in_words() -> None:
    hypotheses = [_hypothesis(q) for q in CASES]
    scores = [_score(q) for q in CASES]
    types = {q: t for q, (t, *_) in CASES.items()}
    markdown = qa_markdown(qa_summary(scores, hypotheses, types))
    assert "| overall | 33.3% | 1 / 3 | " in markdown and f"({SMALL_SAMPLE}, n = 3) |" in markdown
    assert f"| single-session-user | 100.0% | 1 / 1 | no spread ({SMALL_SAMPLE}, n = 1) |" in (
        markdown
    )
    assert not re.search(r"(\d+\.\d%) to \1", markdown)
    assert "wrong though the evidence was retrieved 1" in markdown
    assert "retrieved-not-answered" not in markdown
