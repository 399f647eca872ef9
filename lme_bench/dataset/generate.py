"""Deterministic generator of LongMemEval-format files at S and M scale, for performance runs.

Each generated question copies one source question (cycled in order) with its question, answer,
dates and evidence sessions untouched, and pads its haystack with synthetic filler sessions of
plausible everyday chat built from templates and a topic word bank, so that retrieval indexes and
memory systems see realistic volumes: S ≈ 48 sessions (38-62) and ≈ 500 turns per question,
M ≈ 500 sessions per question.

The output is written as a stream (one question in memory at a time) to a temporary file in the
destination folder, then moved into place, and is byte-for-byte identical for the same source,
seed, scale and question count. Generated data is for measuring speed and memory use only: its
accuracy numbers mean nothing.

Generated question ids: ``<source id>_g<index>`` where index is the 0-based position in the output
(at least 4 digits), with the ``_abs`` suffix of abstention questions moved back to the end, e.g.
``3f9a21c7`` → ``3f9a21c7_g0000``, ``gpt4_2655b836_abs`` → ``gpt4_2655b836_g0001_abs``.
"""

from __future__ import annotations

import contextlib
import importlib.resources
import json
import os
import random
import re
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from importlib.resources.abc import Traversable
from pathlib import Path
from string import Formatter
from typing import Any, Final, Literal

__all__ = ["DATE_FORMAT", "GenerationStats", "Scale", "default_source", "generate_dataset"]

Scale = Literal["s", "m"]
"""Haystack size: ``"s"`` like longmemeval_s (≈48 sessions), ``"m"`` like longmemeval_m (≈500)."""
Turn = dict[str, Any]
Session = list[Turn]

DATE_FORMAT: Final = "%Y/%m/%d (%a) %H:%M"
"""LongMemEval date format, e.g. ``2023/05/30 (Tue) 23:40`` (English weekday names)."""

_WEEKDAYS: Final = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_DATE_RE: Final = re.compile(r"^(\d{4})/(\d{2})/(\d{2}) \(([A-Za-z]{3})\) (\d{2}):(\d{2})$")
_ALNUM: Final = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_ABS_SUFFIX: Final = "_abs"
_FILLER_SPAN_MINUTES: Final = 365 * 24 * 60
_MIN_GAP_MINUTES: Final = 30


@dataclass(frozen=True)
class GenerationStats:
    """What one `generate_dataset` call wrote."""

    questions: int
    sessions: int
    turns: int
    bytes: int
    seconds: float


@dataclass(frozen=True)
class _ScaleSpec:
    min_sessions: int
    max_sessions: int
    mode_sessions: float


# Sessions per question, evidence included (triangular distribution, like S's 38-62 with mean ≈48).
_SCALES: Final[dict[str, _ScaleSpec]] = {
    "s": _ScaleSpec(38, 62, 45.0),
    "m": _ScaleSpec(475, 525, 500.0),
}


# ---------------------------------------------------------------------------------------------
# Source questions
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Evidence:
    when: datetime
    session_id: str
    date: str
    session: Session


@dataclass(frozen=True)
class _SourceQuestion:
    base_id: str
    abstention: bool
    question_type: str
    question: str
    answer: Any
    question_date: str
    question_when: datetime
    answer_session_ids: tuple[str, ...]
    evidence: tuple[_Evidence, ...]


def default_source() -> Traversable:
    """The bundled LongMemEval sample (may not exist in a partial checkout)."""
    return importlib.resources.files("lme_bench.dataset") / "sample" / "longmemeval_sample.json"


def _parse_date(value: object, where: str) -> datetime:
    if not isinstance(value, str):
        raise ValueError(f"{where}: date must be a string, got {value!r}")
    m = _DATE_RE.match(value)
    if m is None:
        raise ValueError(f"{where}: date {value!r} is not in the form 2023/05/30 (Tue) 23:40")
    year, month, day, _wd, hour, minute = m.groups()
    try:
        return datetime(int(year), int(month), int(day), int(hour), int(minute))
    except ValueError as exc:
        raise ValueError(f"{where}: invalid date {value!r}: {exc}") from None


