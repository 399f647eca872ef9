"""The official judge prompts, read at run time from a LongMemEval checkout the user points at.

Only the function `get_anscheck_prompt` is taken from the checkout's
`src/evaluation/evaluate_qa.py`: its definition is compiled on its own, so the script's imports
(an API client, progress bars) and its command-line code never run. It is called as the official
script calls it, `get_anscheck_prompt(question_type, question, answer, response,
abstention='_abs' in question_id)`. No text of it is stored anywhere: rows carry the sha256 of
each template (the function's output with placeholder fields), the manifest the file's sha256.
"""

from __future__ import annotations

import ast
import builtins
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lme_bench.config.settings import ConfigError
from lme_bench.dataset.models import QUESTION_TYPES

SCRIPT = Path("src") / "evaluation" / "evaluate_qa.py"
FUNCTION = "get_anscheck_prompt"
PARAMETERS = ("task", "question", "answer", "response", "abstention")
# Stand-ins for the fields, to hash each template: none of them occurs in a real prompt.
_PLACEHOLDERS = ("\x00question\x00", "\x00answer\x00", "\x00response\x00")

PromptFunction = Callable[..., str]


class OfficialPromptsError(ConfigError):
    """The checkout does not hold a usable official judge script; names the file."""


@dataclass(frozen=True, slots=True)
class OfficialScript:
    path: Path
    sha256: str
    function: PromptFunction

    def prompt(
        self, question_type: str, question: str, answer: str, response: str, abstention: bool
    ) -> str:
        return self.function(question_type, question, answer, response, abstention=abstention)

    def template_sha256(self, question_type: str, abstention: bool) -> str:
        text = self.prompt(question_type, *_PLACEHOLDERS, abstention=abstention)
        return hashlib.sha256(text.encode()).hexdigest()


def _function_node(tree: ast.Module, path: Path) -> ast.FunctionDef:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == FUNCTION:
            names = tuple(a.arg for a in node.args.args)
            if names != PARAMETERS:
                raise OfficialPromptsError(
                    f"{path}: {FUNCTION}{names} does not take the parameters {PARAMETERS}"
                )
            return node
    raise OfficialPromptsError(f"{path}: no function {FUNCTION} (is this a LongMemEval checkout?)")


def load_official_script(repo: Path) -> OfficialScript:
    """The official prompt builder of the checkout at `repo`, checked on every question type."""
    path = Path(repo).expanduser() / SCRIPT
    try:
        source = path.read_bytes()
    except FileNotFoundError:
        raise OfficialPromptsError(
            f"[judge] official_repo: {path} not found (point it at a LongMemEval checkout)"
        ) from None
    except OSError as exc:
        raise OfficialPromptsError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        tree = ast.parse(source, filename=str(path))
    except SyntaxError as exc:
        raise OfficialPromptsError(f"{path}: not valid Python: {exc.msg}") from None
    module = ast.Module(body=[_function_node(tree, path)], type_ignores=[])
    namespace: dict[str, object] = {"__builtins__": builtins}
    exec(compile(module, str(path), "exec"), namespace)
    script = OfficialScript(path, hashlib.sha256(source).hexdigest(), namespace[FUNCTION])  # type: ignore[arg-type]
    for question_type in QUESTION_TYPES:
        for abstention in (False, True):
            try:
                rendered = script.prompt(question_type, "q", "a", "r", abstention=abstention)
            except Exception as exc:
                raise OfficialPromptsError(
                    f"{path}: {FUNCTION}({question_type!r}, abstention={abstention}) failed: "
                    f"{type(exc).__name__}: {exc}"
                ) from None
            if not isinstance(rendered, str):
                raise OfficialPromptsError(f"{path}: {FUNCTION} returned no text")
    return script
