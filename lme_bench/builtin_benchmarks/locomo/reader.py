"""Read LoCoMo in either layout, validated, one conversation at a time.

- `locomo10.json`: a JSON array of samples, each `{"sample_id", "conversation": {"speaker_a",
  "speaker_b", "session_N", "session_N_date_time", ...}, "qa": [...], ...}`; streamed item by
  item.
- The repository's `data/locomo10.zip`: one file per conversation (`26.json`, ...) with the
  speakers, sessions and `qa` at the top level. Given as the zip itself, a folder of such files,
  or one such file. Files without a `sample_id` are named `conv-<file stem>`, the list layout's
  names, so both layouts give the same question ids.

Every problem is one `LocomoDataError` naming the file, the sample and the field.
"""

from __future__ import annotations

import json
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ijson

from lme_bench.builtin_benchmarks.locomo.dates import parse_session_date
from lme_bench.builtin_benchmarks.locomo.errors import LocomoDataError
from lme_bench.builtin_benchmarks.locomo.records import (
    ADVERSARIAL,
    CATEGORIES,
    Conversation,
    Gold,
    Question,
    Sample,
    Session,
    Turn,
    photo_text,
    question_id,
)

_SESSION_KEY = re.compile(r"^session_(\d+)$")


class _Place:
    """Where a value came from, to raise errors that name it."""

    def __init__(self, path: str, sample_id: str | None) -> None:
        self.path = path
        self.sample_id = sample_id

    def error(self, problem: str, field: str | None = None) -> LocomoDataError:
        return LocomoDataError(self.path, problem, sample_id=self.sample_id, field=field)

    def text(self, value: Any, field: str, *, empty_ok: bool = True) -> str:
        if not isinstance(value, str):
            raise self.error(f"expected a string, got {_kind(value)}", field)
        if not empty_ok and not value.strip():
            raise self.error("is empty", field)
        return value


def _kind(value: Any) -> str:
    return "nothing (missing)" if value is None else type(value).__name__


def _turn(place: _Place, raw: Any, field: str) -> Turn:
    if not isinstance(raw, dict):
        raise place.error(f"expected a turn object, got {_kind(raw)}", field)
    speaker = place.text(raw.get("speaker"), f"{field}.speaker", empty_ok=False)
    dia_id = place.text(raw.get("dia_id"), f"{field}.dia_id", empty_ok=False)
    text = place.text(raw.get("text"), f"{field}.text")
    caption = raw.get("blip_caption")
    if caption is not None:
        caption = place.text(caption, f"{field}.blip_caption")
    return Turn(speaker=speaker, dia_id=dia_id, text=photo_text(text, caption))


def _sessions(place: _Place, raw: dict[str, Any], prefix: str) -> tuple[Session, ...]:
    numbers = sorted(int(m.group(1)) for key in raw if (m := _SESSION_KEY.match(key)))
    sessions, seen = [], set()
    for number in numbers:
        field = f"{prefix}session_{number}"
        turns_raw = raw[f"session_{number}"]
        if not isinstance(turns_raw, list):
            raise place.error(f"expected a list of turns, got {_kind(turns_raw)}", field)
        if not turns_raw:
            continue  # an empty session, as the official code skips it
        date_time = place.text(raw.get(f"session_{number}_date_time"), f"{field}_date_time")
        try:
            date = parse_session_date(date_time)
        except ValueError as exc:
            raise place.error(str(exc), f"{field}_date_time") from None
        turns = tuple(_turn(place, t, f"{field}[{i}]") for i, t in enumerate(turns_raw))
        for i, turn in enumerate(turns):
            if turn.dia_id in seen:
                raise place.error(f"duplicate dia_id {turn.dia_id!r}", f"{field}[{i}].dia_id")
            seen.add(turn.dia_id)
        sessions.append(Session(number=number, date_time=date_time, date=date, turns=turns))
    if not sessions:
        raise place.error("no session_N list with turns", prefix.rstrip(".") or None)
    return tuple(sessions)


def _answer_text(place: _Place, value: Any, field: str) -> str:
    """Answers are strings, a few are numbers (years): their text, as the official scorer
    takes `str(answer)`."""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    raise place.error(f"expected a string or a number, got {_kind(value)}", field)


def _question(place: _Place, sample_id: str, index: int, raw: Any) -> tuple[Question, Gold]:
    field = f"qa[{index}]"
    if not isinstance(raw, dict):
        raise place.error(f"expected a question object, got {_kind(raw)}", field)
    text = place.text(raw.get("question"), f"{field}.question", empty_ok=False)
    category = raw.get("category")
    if isinstance(category, bool) or category not in CATEGORIES:
        raise place.error(f"expected a category 1-5, got {category!r}", f"{field}.category")
    evidence = raw.get("evidence")
    if not isinstance(evidence, list):
        raise place.error(
            f"expected a list of dialog ids, got {_kind(evidence)}", f"{field}.evidence"
        )
    for i, item in enumerate(evidence):
        place.text(item, f"{field}.evidence[{i}]")
    answer = raw.get("answer")
    if answer is not None:
        answer = _answer_text(place, answer, f"{field}.answer")
    elif category != ADVERSARIAL:
        raise place.error(f"category {category} needs an answer", f"{field}.answer")
    adversarial = raw.get("adversarial_answer")
    if adversarial is not None:
        adversarial = _answer_text(place, adversarial, f"{field}.adversarial_answer")
    qid = question_id(sample_id, index)
    question = Question(question_id=qid, conversation_id=sample_id, index=index, text=text)
    gold = Gold(
        question_id=qid,
        category=category,
        answer=answer,
        adversarial_answer=adversarial,
        evidence=tuple(evidence),
    )
    return question, gold