def _format_date(when: datetime) -> str:
    return (
        f"{when.year:04d}/{when.month:02d}/{when.day:02d} ({_WEEKDAYS[when.weekday()]}) "
        f"{when.hour:02d}:{when.minute:02d}"
    )


def _require(raw: dict[str, Any], key: str, where: str) -> Any:
    if key not in raw:
        raise ValueError(f"{where}: missing field {key!r}")
    return raw[key]


def _source_question(raw: object, position: int) -> _SourceQuestion:
    if not isinstance(raw, dict):
        raise ValueError(f"source question #{position} is not an object")
    qid = _require(raw, "question_id", f"source question #{position}")
    if not isinstance(qid, str) or not qid:
        raise ValueError(f"source question #{position}: question_id must be a non-empty string")
    where = f"source question {qid!r}"
    abstention = qid.endswith(_ABS_SUFFIX)
    base_id = qid[: -len(_ABS_SUFFIX)] if abstention else qid

    question_date = _require(raw, "question_date", where)
    question_when = _parse_date(question_date, f"{where} question_date")
    answer_ids = _require(raw, "answer_session_ids", where)
    if not isinstance(answer_ids, list) or not all(isinstance(s, str) for s in answer_ids):
        raise ValueError(f"{where}: answer_session_ids must be a list of strings")
    session_ids = _require(raw, "haystack_session_ids", where)
    dates = _require(raw, "haystack_dates", where)
    sessions = raw.get("haystack_sessions", raw.get("sessions"))
    if sessions is None:
        raise ValueError(f"{where}: missing field 'haystack_sessions'")
    if not (
        isinstance(session_ids, list) and isinstance(dates, list) and isinstance(sessions, list)
    ):
        raise ValueError(f"{where}: haystack fields must be lists")
    if not len(session_ids) == len(dates) == len(sessions):
        raise ValueError(
            f"{where}: haystack lists differ in length "
            f"({len(session_ids)} ids, {len(dates)} dates, {len(sessions)} sessions)"
        )

    wanted = set(answer_ids)
    evidence: list[_Evidence] = []
    for sid, date, session in zip(session_ids, dates, sessions, strict=True):
        if sid in wanted:
            if not isinstance(session, list):
                raise ValueError(f"{where}: session {sid!r} is not a list of turns")
            when = _parse_date(date, f"{where} session {sid!r}")
            evidence.append(_Evidence(when, sid, date, session))
    missing = wanted - {e.session_id for e in evidence}
    if missing:
        raise ValueError(f"{where}: answer sessions not in the haystack: {sorted(missing)}")

    return _SourceQuestion(
        base_id=base_id,
        abstention=abstention,
        question_type=str(_require(raw, "question_type", where)),
        question=str(_require(raw, "question", where)),
        answer=_require(raw, "answer", where),
        question_date=question_date,
        question_when=question_when,
        answer_session_ids=tuple(answer_ids),
        evidence=tuple(evidence),
    )


def _load_source(source: Path | Traversable) -> list[_SourceQuestion]:
    if not source.is_file():
        raise FileNotFoundError(f"LongMemEval source file not found: {source}")
    with source.open("r", encoding="utf-8") as fh:
        data = json.load(fh)
    if not isinstance(data, list) or not data:
        raise ValueError(f"{source}: expected a non-empty JSON array of LongMemEval questions")
    questions = [_source_question(raw, i) for i, raw in enumerate(data)]
    del data
    return questions


# ---------------------------------------------------------------------------------------------
# Word bank
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Topic:
    name: str
    nouns: tuple[str, ...]
    verbs: tuple[str, ...]
    adjectives: tuple[str, ...]
    proper: tuple[str, ...]


def _t(name: str, nouns: str, verbs: str, adjectives: str, proper: str) -> _Topic:
    def split(s: str) -> tuple[str, ...]:
        return tuple(w.strip() for w in s.split(",") if w.strip())

    return _Topic(name, split(nouns), split(verbs), split(adjectives), split(proper))


