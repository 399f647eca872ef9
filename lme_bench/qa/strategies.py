"""QA strategies: how many searches, with which queries, before the reader answers.

- single: one search with the question, then answer (1 model call);
- two-pass: a broad search, the model replies SUFFICIENT or REFINE: <query>, an optional second
  focused search, merged, then answer (2 calls);
- multi-query: one call proposes queries (time-aware, from the question date), the searches run
  in parallel, results are merged by reciprocal rank fusion, then answer (2 calls);
- rerank (optional, any strategy): one more call orders the merged entries.
`wait_until_ready` comes before the first search, so everything ingested is searchable.
"""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass, field

from langchain_core.messages import HumanMessage

from lme_bench.backends.protocol import Hit
from lme_bench.backends.recall import MemorySearch, Recall, hit_identity
from lme_bench.config.settings import QaSettings
from lme_bench.dataset.views import QuestionView
from lme_bench.entries.models import ContextHit
from lme_bench.providers.calls import CountedModel, text_of
from lme_bench.qa.reader import Gathered, QaPrompts, entries_text, reader_prompt

RRF_K = 60  # the usual reciprocal-rank-fusion constant


@dataclass
class Answer:
    hypothesis: str
    strategy: str
    queries: list[str] = field(default_factory=list)
    searches: int = 0
    shown: list[Hit] = field(default_factory=list)  # the hits the reader saw
    context_chars: int = 0
    seconds: float = 0.0


def fuse(results: list[Recall]) -> Gathered:
    """Merge several searches: hits deduplicated by id and ranked by reciprocal rank fusion.

    Only scored hits take part: a search ranks every entry, and those it did not score (score
    0: no query word, for BM25) come last in each list; counting them would lift the oldest
    entries, which fill every list, above real matches. They follow the fused entries, in order
    of first appearance. Results without any score (all 0) are fused by rank alone.
    """
    scored = any(hit.score != 0 for result in results for hit in result.hits)
    scores: dict[str, float] = {}
    hits: dict[str, Hit] = {}
    for result in results:
        for rank, hit in enumerate(result.hits, start=1):
            hit_id = hit_identity(hit)
            hits.setdefault(hit_id, hit)
            if hit.score != 0 or not scored:
                scores[hit_id] = scores.get(hit_id, 0.0) + 1.0 / (RRF_K + rank)
    fused = sorted(scores, key=lambda hit_id: -scores[hit_id])
    order = fused + [hit_id for hit_id in hits if hit_id not in scores]
    contexts: dict[str, ContextHit] = {}
    for result in results:
        for ctx in result.contexts:
            if ctx.context not in contexts or contexts[ctx.context].score < ctx.score:
                contexts[ctx.context] = ctx
    latest = next((r.latest_context for r in reversed(results) if r.latest_context), None)
    return Gathered(
        entries=[hits[i] for i in order],
        contexts=sorted(contexts.values(), key=lambda c: -c.score),
        latest_context=latest,
    )


def _lines(text: str, limit: int) -> list[str]:
    queries = [re.sub(r"^[\s\-*\d.)]+", "", line).strip() for line in text.splitlines()]
    return list(dict.fromkeys(q for q in queries if q))[:limit]


class Answerer:
    def __init__(
        self, search: MemorySearch, model: CountedModel, prompts: QaPrompts, settings: QaSettings
    ) -> None:
        self.memory = search
        self.model = model
        self.prompts = prompts
        self.settings = settings

    async def _ask(self, prompt: str) -> str:
        return text_of(await self.model.ainvoke([HumanMessage(prompt)]))

    def _fill(self, name: str, view: QuestionView, **extra: str) -> str:
        text = self.prompts.texts[name].replace("{question_date}", view.question_date)
        text = text.replace("{question}", view.question)
        for key, value in extra.items():
            text = text.replace("{" + key + "}", value)
        return text

    async def _search(self, memory_id: str, query: str, top_ke: int, top_kc: int) -> Recall:
        return await self.memory.search(memory_id, query, k=top_ke, contexts=top_kc)

    async def gather(self, view: QuestionView, memory_id: str, answer: Answer) -> Gathered:
        s = self.settings
        first = await self._search(memory_id, view.question, s.top_ke, s.top_kc)
        results, queries = [first], [view.question]
        if s.strategy == "two-pass":
            listed, _ = entries_text(first.hits, s.max_context_chars // 2)
            reply = await self._ask(self._fill("refine", view, entries=listed))
            match = re.search(r"REFINE:\s*(.+)", reply)
            if match and match.group(1).strip():
                query = match.group(1).strip().splitlines()[0]
                queries.append(query)
                results.append(
                    await self._search(memory_id, query, s.refine_top_ke, s.refine_top_kc)
                )
        elif s.strategy == "multi-query":
            reply = await self._ask(self._fill("queries", view, max_queries=str(s.max_queries)))
            extra = [q for q in _lines(reply, s.max_queries) if q != view.question]
            queries += extra
            results += await asyncio.gather(
                *(self._search(memory_id, q, s.top_ke, s.top_kc) for q in extra)
            )
        answer.queries, answer.searches = queries, len(results)
        gathered = fuse(results)
        gathered.queries = queries
        return gathered

    async def rerank(self, view: QuestionView, gathered: Gathered) -> None:
        numbered = "\n".join(f"{i}. {hit.text}" for i, hit in enumerate(gathered.entries[:30]))
        prompt = (
            f"Question: {view.question}\n\nNumbered memory entries:\n{numbered}\n\n"
            "List the numbers of the entries that help answer the question, most useful first, "
            "separated by commas. Reply with the numbers only."
        )
        picked = [int(n) for n in re.findall(r"\d+", await self._ask(prompt))]
        keep = [gathered.entries[i] for i in dict.fromkeys(picked) if i < len(gathered.entries)]
        rest = [hit for hit in gathered.entries if hit not in keep]
        gathered.entries = keep + rest

    async def answer(self, view: QuestionView, memory_id: str) -> Answer:
        started = time.perf_counter()
        answer = Answer(hypothesis="", strategy=self.settings.strategy)
        await self.memory.wait_until_ready(memory_id)
        gathered = await self.gather(view, memory_id, answer)
        if self.settings.rerank and gathered.entries:
            await self.rerank(view, gathered)
        prompt, answer.shown = reader_prompt(
            self.prompts,
            view.question,
            view.question_date,
            gathered,
            self.settings.max_context_chars,
        )
        answer.context_chars = len(prompt)
        answer.hypothesis = await self._ask(prompt)
        answer.seconds = time.perf_counter() - started
        return answer
