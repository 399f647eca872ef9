"""A stand-in for a LongMemEval checkout: `src/evaluation/evaluate_qa.py` of the same shape as
the official script (imports that need packages, a prompt function with the official signature,
a command-line block), with our own placeholder wording. The official text is never copied
here; tests only check that lme-bench loads such a file and calls its function as the official
script does."""

from __future__ import annotations

from pathlib import Path

STANDIN_SCRIPT = """
import sys
import json
import a_package_that_is_not_installed
from another_missing_package import progress

def get_anscheck_prompt(task, question, answer, response, abstention=False):
    if not abstention:
        if task in ['single-session-user', 'single-session-assistant', 'multi-session']:
            template = "STANDIN-PLAIN q={} a={} r={} yes/no?"
        elif task == 'temporal-reasoning':
            template = "STANDIN-TEMPORAL q={} a={} r={} yes/no?"
        elif task == 'knowledge-update':
            template = "STANDIN-UPDATE q={} a={} r={} yes/no?"
        elif task == 'single-session-preference':
            template = "STANDIN-RUBRIC q={} a={} r={} yes/no?"
        else:
            raise NotImplementedError
    else:
        template = "STANDIN-ABSTAIN q={} a={} r={} yes/no?"
    return template.format(question, answer, response)

if __name__ == '__main__':
    sys.exit(json.dumps(progress))
"""

TEMPLATES = {
    "single-session-user": "STANDIN-PLAIN",
    "single-session-assistant": "STANDIN-PLAIN",
    "multi-session": "STANDIN-PLAIN",
    "temporal-reasoning": "STANDIN-TEMPORAL",
    "knowledge-update": "STANDIN-UPDATE",
    "single-session-preference": "STANDIN-RUBRIC",
}


def expected_prompt(
    question_type: str, question: str, answer: object, response: str, abstention: bool
) -> str:
    """What the stand-in returns, built independently of it."""
    head = "STANDIN-ABSTAIN" if abstention else TEMPLATES[question_type]
    return f"{head} q={question} a={answer} r={response} yes/no?"


def make_checkout(root: Path, script: str = STANDIN_SCRIPT) -> Path:
    path = root / "src" / "evaluation" / "evaluate_qa.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(script)
    return root