_TOPICS: Final = (
    _t(
        "cooking",
        "recipe, skillet, garlic, onion, risotto, sourdough, marinade, oven, saucepan, cumin, "
        "paprika, broth, lentils, chickpeas, dough, yeast, butter, olive oil, cast iron pan, "
        "stock pot, spatula, cilantro, ginger, soy sauce, pantry, casserole, vinaigrette, tofu",
        "simmer, roast, saute, braise, whisk, knead, marinate, season, chop, bake, grill, "
        "blanch, ferment, caramelize, dice",
        "crispy, tender, savory, tangy, creamy, smoky, aromatic, hearty, flaky, zesty, spicy",
        "Thai green curry, Neapolitan pizza, French omelette, Moroccan tagine, Japanese ramen, "
        "Mexican mole, Indian dal, Greek moussaka, Ottolenghi, Julia Child",
    ),
    _t(
        "travel",
        "itinerary, passport, hostel, layover, luggage, backpack, visa, ferry, rail pass, "
        "guidebook, museum, boutique hotel, airport, souvenir, currency, rental car, trailhead, "
        "beach, campsite, reservation, night market, walking tour, travel insurance, carry-on",
        "book, explore, pack, visit, navigate, reserve, wander, fly, sightsee, hike, budget, "
        "photograph, backpack through",
        "scenic, affordable, crowded, remote, charming, historic, coastal, walkable, off-season, "
        "touristy, picturesque",
        "Lisbon, Kyoto, Patagonia, Reykjavik, Marrakech, Banff, Edinburgh, Hanoi, Cape Town, "
        "Tuscany, the Amalfi Coast, Oaxaca",
    ),
    _t(
        "programming",
        "function, variable, database, repository, compiler, debugger, API, endpoint, framework, "
        "library, module, regex, query, index, cache, thread, container, pipeline, unit test, "
        "stack trace, dependency, schema, array, dictionary, exception, pull request, linter",
        "refactor, debug, deploy, compile, optimize, parse, serialize, profile, lint, benchmark, "
        "merge, test, document, containerize, rewrite",
        "asynchronous, recursive, scalable, readable, idempotent, concurrent, typed, modular, "
        "deprecated, lightweight, flaky",
        "Python, Rust, TypeScript, PostgreSQL, Docker, Kubernetes, React, Django, Git, Linux, "
        "GitHub Actions, SQLite",
    ),
    _t(
        "fitness",
        "squat, deadlift, treadmill, kettlebell, dumbbell, stretching routine, cardio, interval, "
        "warmup, protein shake, hamstring, posture, plank, rowing machine, marathon, stamina, "
        "recovery day, heart rate, yoga mat, resistance band, foam roller, pull-up bar",
        "stretch, lift, jog, sprint, train, recover, hydrate, strengthen, warm up, cool down, "
        "row, cycle, swim, foam roll",
        "intense, low-impact, sore, flexible, consistent, aerobic, explosive, steady, "
        "beginner-friendly, progressive, sweaty",
        "couch-to-5K, CrossFit, Pilates, HIIT, Zumba, Tabata, Strava, Peloton, Starting Strength, "
        "the Boston Marathon",
    ),
    _t(
        "personal finance",
        "budget, savings account, mortgage, credit score, index fund, portfolio, dividend, "
        "retirement plan, pension, interest rate, paycheck, expense, invoice, tax return, "
        "emergency fund, loan, stock, bond, inflation, deductible, credit card, subscription",
        "invest, save, refinance, diversify, allocate, deduct, withdraw, deposit, track, "
        "rebalance, borrow, consolidate, pay off",
        "frugal, tax-advantaged, volatile, diversified, fixed, variable, long-term, passive, "
        "high-yield, conservative, recurring",
        "Roth IRA, 401(k), Vanguard, the S&P 500, Fidelity, Schwab, YNAB, Mint, the FIRE movement, "
        "a certificate of deposit",
    ),
    _t(
        "gardening",
        "tomato plant, seedling, compost, mulch, trellis, raised bed, perennial, succulent, "
        "fertilizer, pruning shears, soil, watering can, greenhouse, aphids, zucchini, lavender, "
        "hydrangea, rosemary, irrigation, root system, potting mix, cuttings, herb garden",
        "prune, transplant, water, fertilize, sow, weed, harvest, propagate, mulch, germinate, "
        "repot, compost, deadhead",
        "shady, drought-tolerant, organic, leafy, fragrant, sunny, loamy, invasive, hardy, "
        "blooming, waterlogged",
        "USDA zone 7, Miracle-Gro, Japanese maple, an English cottage garden, Kew Gardens, "
        "heirloom Brandywine tomatoes, Monty Don",
    ),
    _t(
        "music",
        "guitar, chord progression, scale, metronome, piano, melody, rhythm, tempo, album, "
        "playlist, vinyl record, amplifier, drum kit, ukulele, harmony, lyrics, concert, setlist, "
        "microphone, synthesizer, capo, sheet music, bass line",
        "strum, practice, compose, record, tune, improvise, harmonize, transpose, mix, rehearse, "
        "perform, arrange, sight-read",
        "acoustic, melodic, upbeat, syncopated, mellow, distorted, soulful, minor, major, "
        "rhythmic, catchy",
        "Beethoven, Miles Davis, Fleetwood Mac, Radiohead, Taylor Swift, Bach, Ableton, "
        "a Fender Stratocaster, Joni Mitchell, Nina Simone",
    ),
    _t(
        "history",
        "empire, dynasty, treaty, revolution, manuscript, archive, monarchy, battle, cathedral, "
        "parliament, colony, trade route, artifact, chronicle, republic, crusade, renaissance, "
        "pharaoh, senate, monastery, primary source, census record",
        "conquer, negotiate, excavate, document, colonize, rebuild, abolish, reform, unify, "
        "interpret, chronicle, rule",
        "medieval, ancient, imperial, colonial, feudal, Byzantine, Victorian, revolutionary, "
        "archaeological, dynastic",
        "the Roman Empire, the Ming dynasty, the Magna Carta, the Ottoman Empire, the Industrial "
        "Revolution, the Silk Road, Napoleon, Cleopatra, Charlemagne, the Meiji Restoration",
    ),
    _t(
        "photography",
        "aperture, shutter speed, lens, tripod, exposure, histogram, ISO setting, composition, "
        "portrait, landscape shot, bokeh, polarizing filter, sensor, viewfinder, flash, raw file, "
        "golden hour, preset, memory card, prime lens",
        "shoot, frame, edit, expose, focus, crop, retouch, bracket, calibrate, compose, "
        "color-grade",
        "sharp, grainy, overexposed, wide-angle, moody, vibrant, candid, monochrome, telephoto, "
        "symmetrical",
        "Canon, Nikon, Fujifilm, Lightroom, Ansel Adams, Sony Alpha, Leica, Vivian Maier",
    ),
    _t(
        "home improvement",
        "drywall, faucet, grout, thermostat, insulation, ladder, cabinet, tile, paint roller, "
        "circuit breaker, hinge, caulk, power drill, baseboard, gutter, shelf, plywood, sander, "
        "wallpaper, countertop, stud finder, smoke detector",
        "install, sand, patch, repaint, replace, seal, insulate, measure, assemble, drill, "
        "renovate, declutter, unclog",
        "leaky, sturdy, cordless, energy-efficient, rustic, minimalist, waterproof, load-bearing, "
        "cozy, drafty",
        "IKEA, Home Depot, Lowe's, Bosch, DeWalt, Benjamin Moore, This Old House",
    ),
    _t(
        "pet care",
        "puppy, kitten, leash, litter box, veterinarian, kibble, crate, chew toy, grooming kit, "
        "vaccination, aquarium, parrot, hamster, collar, treats, flea medication, harness, "
        "scratching post, dog park, microchip",
        "adopt, groom, train, walk, feed, socialize, housebreak, brush, reward, bathe",
        "playful, anxious, shy, energetic, loyal, curious, senior, rescued, hypoallergenic, fluffy",
        "a golden retriever, a Maine Coon, a border collie, a dachshund, a Siamese cat, a beagle, "
        "a corgi, the ASPCA",
    ),
    _t(
        "books and movies",
        "novel, chapter, protagonist, plot twist, sequel, documentary, screenplay, trilogy, "
        "audiobook, memoir, anthology, director, soundtrack, cinematography, book club, "
        "paperback, character arc, narrator, film festival",
        "read, binge, recommend, review, annotate, adapt, stream, summarize, discuss, reread",
        "gripping, slow-burning, dystopian, whimsical, suspenseful, thought-provoking, "
        "nonfiction, animated, classic, bittersweet",
        "Tolkien, Jane Austen, Studio Ghibli, Christopher Nolan, Agatha Christie, Dune, "
        "Toni Morrison, Hitchcock, Goodreads, Ursula K. Le Guin",
    ),
    _t(
        "career planning",
        "resume, job interview, promotion, manager, deadline, salary, negotiation, portfolio, "
        "cover letter, mentor, networking event, performance review, onboarding, stakeholder, "
        "meeting, presentation, freelance contract, certification, side project",
        "negotiate, apply, delegate, prioritize, present, network, mentor, pivot, upskill, "
        "collaborate, interview, shadow",
        "remote, hybrid, entry-level, senior, cross-functional, competitive, flexible, "
        "rewarding, stressful, strategic",
        "LinkedIn, Slack, Jira, Coursera, Toastmasters, Google Calendar, Notion, Glassdoor",
    ),
    _t(
        "nutrition",
        "vitamin D, hydration, fiber, sleep schedule, meal prep, blood pressure, cholesterol, "
        "magnesium, probiotic, caffeine, sugar intake, calorie count, breakfast, snack, smoothie, "
        "oatmeal, salmon, spinach, quinoa, greek yogurt",
        "hydrate, digest, supplement, portion, snack, meditate, rest, monitor, balance, "
        "cut back on",
        "nutritious, balanced, plant-based, gluten-free, low-sodium, wholesome, processed, "
        "anti-inflammatory, restful, fermented",
        "the Mediterranean diet, the DASH diet, intermittent fasting, Fitbit, Headspace, "
        "the keto diet, MyFitnessPal",
    ),
    _t(
        "car maintenance",
        "engine, tire, brake pad, oil change, transmission, battery, dashboard, mileage, "
        "spark plug, windshield, coolant, alternator, road trip, parking spot, insurance policy, "
        "headlight, wiper blade, charging station",
        "drive, repair, rotate, inspect, lease, refuel, charge, tow, park, detail",
        "fuel-efficient, electric, used, reliable, compact, noisy, all-wheel-drive, vintage, "
        "spacious, turbocharged",
        "a Toyota Corolla, a Tesla Model 3, a Honda Civic, a Subaru Outback, a Ford F-150, "
        "a Volkswagen Golf, Jiffy Lube",
    ),
    _t(
        "astronomy",
        "telescope, galaxy, nebula, constellation, eclipse, orbit, planet, asteroid, comet, "
        "meteor shower, spectrum, gravity, exoplanet, lunar crater, star chart, observatory, "
        "light pollution, binoculars, eyepiece",
        "observe, measure, calculate, track, photograph, magnify, predict, align, classify, "
        "stargaze",
        "celestial, faint, dense, infrared, distant, orbital, cosmic, luminous, gaseous, "
        "elliptical",
        "Jupiter, Saturn, Andromeda, Orion, the Hubble telescope, the James Webb telescope, "
        "the Perseids, Mars, NASA, Carl Sagan",
    ),
    _t(
        "language learning",
        "vocabulary, grammar, flashcard deck, accent, conjugation, pronunciation, idiom, tutor, "
        "textbook, dialect, subtitles, immersion, fluency, verb tense, phrasebook, "
        "conversation partner, writing system",
        "memorize, conjugate, translate, pronounce, practice, review, converse, transcribe, "
        "shadow, immerse",
        "fluent, conversational, irregular, formal, informal, phonetic, intermediate, native, "
        "tonal, bilingual",
        "Spanish, Japanese, Mandarin, German, Italian, Duolingo, Anki, Portuguese, Korean, "
        "the DELE exam",
    ),
    _t(
        "board and video games",
        "board game, jigsaw puzzle, controller, quest, strategy, dice, deck, tabletop campaign, "
        "speedrun, multiplayer mode, level, chess opening, console, expansion pack, leaderboard, "
        "game night, save file",
        "play, level up, unlock, strategize, host, craft, solve, collect, paint, grind",
        "cooperative, competitive, open-world, turn-based, immersive, casual, retro, "
        "challenging, indie, addictive",
        "Catan, Dungeons & Dragons, Zelda, Minecraft, Stardew Valley, a Nintendo Switch, "
        "Elden Ring, Ticket to Ride, Wingspan",
    ),
)

