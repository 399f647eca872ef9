"""Judge prompts: one per question type and the abstention prompt for `_abs` ids.

Three sources, named in every score row and summary:
- `lme-bench` (the default, key-free): our own wording of the official per-type criteria, point
  by point and nothing more; not the official text (`prompts/v2/`).
- `custom`: a folder of the same shape, `[judge] prompts_dir` — text files named after the types
  they grade (`default.txt` for types without their own, `abstention.txt` for `_abs` ids) with
  the fields `{question}`, `{answer}`, `{response}`, and a `VERSION` file.
- `official`: the official `get_anscheck_prompt` from a LongMemEval checkout,
  `[judge] official_repo` (lme_bench.judge.official).
Prompts are chosen as the official script chooses them: by question type, with `_abs` anywhere
in the id choosing the abstention prompt. A benchmark without LongMemEval's types (LoCoMo,
builtin_benchmarks.locomo.judge_stage) takes the set's `generic` prompt, the criterion for
types without their own: `default.txt` of a folder; of the official script, which has no
prompt for a type it does not know, the criterion its single-session and multi-session types
share.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from importlib import resources
from pathlib import Path
from typing import Literal

from lme_bench.config.settings import ConfigError, JudgeSettings
from lme_bench.dataset.models import QUESTION_TYPES, is_abstention_id
from lme_bench.judge.official import OfficialScript, load_official_script

FIELDS = ("{question}", "{answer}", "{response}")
ABSTENTION = "abstention"
DEFAULT = "default"
GENERIC_TYPE = "single-session-user"
"""A type the official script grades by its generic criterion ("does the response contain the
correct answer"), as it does single-session-assistant and multi-session."""
OFFICIAL = "official"
Source = Literal["lme-bench", "custom", "official"]
DESCRIPTIONS: dict[str, str] = {
    "lme-bench": "lme-bench's wording of the official criteria, not the official text",
    "custom": "a custom prompt folder, not the official text",
    "official": "the official LongMemEval prompts",
}


class PromptSetError(ConfigError):
    """A prompt folder that cannot be used; names the folder and the file."""


@dataclass(frozen=True, slots=True)
class JudgePrompt:
    name: str  # a question type, "default" or "abstention"
    sha256: str  # of the template
    build: Callable[[str, str, str], str]  # (question, answer, response) -> the prompt

    def render(self, question: str, answer: str, response: str) -> str:
        return self.build(question, answer, response)


@dataclass(frozen=True, slots=True)
class PromptSet:
    version: str  # "official", "lme-bench-judge-v2", or a custom folder's VERSION
    source: Source
    choices: dict[tuple[str, bool], JudgePrompt]  # (question type, abstention) -> prompt
    generic: JudgePrompt  # the criterion for types without their own (named "default")
    script_sha256: str | None = None  # official: the sha256 of evaluate_qa.py

    def for_question(self, question_id: str, question_type: str) -> JudgePrompt:
        return self.choices[(question_type, is_abstention_id(question_id))]

    @property
    def abstention(self) -> JudgePrompt:
        """The prompt for a question that cannot be answered."""
        return self.choices[(GENERIC_TYPE, True)]

    @property
    def hashes(self) -> dict[str, str]:
        return {p.name: p.sha256 for p in sorted(self.choices.values(), key=lambda p: p.name)}

    @property
    def description(self) -> str:
        return DESCRIPTIONS[self.source]


def _fill(template: str, question: str, answer: str, response: str) -> str:
    return (
        template.replace("{question}", question)
        .replace("{answer}", answer)
        .replace("{response}", response)
    )


def bundled_prompts_dir() -> Path:
    return Path(str(resources.files("lme_bench.judge") / "prompts" / "v2"))


def _folder_prompts(folder: Path) -> tuple[str, dict[str, JudgePrompt]]:
    if not folder.is_dir():
        raise PromptSetError(f"{folder}: judge prompts folder not found")
    prompts: dict[str, JudgePrompt] = {}
    for path in sorted(folder.glob("*.txt")):
        text = path.read_text(encoding="utf-8")
        missing = [f for f in FIELDS if f not in text]
        if missing:
            raise PromptSetError(f"{path}: the prompt lacks {', '.join(missing)}")
        digest = hashlib.sha256(text.encode()).hexdigest()
        prompts[path.stem] = JudgePrompt(path.stem, digest, partial(_fill, text))
    for required in (DEFAULT, ABSTENTION):
        if required not in prompts:
            raise PromptSetError(f"{folder}: {required}.txt is missing")
    version_file = folder / "VERSION"
    version = version_file.read_text().strip() if version_file.exists() else folder.name
    return version, prompts


def _official_prompt(script: OfficialScript, question_type: str, abstention: bool) -> JudgePrompt:
    def build(question: str, answer: str, response: str) -> str:
        return script.prompt(question_type, question, answer, response, abstention=abstention)

    name = ABSTENTION if abstention else question_type
    return JudgePrompt(name, script.template_sha256(question_type, abstention), build)


def load_prompt_set(folder: Path | None = None, official_repo: Path | None = None) -> PromptSet:
    """The official prompts when `official_repo` is given, else a folder's, else ours."""
    if official_repo is not None:
        script = load_official_script(official_repo)
        choices = {
            (t, abstention): _official_prompt(script, t, abstention)
            for t in QUESTION_TYPES
            for abstention in (False, True)
        }
        plain = _official_prompt(script, GENERIC_TYPE, False)
        generic = JudgePrompt(DEFAULT, plain.sha256, plain.build)
        return PromptSet(OFFICIAL, "official", choices, generic, script.sha256)
    source: Source = "lme-bench" if folder is None else "custom"
    version, prompts = _folder_prompts(Path(folder) if folder else bundled_prompts_dir())
    choices = {
        (t, abstention): prompts[ABSTENTION] if abstention else prompts.get(t, prompts[DEFAULT])
        for t in QUESTION_TYPES
        for abstention in (False, True)
    }
    return PromptSet(version, source, choices, prompts[DEFAULT])


@functools.lru_cache(maxsize=8)
def _cached_prompt_set(folder: Path | None, official_repo: Path | None) -> PromptSet:
    return load_prompt_set(folder, official_repo)


def judge_prompts(judge: JudgeSettings) -> PromptSet:
    """The prompt set `[judge]` asks for (read once per process)."""
    return _cached_prompt_set(judge.prompts_dir, judge.official_repo)
