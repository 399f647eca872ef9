"""What of this machine must never leave in a bundle, and how JSON is rewritten without it.

Absolute paths of this machine (the run folder, the results folder, the dataset's folder, every
other path the run's settings name, such as a checkout of official code as `<judge.beam_repo>`,
the working folder, the home folder, lme-bench's and Python's install folders) become
placeholders such as `<results-dir>`; the host name and the value of every secret variable
(`lme_bench.common.secrets`) are never rewritten: a file holding one fails the bundle."""

from __future__ import annotations

import os
import re
import socket
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lme_bench.common.secrets import MIN_SECRET_CHARS, secret_env_names

_PACKAGE_ROOT = Path(__file__).resolve().parents[2]
# A path continues with these characters: a prefix followed by one is another path.
_NOT_CONTINUED = r"(?![\w.-])"


@dataclass(frozen=True)
class Sensitive:
    """Prefixes of this machine's paths (longest first, each with its placeholder), its host
    names and its secret values (each with its variable's name)."""

    recorded: tuple[tuple[str, str], ...]  # the paths the run records: rewritten everywhere
    machine: tuple[tuple[str, str], ...]  # the others: rewritten in JSON, failing elsewhere
    hostnames: tuple[str, ...]
    secrets: tuple[tuple[str, str], ...]

    def replace_paths(self, text: str, which: Iterable[tuple[str, str]]) -> str:
        for prefix, placeholder in which:
            text = re.sub(re.escape(prefix) + _NOT_CONTINUED, placeholder, text)
        return text

    def found(self, text: str) -> str | None:
        """What of this machine `text` holds, in words (a secret by its variable only)."""
        for value, name in self.secrets:
            if value in text:
                return f"the value of the secret {name}"
        for name in self.hostnames:
            if re.search(rf"(?<![\w.-]){re.escape(name)}{_NOT_CONTINUED}", text, re.I):
                return f"the host name {name!r}"
        for prefix, _ in (*self.recorded, *self.machine):
            if re.search(re.escape(prefix) + _NOT_CONTINUED, text):
                return f"the absolute path {prefix}"
        return None


def _resolved(path: Any) -> str | None:
    if not isinstance(path, str) or not path.strip():
        return None
    resolved = Path(path).expanduser()
    if not resolved.is_absolute():
        resolved = Path.cwd() / resolved
    text = str(resolved.resolve())
    return text if len(Path(text).parts) > 1 else None  # never "/" itself


def _setting_paths(config: Mapping[str, Any], where: str = "") -> Iterator[tuple[str, str]]:
    """Each absolute path a setting holds, with the setting's name as its placeholder."""
    for key, value in config.items():
        name = f"{where}.{key}" if where else str(key)
        if isinstance(value, Mapping):
            yield from _setting_paths(value, name)
        elif isinstance(value, str) and value.startswith(("/", "~")):
            found = _resolved(value)
            if found is not None:
                yield found, f"<{name}>"


def _ordered(pairs: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(pairs.items(), key=lambda p: len(p[0]), reverse=True))


def _secret_values(manifest: dict[str, Any], environ: Mapping[str, str]) -> dict[str, str]:
    providers = (manifest.get("config") or {}).get("providers") or {}
    names = set(secret_env_names(None, environ))
    names |= {
        str(p["api_key_env"])
        for p in providers.values()
        if isinstance(p, dict) and p.get("api_key_env")
    }
    values: dict[str, str] = {}
    for name in sorted(names):
        value = environ.get(name, "").strip()
        if len(value) >= MIN_SECRET_CHARS:
            values.setdefault(value, name)
    return values


def sensitive(
    run_dir: Path, manifest: dict[str, Any], environ: Mapping[str, str] | None = None
) -> Sensitive:
    env = os.environ if environ is None else environ
    request = manifest.get("request") or {}
    config_run = (manifest.get("config") or {}).get("run") or {}
    dataset = _resolved((manifest.get("dataset") or {}).get("path"))
    recorded: dict[str, str] = {}
    for results_dir in (request.get("results_dir"), config_run.get("results_dir")):
        if (found := _resolved(results_dir)) is not None:
            recorded[found] = "<results-dir>"
    recorded[str(run_dir.resolve().parent)] = "<results-dir>"
    recorded[str(run_dir.resolve())] = f"<results-dir>/{run_dir.name}"
    if dataset is not None and len(Path(dataset).parent.parts) > 1:  # never "/" itself
        recorded[str(Path(dataset).parent)] = "<dataset-dir>"
    for path, placeholder in _setting_paths(manifest.get("config") or {}):
        if not any(path == known or path.startswith(known + "/") for known in recorded):
            recorded[path] = placeholder  # a checkout, a prompts folder, a work folder
    machine = {
        str(_PACKAGE_ROOT): "<lme-bench>",
        str(Path(sys.prefix).resolve()): "<python>",
        str(Path(sys.base_prefix).resolve()): "<python>",
        str(Path.cwd().resolve()): "<cwd>",
        str(Path.home().resolve()): "~",
    }
    machine = {p: v for p, v in machine.items() if len(Path(p).parts) > 1 and p not in recorded}
    hosts = {socket.gethostname(), socket.getfqdn()} - {"", "localhost", "localhost.localdomain"}
    return Sensitive(
        _ordered(recorded),
        _ordered(machine),
        tuple(sorted(hosts, key=len, reverse=True)),
        tuple(sorted(_secret_values(manifest, env).items(), key=lambda p: -len(p[0]))),
    )


def scrub_json(value: Any, found: Sensitive) -> Any:
    """`value` (parsed JSON) with every path of this machine replaced by its placeholder."""
    paths = (*found.recorded, *found.machine)
    if isinstance(value, str):
        return found.replace_paths(value, paths)
    if isinstance(value, list):
        return [scrub_json(v, found) for v in value]
    if isinstance(value, dict):
        return {found.replace_paths(k, paths): scrub_json(v, found) for k, v in value.items()}
    return value


def strings_of(value: Any) -> Iterable[str]:
    """Every string in `value` (rows read from a table), keys too."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from strings_of(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from strings_of(v)