_GENERAL_NOUNS: Final = (
    "weekend", "schedule", "budget", "neighbor", "colleague", "family", "afternoon", "routine",
    "notebook", "apartment", "morning", "evening", "holiday", "birthday", "spreadsheet",
    "checklist", "podcast", "article", "video tutorial", "library", "community", "calendar",
    "commute", "lunch break", "to-do list", "group chat", "newsletter", "workshop", "deadline",
    "vacation", "hobby", "weeknight", "energy level", "motivation",
)  # fmt: skip
_PEOPLE: Final = (
    "friend", "sister", "brother", "coworker", "neighbor", "roommate", "partner", "cousin",
    "mom", "dad", "aunt", "uncle", "manager", "teacher", "best friend", "grandmother",
)  # fmt: skip
_WHEN: Final = (
    "Mondays", "Tuesday evenings", "Wednesdays", "Thursday nights", "Friday afternoons",
    "Saturday mornings", "Sundays", "weekends", "weekday mornings", "my lunch break",
    "the first of the month", "rainy days",
)  # fmt: skip
_PERIOD: Final = ("week", "month", "weekend", "summer", "spring", "year", "fall", "winter")
_UNITS: Final = ("minutes", "hours", "days", "weeks")


# ---------------------------------------------------------------------------------------------
# Templates
# ---------------------------------------------------------------------------------------------