def _sample(
    path: str, sample_id: str, conversation: dict[str, Any], qa: Any, prefix: str
) -> Sample:
    place = _Place(path, sample_id)
    speaker_a = place.text(conversation.get("speaker_a"), f"{prefix}speaker_a", empty_ok=False)
    speaker_b = place.text(conversation.get("speaker_b"), f"{prefix}speaker_b", empty_ok=False)
    sessions = _sessions(place, conversation, prefix)
    if not isinstance(qa, list):
        raise place.error(f"expected a list of questions, got {_kind(qa)}", "qa")
    pairs = [_question(place, sample_id, i, raw) for i, raw in enumerate(qa)]
    return Sample(
        conversation=Conversation(
            conversation_id=sample_id, speaker_a=speaker_a, speaker_b=speaker_b, sessions=sessions
        ),
        questions=tuple(question for question, _ in pairs),
        gold=tuple(gold for _, gold in pairs),
    )


def _listed_sample(path: str, index: int, raw: Any) -> Sample:
    """One item of the `locomo10.json` array."""
    where = _Place(path, None)
    if not isinstance(raw, dict):
        raise where.error(f"expected a sample object, got {_kind(raw)}", f"[{index}]")
    sample_id = where.text(raw.get("sample_id"), f"[{index}].sample_id", empty_ok=False)
    conversation = raw.get("conversation")
    if not isinstance(conversation, dict):
        raise _Place(path, sample_id).error(
            f"expected an object, got {_kind(conversation)}", "conversation"
        )
    return _sample(path, sample_id, conversation, raw.get("qa"), "conversation.")


def _file_sample(path: str, stem: str, raw: Any) -> Sample:
    """One conversation file of the zip's layout (or one sample object on its own)."""
    if not isinstance(raw, dict):
        raise LocomoDataError(path, f"top level is {_kind(raw)}; expected a conversation object")
    given = raw.get("sample_id")
    sample_id = (
        given if isinstance(given, str) and given else (f"conv-{stem}" if stem.isdigit() else stem)
    )
    if isinstance(raw.get("conversation"), dict):
        return _sample(path, sample_id, raw["conversation"], raw.get("qa"), "conversation.")
    return _sample(path, sample_id, raw, raw.get("qa"), "")


def _parsed(path: str, data: bytes) -> Any:
    try:
        return json.loads(data)
    except UnicodeDecodeError:
        raise LocomoDataError(path, "not UTF-8 text; save the file as UTF-8") from None
    except json.JSONDecodeError as exc:
        raise LocomoDataError(path, f"invalid JSON: {exc}") from None


def _file_order(name: str) -> tuple[int, str]:
    stem = Path(name).stem
    return (int(stem), "") if stem.isdigit() else (1 << 30, name)


def _iter_list(path: Path) -> Iterator[Sample]:
    index = -1
    with path.open("rb") as handle:
        try:
            for index, raw in enumerate(ijson.items(handle, "item", use_float=True)):
                yield _listed_sample(str(path), index, raw)
        except (ijson.JSONError, UnicodeDecodeError) as exc:
            after = f"after sample #{index}" if index >= 0 else "in sample #0"
            raise LocomoDataError(path, f"invalid JSON {after}: {exc}") from None
    if index < 0:
        raise LocomoDataError(path, "the array holds no samples")


def _iter_zip(path: Path) -> Iterator[Sample]:
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile as exc:
        raise LocomoDataError(path, f"not a readable zip: {exc}") from None
    with archive:
        names = [
            n
            for n in archive.namelist()
            if n.endswith(".json") and "__MACOSX" not in n and not Path(n).name.startswith(".")
        ]
        if not names:
            raise LocomoDataError(path, "the zip holds no .json conversation files")
        for name in sorted(names, key=_file_order):
            place = f"{path}!{name}"
            yield _file_sample(place, Path(name).stem, _parsed(place, archive.read(name)))


def _iter_folder(path: Path) -> Iterator[Sample]:
    files = sorted(
        (p for p in path.glob("*.json") if p.is_file()), key=lambda p: _file_order(p.name)
    )
    if not files:
        raise LocomoDataError(path, "the folder holds no .json conversation files")
    for file in files:
        yield _file_sample(str(file), file.stem, _parsed(str(file), file.read_bytes()))


def iter_samples(path: Path | str) -> Iterator[Sample]:
    """Each conversation of a LoCoMo file, zip or folder, validated, in order."""
    path = Path(path)
    if path.is_dir():
        yield from _iter_folder(path)
        return
    if not path.is_file():
        raise LocomoDataError(path, "no such file or folder")
    if zipfile.is_zipfile(path):
        yield from _iter_zip(path)
        return
    with path.open("rb") as handle:
        head = handle.read(4096).lstrip(b"\xef\xbb\xbf").lstrip()[:1]
    if not head:
        raise LocomoDataError(path, "the file is empty")
    if head == b"[":
        yield from _iter_list(path)
    elif head == b"{":
        yield _file_sample(str(path), path.stem, _parsed(str(path), path.read_bytes()))
    else:
        raise LocomoDataError(path, "not JSON: expected an array of samples or one conversation")


def load_samples(path: Path | str) -> list[Sample]:
    return list(iter_samples(path))
