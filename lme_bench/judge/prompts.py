"""Judge prompts: one per question type, the abstention prompt for `_abs` ids, all versioned.

A prompt set is a folder of text files named after the types they grade (`default.txt` for the
types without their own, `abstention.txt` for `_abs` questions) plus a `VERSION` file; fields
`{question}`, `{answer}` and `{response}` are filled in. Point `[judge] prompts_dir` at another
folder (e.g. one holding the official prompts) to use it without code changes. Every score row
carries the set's version and the hash of the exact prompt file used.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from lme_bench.dataset.models import ABSTENTION_SUFFIX

FIELDS = ("{question}", "{answer}", "{response}")
ABSTENTION = "abstention"
DEFAULT = "default"


class PromptSetError(ValueError):
    """A prompt folder that cannot be used; names the folder and the file."""


@dataclass(frozen=True, slots=True)
class JudgePrompt:
    name: str  # the file stem: a question type, "default" or "abstention"
    template: str
    sha256: str

    def render(self, question: str, answer: str, response: str) -> str:
        return (
            self.template.replace("{question}", question)
            .replace("{answer}", answer)
            .replace("{response}", response)
        )


@dataclass(frozen=True, slots=True)
class PromptSet:
    version: str
    prompts: dict[str, JudgePrompt]

    def for_question(self, question_id: str, question_type: str) -> JudgePrompt:
        """The abstention prompt for `_abs` ids, else the type's own, else the default one."""
        if question_id.endswith(ABSTENTION_SUFFIX):
            return self.prompts[ABSTENTION]
        return self.prompts.get(question_type) or self.prompts[DEFAULT]

    @property
    def hashes(self) -> dict[str, str]:
        return {name: p.sha256 for name, p in sorted(self.prompts.items())}


def bundled_prompts_dir() -> Path:
    return Path(str(resources.files("lme_bench.judge") / "prompts" / "v1"))


def load_prompt_set(folder: Path | None = None) -> PromptSet:
    folder = Path(folder) if folder is not None else bundled_prompts_dir()
    if not folder.is_dir():
        raise PromptSetError(f"{folder}: judge prompts folder not found")
    prompts: dict[str, JudgePrompt] = {}
    for path in sorted(folder.glob("*.txt")):
        text = path.read_text(encoding="utf-8")
        missing = [f for f in FIELDS if f not in text]
        if missing:
            raise PromptSetError(f"{path}: the prompt lacks {', '.join(missing)}")
        digest = hashlib.sha256(text.encode()).hexdigest()
        prompts[path.stem] = JudgePrompt(path.stem, text, digest)
    for required in (DEFAULT, ABSTENTION):
        if required not in prompts:
            raise PromptSetError(f"{folder}: {required}.txt is missing")
    version_file = folder / "VERSION"
    version = version_file.read_text().strip() if version_file.exists() else folder.name
    return PromptSet(version=version, prompts=prompts)
