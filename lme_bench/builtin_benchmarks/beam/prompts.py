"""BEAM's official judge prompts, read at run time from a BEAM checkout the user points at.

- The rubric prompt: the string `unified_llm_judge_base_prompt` of `<checkout>/src/prompts.py`,
  taken by parsing the file (nothing of it runs). It is filled as the official evaluator fills
  it: `<rubric_item>`, then `<llm_response>`, replaced; its `<question>` placeholder is left as
  it is, as the official code leaves it.
- The event-equivalence messages (event ordering): built by the function `llm_equivalence` of
  `<checkout>/src/evaluation/compute_metrics.py`, compiled on its own and called with a stand-in
  model that records the messages it is sent (the file's imports never run).
No text of either is stored by lme-bench: results carry sha256 digests.
"""

from __future__ import annotations

import ast
import builtins
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from lme_bench.config.settings import ConfigError

PROMPTS_FILE = Path("src") / "prompts.py"
METRICS_FILE = Path("src") / "evaluation" / "compute_metrics.py"
RUBRIC_PROMPT = "unified_llm_judge_base_prompt"
EQUIVALENCE_FUNCTION = "llm_equivalence"
RUBRIC_FIELDS = ("<rubric_item>", "<llm_response>")

Message = tuple[str, str]  # (role, content)


class BeamPromptsError(ConfigError):
    """The checkout lacks a usable official BEAM prompt; names the file and what is missing."""


@dataclass(frozen=True, slots=True)
class BeamPrompts:
    checkout: Path
    rubric_template: str
    equivalence: Callable[[str, str], list[Message]]  # (rubric item, response line) -> messages
    prompts_sha256: str  # of src/prompts.py
    metrics_sha256: str  # of src/evaluation/compute_metrics.py

    def rubric_prompt(self, rubric_item: str, response: str) -> str:
        return self.rubric_template.replace("<rubric_item>", rubric_item).replace(
            "<llm_response>", response
        )

    @property
    def rubric_sha256(self) -> str:
        return hashlib.sha256(self.rubric_template.encode()).hexdigest()


def _read(checkout: Path, relative: Path) -> tuple[Path, bytes, ast.Module]:
    path = checkout / relative
    try:
        source = path.read_bytes()
    except FileNotFoundError:
        raise BeamPromptsError(f"{path} not found (is this a BEAM checkout?)") from None
    except OSError as exc:
        raise BeamPromptsError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        return path, source, ast.parse(source, filename=str(path))
    except SyntaxError as exc:
        raise BeamPromptsError(f"{path}: not valid Python: {exc.msg}") from None


def _string_assignment(tree: ast.Module, path: Path, name: str) -> str:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                value = None
            if not isinstance(value, str):
                raise BeamPromptsError(f"{path}: {name} is not a plain string")
            return value
    raise BeamPromptsError(f"{path}: no {name} (is this a BEAM checkout?)")


class _Recorder:
    """Stands in for the model `llm_equivalence` calls: keeps the messages, replies 'no'."""

    def __init__(self) -> None:
        self.sent: Any = None

    def invoke(self, messages: Any) -> SimpleNamespace:
        self.sent = messages
        return SimpleNamespace(content="no")


def _equivalence_builder(tree: ast.Module, path: Path) -> Callable[[str, str], list[Message]]:
    node = next(
        (n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == EQUIVALENCE_FUNCTION),
        None,
    )
    if node is None:
        raise BeamPromptsError(f"{path}: no function {EQUIVALENCE_FUNCTION}")
    namespace: dict[str, Any] = {"__builtins__": builtins}
    exec(compile(ast.Module(body=[node], type_ignores=[]), str(path), "exec"), namespace)
    function = namespace[EQUIVALENCE_FUNCTION]

    def build(item: str, line: str) -> list[Message]:
        recorder = _Recorder()
        function(first_paragraph=item, second_paragraph=line, llm=recorder)
        sent = recorder.sent
        if not isinstance(sent, list) or not all(
            isinstance(m, dict) and isinstance(m.get("content"), str) for m in sent
        ):
            raise BeamPromptsError(f"{path}: {EQUIVALENCE_FUNCTION} sent no list of messages")
        return [(str(m.get("role", "user")), m["content"]) for m in sent]

    try:
        build("a", "b")
    except BeamPromptsError:
        raise
    except Exception as exc:
        raise BeamPromptsError(
            f"{path}: {EQUIVALENCE_FUNCTION} failed: {type(exc).__name__}: {exc}"
        ) from None
    return build


def load_beam_prompts(checkout: Path) -> BeamPrompts:
    """The official rubric prompt and equivalence messages of the BEAM checkout at `checkout`."""
    checkout = Path(checkout).expanduser()
    prompts_path, prompts_source, prompts_tree = _read(checkout, PROMPTS_FILE)
    template = _string_assignment(prompts_tree, prompts_path, RUBRIC_PROMPT)
    missing = [f for f in RUBRIC_FIELDS if f not in template]
    if missing:
        raise BeamPromptsError(f"{prompts_path}: {RUBRIC_PROMPT} lacks {', '.join(missing)}")
    metrics_path, metrics_source, metrics_tree = _read(checkout, METRICS_FILE)
    return BeamPrompts(
        checkout=checkout,
        rubric_template=template,
        equivalence=_equivalence_builder(metrics_tree, metrics_path),
        prompts_sha256=hashlib.sha256(prompts_source).hexdigest(),
        metrics_sha256=hashlib.sha256(metrics_source).hexdigest(),
    )
