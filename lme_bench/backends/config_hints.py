"""What to do about a backend the config names but lme-bench cannot use: the nearest valid
`[memory.params]` key for a misspelt one (advice on a module that does not import is in
lme_bench.plugins, shared with the benchmark registry)."""

from __future__ import annotations

import difflib

from pydantic import BaseModel, ValidationError


def params_problems(model: type[BaseModel], error: ValidationError) -> list[str]:
    """One line per problem, `[memory.params] key: message`; an unknown key gets the nearest
    valid one (`did you mean 'batch_size'?`) and the list of valid keys."""
    valid = list(model.model_fields)
    problems = []
    for found in error.errors():
        key = ".".join(str(part) for part in found["loc"]) or "(all)"
        line = f"[memory.params] {key}: {found['msg']}"
        if found["type"] == "extra_forbidden":
            line += _unknown_key_hint(str(found["loc"][-1]), valid)
        problems.append(line)
    return problems


def _unknown_key_hint(key: str, valid: list[str]) -> str:
    if not valid:
        return " (this backend takes no parameters)"
    near = difflib.get_close_matches(key, valid, n=1, cutoff=0.6)
    guess = f"; did you mean {near[0]!r}?" if near else ""
    return f"{guess} (valid keys: {', '.join(valid)})"
