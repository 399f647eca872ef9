"""Named behaviours for `fake:<name>` models, so a run can use the fake with no script.

fake:echo         replies with the last message's text
fake:note-taker   a rule-based memory agent: add_entry for each observed user message,
                  put_context when one is due and at session end (keeps runs key-free)
fake:prose-only   a memory agent that answers in prose and never calls a tool (as small models
                  often do): its memory stays empty
fake:clumsy-tools a memory agent none of whose tool calls can be used: per message an unknown
                  tool, arguments that are not JSON and add_entry without its summary; at
                  session end put_context without content
fake:dont-know    answers every question with "I don't know." (a QA floor)
fake:quote-memory answers with the first remembered entry it is shown (a QA stand-in)
fake:match-judge  says yes when the response contains the gold answer (a judge stand-in)
fake:extractive-reader, fake:lexical-judge  a reader and a judge that get questions right
                  when the memory holds the answer (fake_extractive.py)
fake:yes          answers "yes" (a judge that accepts everything)
fake:unreliable-judge  as match-judge, but for three questions in ten (picked by a hash of the
                  question) replies with nothing, garbage or a refusal, and for one in ten
                  fails the call (judge fault tests)
fake:rubric-judge a BEAM rubric judge stand-in: replies JSON with a score of 1, 0.5 or 0 picked
                  by a hash of the prompt; to an equivalence question (a system message
                  first) "yes" or "no", also by hash

Fakes that script one backend's own prompts live beside that backend's adapter and are looked
up by name when first used (BACKEND_POLICIES), so this package never imports the backends:
fake:kg-note-taker  a rule-based memory agent for a knowledge-graph server's own tools: an
                  entity per session holding its user messages (backends/mcp_tools_fake_agent.py)
fake:langmem-extractor  LangMem's memory manager: one Memory per user message of the session
fake:graphiti-extractor  answers Graphiti's JSON requests from the prompt's text
fake:mem0-extractor  mem0's fact extraction: one memory per sentence the user wrote
"""

from __future__ import annotations

import importlib
import itertools
import re
import zlib
from collections.abc import Callable

from langchain_core.messages import AIMessage, BaseMessage

from lme_bench.metrics.answer_text import normalize
from lme_bench.providers.fake import echo_last_message
from lme_bench.providers.fake_extractive import extractive_reader, lexical_judge

_ids = itertools.count()
_OBSERVED = re.compile(
    r"\[observe\] session of (?P<date>[^,]+), message \d+ of \d+, (?P<role>\w+):\n"
    r"(?P<text>.*?)(?:\nA context update is due|\Z)",
    re.S,
)
_CONTEXT = re.compile(r"Current context document:\n(?P<context>.*?)\n\n", re.S)


def _call(name: str, **args: str) -> dict[str, object]:
    return {"name": name, "args": args, "id": f"fake_{next(_ids)}", "type": "tool_call"}


def _context(text: str) -> str:
    match = _CONTEXT.search(text)
    found = match.group("context").strip() if match else ""
    return "" if found.startswith("(empty") else found


def note_taker(messages: list[BaseMessage]) -> AIMessage:
    text = str(messages[-1].content)
    context = _context(text)
    calls = []
    observed = _OBSERVED.search(text)
    if observed:
        summary = " ".join(observed.group("text").split())[:300]
        if observed.group("role") == "user":
            calls.append(_call("add_entry", summary=f"{observed.group('date')}: {summary}"))
        if "A context update is due" in text:
            calls.append(_call("put_context", content=(context + "\n- " + summary[:120])[-4800:]))
    elif "[session end]" in text:
        users = re.findall(r"^user: (.*)$", text, re.M)
        lines = [f"- {' '.join(u.split())[:120]}" for u in users[:10]]
        calls.append(
            _call("put_context", content="\n".join([context, *lines]).strip()[-4800:] or "-")
        )
    return AIMessage(content="", tool_calls=calls)


_ENTRY_LINE = re.compile(r"^\[[^\]]+\] (?:user|assistant): (?P<text>.+)$", re.M)
_HIT_LINE = re.compile(r"^\[\d{4}/[^\]]+\] (?P<text>.+)$", re.M)  # hits of systems without roles
_GOLD = re.compile(
    r"^(?:Correct answer|Rubric|Explanation): "
    r"(?P<gold>.*)$",
    re.M,
)
_RESPONSE = re.compile(r"^Model response: (?P<response>.*)$", re.M)


def quote_memory(messages: list[BaseMessage]) -> AIMessage:
    """A QA stand-in: answers with the first remembered entry it was shown, else don't know."""
    prompt = str(messages[-1].content)
    found = _ENTRY_LINE.search(prompt) or _HIT_LINE.search(prompt)
    return AIMessage(content=found.group("text") if found else "I don't know.")


def match_judge(messages: list[BaseMessage]) -> AIMessage:
    """A judge stand-in: yes when the response contains the gold answer (normalised)."""
    text = str(messages[-1].content)
    gold, response = _GOLD.search(text), _RESPONSE.search(text)
    if not gold or not response:
        return AIMessage(content="unreadable")
    said = normalize(response.group("response"))
    if "cannot be answered" in text.split("Question:")[0]:
        return AIMessage(content="yes" if "don't know" in said else "no")
    return AIMessage(content="yes" if normalize(gold.group("gold")) in said else "no")


