"""Key-free stand-ins that get questions right when the memory holds the answer: a reader that
answers as an extractive QA baseline does, and a judge that matches the gold answer lexically.

fake:extractive-reader  answers with the remembered line (entry, context snapshot or bullet;
                  lines that only ask questions left out) sharing the most question words,
                  rarer words in the prompt weighing more; a tie goes to the later line, the
                  more recent of the entries shown oldest first; "I don't know." when the best
                  holds under a third of the question's weight (a no-answer threshold)
fake:lexical-judge  normalises the gold answer's head (before an aside in brackets, a comma or
                  the first full stop) and the response (case, punctuation, articles, number
                  words as digits): yes when the response holds the head as a phrase, a bare
                  number as the only number it gives; for a question that cannot be answered,
                  yes when the response says it does not know; a rubric (preference
                  questions) it cannot check lexically, so no

Both read only the prompt they are sent: the reader sees what memory search returned (never a
gold label), the judge is given the gold answer by its prompt, as a real judge is.
"""

from __future__ import annotations

import math
import re
from collections import Counter

from langchain_core.messages import AIMessage, BaseMessage

from lme_bench.metrics.answer_text import normalize

_QUESTION = re.compile(r"^Question: (?P<question>.+)$", re.M)
_MEMORY_LINE = re.compile(r"^\s*(?:\[[^\]]*\]|[-*•]\s)\s*\S")
_SENTENCE_END = re.compile(r"(?<!\bMr\.)(?<!\bMs\.)(?<!\bDr\.)(?<!\bMrs\.)(?<=[.!?])\s+")
_LINE_PREFIX = re.compile(r"^(?:\[[^\]]*\]\s*)?(?:(?:user|assistant):\s*)?(?:[-*•]\s*)?")
_FUNCTION_WORD_TEXT = """
    a about all am an and any are as at be been but by can could did do does for from had has
    have how i if in into is it its me my of on or our so than that the their them then there
    these they this to was we were what when where which who whom why will with would you your
    ever ago now
"""
_FUNCTION_WORDS = frozenset(_FUNCTION_WORD_TEXT.split())
_COUNTS = """zero one two three four five six seven eight nine ten eleven twelve thirteen
    fourteen fifteen sixteen seventeen eighteen nineteen twenty"""
_NUMBER_WORDS = {word: str(value) for value, word in enumerate(_COUNTS.split())} | {
    "thirty": "30",
    "forty": "40",
    "fifty": "50",
    "hundred": "100",
}
DONT_KNOW = "I don't know."
ANSWER_SHARE = 1 / 3


def _stem(word: str) -> str:
    """A crude stem: a plural, -ing or -ed ending off, then at most five letters
    ("painting" and "paint", "commute" and "commuter" meet)."""
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word[:5]


def _terms(text: str) -> set[str]:
    words = normalize(text).replace("'s", "").split()
    return {_stem(w) for w in words if w not in _FUNCTION_WORDS and len(w) > 1}


def memory_statements(prompt: str) -> list[str]:
    """The statements remembered in a reader prompt, in the order shown: the sentences of its
    entries and context snapshots (lines opening with a bracketed date) and context bullets,
    labels taken off, questions left out (a question the user asked answers nothing)."""
    lines = [line.strip() for line in prompt.splitlines() if _MEMORY_LINE.match(line)]
    texts = [_LINE_PREFIX.sub("", line) for line in lines]
    return [
        text for text in texts if any(s and not s.endswith("?") for s in _SENTENCE_END.split(text))
    ]


def extractive_answer(prompt: str) -> str:
    """The remembered line that best matches the prompt's last `Question:`, or DONT_KNOW when
    the best holds less than ANSWER_SHARE of the question's term weight (a no-answer threshold).
    A term weighs log(1 + n / df): n lines shown, df of them holding it (1 for a term none
    holds); a line scores the weight of the question's terms it holds."""
    questions = list(_QUESTION.finditer(prompt))
    if not questions:
        return DONT_KNOW
    asked = _terms(questions[-1].group("question"))
    lines = memory_statements(prompt[: questions[-1].start()])
    held = [_terms(line) & asked for line in lines]
    counts = Counter(term for terms in held for term in terms)

    def weight(terms: set[str]) -> float:
        return sum(math.log(1 + len(lines) / max(counts[t], 1)) for t in terms)

    best, best_score = DONT_KNOW, 0.0
    for line, terms in zip(lines, held, strict=True):
        score = weight(terms)
        if score > 0 and score >= best_score:  # a tie goes to the later, more recent line
            best, best_score = line, score
    return best if best_score >= ANSWER_SHARE * weight(asked) else DONT_KNOW


def extractive_reader(messages: list[BaseMessage]) -> AIMessage:
    return AIMessage(content=extractive_answer(str(messages[-1].content)) if messages else "")


_GOLD = re.compile(r"^(?P<kind>Correct answer|Explanation|Rubric): (?P<gold>.*)$", re.M)
_RESPONSE = re.compile(r"^Model response: (?P<response>.*?)\n\n[^\n]*\?[^\n]*\s*\Z", re.M | re.S)
_HEAD_END = re.compile(r"\s*\(|[.,;!?](?:\s|$)|:\s")
_NOT_KNOWN = re.compile(
    r"\b(?:don't know|do not know|not enough|no information|not mentioned|cannot be answered"
    r"|can't answer|cannot answer|never mentioned)\b"
)


def lexical_text(text: str) -> str:
    """Normalised for matching: lower case, no punctuation or articles, number words as
    digits."""
    return " ".join(_NUMBER_WORDS.get(w, w) for w in normalize(text).split())


def gold_head(gold: str) -> str:
    """The answer itself, before an aside: '6 months ago (your first day …)' -> '6 months
    ago', '18 days. 19 days … is also acceptable.' -> '18 days'."""
    return _HEAD_END.split(gold.strip(), maxsplit=1)[0]


def lexical_verdict(kind: str, gold: str, response: str, unanswerable: bool) -> bool:
    """Whether `response` answers: it holds the gold answer's head as a phrase (a bare number as
    its only number); for an unanswerable question (kind Explanation), it says it does not
    know; a rubric is never met (no lexical check of one is fair)."""
    said = f" {lexical_text(response)} "
    if unanswerable or kind == "Explanation":
        return bool(_NOT_KNOWN.search(said))
    if kind == "Rubric":
        return False
    head = lexical_text(gold_head(gold))
    if head.isdigit():  # a bare count: the one number the response gives
        return [w for w in said.split() if w.isdigit()] == [head]
    return bool(head) and f" {head} " in said


def lexical_judge(messages: list[BaseMessage]) -> AIMessage:
    text = str(messages[-1].content) if messages else ""
    gold, response = _GOLD.search(text), _RESPONSE.search(text)
    if not gold or not response:
        return AIMessage(content="unreadable")
    unanswerable = "cannot be answered" in text.split("Question:")[0]
    verdict = lexical_verdict(
        gold.group("kind"), gold.group("gold"), response.group("response"), unanswerable
    )
    return AIMessage(content="yes" if verdict else "no")