class _Ctx:
    """Per-session generation state: the random source, the topic and the focus noun."""

    __slots__ = ("focus", "rng", "topic")

    def __init__(self, rng: random.Random, topic: _Topic, focus: str) -> None:
        self.rng = rng
        self.topic = topic
        self.focus = focus


def _noun(c: _Ctx) -> str:
    if c.rng.random() < 0.12:
        return c.rng.choice(_GENERAL_NOUNS)
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
    g = c.rng.choice(_GENERAL_NOUNS)
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
    "g": lambda c: c.rng.choice(_GENERAL_NOUNS),
    "ag": _a_general,
    "who": lambda c: c.rng.choice(_PEOPLE),
    "when": lambda c: c.rng.choice(_WHEN),
    "period": lambda c: c.rng.choice(_PERIOD),
    "unit": lambda c: c.rng.choice(_UNITS),
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


def _filler_session(rng: random.Random) -> Session:
    topic = rng.choice(_TOPICS)
    c = _Ctx(rng, topic, rng.choice(topic.nouns))
    pairs = rng.randint(2, 8)
    if rng.random() < 0.1:
        pairs += rng.randint(1, 2)
    session: Session = []
    for i in range(pairs):
        session.append({"role": "user", "content": _user_text(c, i == 0)})
        session.append({"role": "assistant", "content": _assistant_text(c)})
    return session