_QUESTION = re.compile(r"^Question: (?P<question>.*)$", re.M)
UNREADABLE_VERDICTS = ("", "#~ 4f7c ~#", "I'm sorry, but I can't help with grading this.")


def unreadable_verdict(question: str) -> str | None:
    """The reply fake:unreliable-judge gives instead of a verdict on `question`, or None when it
    judges it: empty, garbage or a refusal for questions whose CRC-32 ends in 0, 1 or 2."""
    kind = zlib.crc32(question.strip().encode()) % 10
    return UNREADABLE_VERDICTS[kind] if kind < len(UNREADABLE_VERDICTS) else None


class JudgeCallRefused(RuntimeError):
    """fake:unreliable-judge failing a call (not a transient fault: never retried)."""


def failed_judge_call(question: str) -> bool:
    """Whether fake:unreliable-judge fails its call on `question`: CRC-32 ending in 3."""
    return zlib.crc32(question.strip().encode()) % 10 == len(UNREADABLE_VERDICTS)


def unreliable_judge(messages: list[BaseMessage]) -> AIMessage:
    found = _QUESTION.search(str(messages[-1].content))
    question = found.group("question") if found else ""
    if failed_judge_call(question):
        raise JudgeCallRefused("the judge service refused the request")
    bad = unreadable_verdict(question)
    return match_judge(messages) if bad is None else AIMessage(content=bad)


def prose_only(messages: list[BaseMessage]) -> AIMessage:
    """Says what it would note, in text, instead of calling a tool."""
    observed = _OBSERVED.search(str(messages[-1].content))
    about = " ".join(observed.group("text").split())[:80] if observed else "this session"
    return AIMessage(content=f"I will remember this: {about}")


SENT_TO_USER = "The complete updated context document has been sent to the user."


def sent_to_user(messages: list[BaseMessage]) -> AIMessage:
    """A small model's context update: the same sentence about the document instead of the
    document, every time a context update is asked for."""
    text = str(messages[-1].content)
    if "A context update is due" in text or "[session end]" in text:
        return AIMessage(content="", tool_calls=[_call("put_context", content=SENT_TO_USER)])
    return AIMessage(content="")


def clumsy_tools(messages: list[BaseMessage]) -> AIMessage:
    """Tool calls that miss: a tool nobody offers, arguments cut off mid-JSON (the provider
    reports them as invalid_tool_calls), arguments under the wrong name; put_context empty."""
    text = str(messages[-1].content)
    observed = _OBSERVED.search(text)
    if observed is None:
        return AIMessage(content="", tool_calls=[_call("put_context")])
    said = " ".join(observed.group("text").split())[:120]
    unparsable = {
        "name": "add_entry",
        "args": '{"summary": "' + said[:40],
        "id": f"fake_{next(_ids)}",
        "error": "Function add_entry arguments are not valid JSON",
        "type": "invalid_tool_call",
    }
    return AIMessage(
        content="",
        tool_calls=[_call("save_memory", note=said), _call("add_entry", text=said)],
        invalid_tool_calls=[unparsable],
    )


def dont_know(messages: list[BaseMessage]) -> AIMessage:
    return AIMessage(content="I don't know.")


def yes(messages: list[BaseMessage]) -> AIMessage:
    return AIMessage(content="yes")


def rubric_judge(messages: list[BaseMessage]) -> AIMessage:
    """A BEAM judge stand-in whose replies depend only on what it is sent (a hash of it)."""
    pick = zlib.crc32("\n".join(str(m.content) for m in messages).encode())
    if messages and messages[0].type == "system":
        return AIMessage(content="yes" if pick % 2 else "no")
    score = ("1", "0.5", "0")[pick % 3]
    return AIMessage(content=f'{{"score": {score}, "reason": "scripted"}}')


Policy = Callable[[list[BaseMessage]], AIMessage]

POLICIES: dict[str, Policy] = {
    "echo": echo_last_message,
    "note-taker": note_taker,
    "prose-only": prose_only,
    "sent-to-user": sent_to_user,
    "clumsy-tools": clumsy_tools,
    "dont-know": dont_know,
    "quote-memory": quote_memory,
    "match-judge": match_judge,
    "extractive-reader": extractive_reader,
    "lexical-judge": lexical_judge,
    "yes": yes,
    "unreliable-judge": unreliable_judge,
    "rubric-judge": rubric_judge,
}
BACKEND_POLICIES: dict[str, str] = {  # name -> "module:attribute", imported on first use
    "kg-note-taker": "lme_bench.backends.mcp_tools_fake_agent:KG_NOTE_TAKER",
    "langmem-extractor": "lme_bench.backends.langmem_fake_model:langmem_extractor",
    "graphiti-extractor": "lme_bench.backends.graphiti_fake_model:graphiti_extractor",
    "mem0-extractor": "lme_bench.backends.mem0_fake_model:mem0_extractor",
}


def policy_names() -> list[str]:
    """Every name `fake:<name>` accepts, sorted."""
    return sorted({*POLICIES, *BACKEND_POLICIES})


def fake_policy(name: str) -> Policy | None:
    """The policy `fake:<name>` answers with, or None when no policy has that name."""
    if name in POLICIES:
        return POLICIES[name]
    if name not in BACKEND_POLICIES:
        return None
    module_name, _, attribute = BACKEND_POLICIES[name].partition(":")
    found: Policy = getattr(importlib.import_module(module_name), attribute)
    return found
