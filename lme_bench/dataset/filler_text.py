"""Synthetic filler chat sessions: plausible everyday user/assistant turns built from templates.

Templates use ``{slot}`` fields (see `_SLOTS`) filled from the `filler_topics` word bank. A
session picks one topic and one focus noun, then alternates user turns (10-60 words) and
assistant turns (30-150 words). All randomness comes from the caller's `random.Random`, so the
text is fully determined by its state.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from string import Formatter
from typing import Final

from lme_bench.dataset.filler_topics import (
    GENERAL_NOUNS,
    PEOPLE,
    PERIOD,
    TOPICS,
    UNITS,
    WHEN,
    Topic,
)

__all__ = ["filler_session"]


class _Ctx:
    """Per-session generation state: the random source, the topic and the focus noun."""

    __slots__ = ("focus", "rng", "topic")

    def __init__(self, rng: random.Random, topic: Topic, focus: str) -> None:
        self.rng = rng
        self.topic = topic
        self.focus = focus


def _noun(c: _Ctx) -> str:
    if c.rng.random() < 0.12:
        return c.rng.choice(GENERAL_NOUNS)
    return c.rng.choice(c.topic.nouns)


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def _a_noun(c: _Ctx) -> str:
    n = _noun(c)
    return f"{_article(n)} {n}"


def _a_adj_noun(c: _Ctx) -> str:
    a = c.rng.choice(c.topic.adjectives)
    return f"{_article(a)} {a} {_noun(c)}"


def _a_general(c: _Ctx) -> str:
    g = c.rng.choice(GENERAL_NOUNS)
    return f"{_article(g)} {g}"


_SLOTS: Final[dict[str, Callable[[_Ctx], str]]] = {
    "n": _noun,
    "an": _a_noun,
    "aan": _a_adj_noun,
    "v": lambda c: c.rng.choice(c.topic.verbs),
    "a": lambda c: c.rng.choice(c.topic.adjectives),
    "p": lambda c: c.rng.choice(c.topic.proper),
    "f": lambda c: c.focus,
    "topic": lambda c: c.topic.name,
    "g": lambda c: c.rng.choice(GENERAL_NOUNS),
    "ag": _a_general,
    "who": lambda c: c.rng.choice(PEOPLE),
    "when": lambda c: c.rng.choice(WHEN),
    "period": lambda c: c.rng.choice(PERIOD),
    "unit": lambda c: c.rng.choice(UNITS),
    "k": lambda c: str(c.rng.randint(2, 45)),
    "pct": lambda c: str(c.rng.randrange(5, 95, 5)),
}

_Template = tuple[str | Callable[[_Ctx], str], ...]


def _compile(templates: Sequence[str]) -> tuple[_Template, ...]:
    compiled: list[_Template] = []
    for template in templates:
        parts: list[str | Callable[[_Ctx], str]] = []
        for literal, field, _spec, _conv in Formatter().parse(template):
            if literal:
                parts.append(literal)
            if field is not None:
                parts.append(_SLOTS[field])
        compiled.append(tuple(parts))
    return tuple(compiled)


def _render(template: _Template, c: _Ctx) -> str:
    s = "".join(p if isinstance(p, str) else p(c) for p in template)
    return s[0].upper() + s[1:]


_USER_OPENERS: Final = _compile(
    (
        "I've been getting into {topic} lately and I want to learn more about the {f}.",
        "Can you help me figure out how to {v} the {f}?",
        "Quick question about the {f}: what's the best way to {v} it?",
        "I'm planning something around {p} and I need some advice on the {f}.",
        "My {g} keeps getting in the way of {topic}, so I need a simpler approach to the {f}.",
        "I want to get better at {topic}, especially anything involving the {f}.",
        "Could you explain the basics of the {f} to someone who is new to {topic}?",
        "Write a short guide about the {f} for {topic} beginners.",
        "What are the most important things to know about {aan} before I start?",
        "I need a plan to {v} the {f} over the next {k} {unit}.",
        "My {who} got me interested in {topic} and now I'm curious about the {f}.",
        "Hey, I have a question about {topic}.",
    )
)
_USER_FOLLOWUPS: Final = _compile(
    (
        "Thanks, that's helpful.",
        "Interesting, I hadn't thought about the {n}.",
        "That makes sense.",
        "Okay, what about the {n}?",
        "Got it.",
        "Great, one more thing.",
        "Hmm, I'm not sure that works for me.",
        "Perfect, that's exactly what I needed.",
        "Can you go into more detail on that?",
        "Good point about the {n}.",
        "Thanks! Follow-up question.",
    )
)
_USER_BODY: Final = _compile(
    (
        "I usually {v} the {n} on {when}, but it takes about {k} {unit}.",
        "My {who} suggested using {aan} instead of the {n}.",
        "I tried {p} last {period} and it went better than I expected.",
        "Is it worth spending extra on {aan}?",
        "How often should I {v} the {n}?",
        "I have about {k} hours a week for this, so I want to keep it simple.",
        "Would you recommend starting with the {n} or the {n}?",
        "The problem is that the {n} always ends up {a}.",
        "I read an article saying {p} is the way to go, is that true?",
        "I'm on a tight {g} so cheaper options are better.",
        "What mistakes do beginners usually make with the {n}?",
        "Also, does the {n} matter much when you {v} it?",
        "Last {period} I spent way too long trying to {v} the {n}.",
        "I'd like something {a} but not too complicated.",
        "Ideally I could fit it into {when} without changing my {g}.",
        "Do you think {p} would be a good fit for someone like me?",
        "I keep {ag} to track things, if that helps.",
        "Right now I only have {an} and {an} to work with.",
        "My {who} says I should {v} more often, but I'm not convinced.",
        "About {pct} percent of the time it works, the rest of the time it doesn't.",
        "What would you do differently if you were in my position?",
        "Can you compare the {n} with the {n} for me?",
    )
)
_ASSISTANT_OPENERS: Final = _compile(
    (
        "Great question!",
        "Sure, happy to help.",
        "That's a really common situation.",
        "Absolutely.",
        "Here's how I would approach it.",
        "Good thinking.",
        "There are a few things to consider here.",
        "Of course!",
        "That's a great goal, and {topic} is very rewarding.",
        "Let's break it down.",
        "It depends a little on your situation, but here are some ideas.",
        "You're on the right track.",
    )
)
_ASSISTANT_BODY: Final = _compile(
    (
        "When you {v} the {f}, start with {aan} and adjust from there.",
        "Many people find that the {n} and the {n} work well together, especially if you {v} "
        "regularly.",
        "{aan} is usually a safe choice for beginners.",
        "If you have {k} minutes a day, you can {v} the {n} and still have time to {v} the {n}.",
        "It helps to keep {ag} where you track the {n} over time.",
        "{p} is a popular option, although {aan} can give similar results.",
        "Try not to rush the {n}; {a} results usually come from patience.",
        "One common mistake is to {v} the {n} too early.",
        "You could also look into {p}, which many people recommend for the {f}.",
        "Consider how your {g} fits in, since consistency matters more than intensity.",
        "The key is to {v} the {f} gradually and pay attention to the {n}.",
        "A simple routine might be to {v} on {when} and {v} the {n} on {when}.",
        "If the {n} feels {a}, that is normal at first and it improves with practice.",
        "Set a small goal for the next {k} {unit} and review how the {f} is going.",
        "Budget-wise, {an} costs less than most people expect, while {aan} is a splurge.",
        "Some experts prefer {p}, but the {n} matters more than the brand.",
        "Ask your {who} to join you; having company makes it easier to {v} consistently.",
        "Roughly {pct} percent of beginners skip this step, and it shows later on.",
        "Make sure the {n} is ready before you {v} anything else.",
        "If something goes wrong, {v} the {n} again and compare the results.",
        "For more depth, a good {g} or a local {topic} group can be really useful.",
        "Keep notes on what you {v} and when, so patterns become easier to spot.",
        "{aan} and {aan} are both reasonable choices here.",
        "The difference between the {n} and the {n} is mostly about how often you {v}.",
        "Don't worry about getting the {f} perfect on the first try.",
    )
)
_ASSISTANT_CLOSERS: Final = _compile(
    (
        "Let me know if you want more detail on the {n}.",
        "I hope this helps with the {f}!",
        "Feel free to ask if anything about {p} is unclear.",
        "Good luck, and enjoy {topic}!",
        "Would you like a step-by-step plan for the next {k} {unit}?",
        "Happy to suggest more resources if you need them.",
    )
)


def _grow(
    c: _Ctx, pool: tuple[_Template, ...], count: int, target: int, limit: int, numbered: bool
) -> list[str]:
    """Sentences from ``pool`` until ``count`` words reach ``target``, never passing ``limit``."""
    body: list[str] = []
    while count < target:
        s = _render(c.rng.choice(pool), c)
        if numbered:
            s = f"{len(body) + 1}. {s}"
        words = s.split()
        if count + len(words) > limit:
            room = limit - count
            if room < 3:
                break
            s = " ".join(words[:room]).rstrip(",;:-")
            if s[-1] not in ".?!":
                s += "."
            words = words[:room]
        body.append(s)
        count += len(words)
    return body


def _user_text(c: _Ctx, first: bool) -> str:
    """A user turn of 10-60 words."""
    opener = _render(c.rng.choice(_USER_OPENERS if first else _USER_FOLLOWUPS), c)
    target = c.rng.randint(10, 60)
    body = _grow(c, _USER_BODY, len(opener.split()), target, 60, False)
    return " ".join([opener, *body])


def _assistant_text(c: _Ctx) -> str:
    """An assistant turn of 30-150 words: opener, prose or a numbered list, optional closer."""
    rng = c.rng
    opener = _render(rng.choice(_ASSISTANT_OPENERS), c)
    closer = _render(rng.choice(_ASSISTANT_CLOSERS), c) if rng.random() < 0.6 else ""
    target = rng.randint(30, 150)
    numbered = target >= 60 and rng.random() < 0.3
    count = len(opener.split()) + len(closer.split())
    body = _grow(c, _ASSISTANT_BODY, count, target, 150, numbered)
    if numbered:
        text = opener + "\n\n" + "\n".join(body)
        return f"{text}\n\n{closer}" if closer else text
    return " ".join([opener, *body, closer]) if closer else " ".join([opener, *body])


def filler_session(rng: random.Random) -> list[dict[str, str]]:
    """One filler session: 2-10 alternating user/assistant turn pairs about one random topic."""
    topic = rng.choice(TOPICS)
    c = _Ctx(rng, topic, rng.choice(topic.nouns))
    pairs = rng.randint(2, 8)
    if rng.random() < 0.1:
        pairs += rng.randint(1, 2)
    session: list[dict[str, str]] = []
    for i in range(pairs):
        session.append({"role": "user", "content": _user_text(c, i == 0)})
        session.append({"role": "assistant", "content": _assistant_text(c)})
    return session