def _filler_id(rng: random.Random, used: set[str]) -> str:
    while True:
        r = rng.random()
        if r < 0.45:
            sid = f"{rng.getrandbits(32):08x}_{rng.randint(1, 9)}"
        elif r < 0.8:
            sid = f"sharegpt_{''.join(rng.choices(_ALNUM, k=7))}_{rng.randint(0, 12)}"
        else:
            sid = f"ultrachat_{rng.randrange(1_000_000):06d}"
        if sid not in used and "answer" not in sid:
            used.add(sid)
            return sid


# ---------------------------------------------------------------------------------------------
# Questions
# ---------------------------------------------------------------------------------------------


def _question_id(src: _SourceQuestion, index: int, width: int) -> str:
    return f"{src.base_id}_g{index:0{width}d}{_ABS_SUFFIX if src.abstention else ''}"


def _build_question(
    src: _SourceQuestion, index: int, width: int, spec: _ScaleSpec, rng: random.Random
) -> tuple[dict[str, Any], int, int]:
    total = round(rng.triangular(spec.min_sessions, spec.max_sessions, spec.mode_sessions))
    n_fillers = max(0, total - len(src.evidence))

    used = {e.session_id for e in src.evidence}
    entries: list[tuple[datetime, str, str, Session]] = [
        (e.when, e.session_id, e.date, e.session) for e in src.evidence
    ]
    for _ in range(n_fillers):
        sid = _filler_id(rng, used)
        minutes_before = rng.randint(_MIN_GAP_MINUTES, _FILLER_SPAN_MINUTES)
        when = src.question_when - timedelta(minutes=minutes_before)
        entries.append((when, sid, _format_date(when), _filler_session(rng)))
    entries.sort(key=lambda e: e[0])  # stable: ties keep evidence first

    question = {
        "question_id": _question_id(src, index, width),
        "question_type": src.question_type,
        "question": src.question,
        "answer": src.answer,
        "question_date": src.question_date,
        "haystack_session_ids": [e[1] for e in entries],
        "haystack_dates": [e[2] for e in entries],
        "haystack_sessions": [e[3] for e in entries],
        "answer_session_ids": list(src.answer_session_ids),
    }
    return question, len(entries), sum(len(e[3]) for e in entries)


def generate_dataset(
    out_path: Path,
    *,
    n_questions: int,
    scale: Scale,
    seed: int = 0,
    source: Path | None = None,
) -> GenerationStats:
    """Write a synthetic LongMemEval-format JSON array of ``n_questions`` questions to ``out_path``.

    Source questions (default: the bundled sample) are cycled in order; each keeps its type,
    question, answer, question_date, answer_session_ids and evidence sessions (turns, has_answer
    flags and dates unchanged), and gets a fresh haystack of filler sessions dated over the year
    before question_date, sorted by date. ``scale="s"`` gives 38-62 sessions per question (≈48,
    ≈10 turns each); ``scale="m"`` gives ≈500. Question ``i`` depends only on the source question,
    ``seed``, ``scale`` and ``i``, so the output is byte-identical across runs.

    Raises FileNotFoundError if the source file does not exist and ValueError if it is not a
    LongMemEval-format array or the arguments are invalid.
    """
    started = time.perf_counter()
    if scale not in _SCALES:
        raise ValueError(f"scale must be 's' or 'm', got {scale!r}")
    if n_questions < 0:
        raise ValueError(f"n_questions must be >= 0, got {n_questions}")
    spec = _SCALES[scale]
    sources = _load_source(default_source() if source is None else Path(source))
    width = max(4, len(str(max(n_questions - 1, 0))))

    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{out_path.name}.", suffix=".tmp", dir=out_path.parent)
    sessions = turns = 0
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n", buffering=1 << 20) as fh:
            fh.write("[")
            for i in range(n_questions):
                rng = random.Random(f"lme-bench/generate/{seed}/{scale}/{i}")
                question, n_sessions, n_turns = _build_question(
                    sources[i % len(sources)], i, width, spec, rng
                )
                if i:
                    fh.write(", ")
                fh.write(json.dumps(question))
                del question
                sessions += n_sessions
                turns += n_turns
            fh.write("]")
        os.chmod(tmp_name, 0o644)
        os.replace(tmp_name, out_path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise
    return GenerationStats(
        questions=n_questions,
        sessions=sessions,
        turns=turns,
        bytes=out_path.stat().st_size,
        seconds=time.perf_counter() - started,
    )
