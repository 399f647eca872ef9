"""The settings a run was made with, kept in its folder, so that reruns replay them and a run id
is never continued with other settings (its tables would mix two configurations).

`config.json` holds the run's request and its effective settings: the config file with the
`LME_*` environment and the overrides applied (secrets are never settings: keys stay in the
environment). It is written when a run starts, so a run that was killed can be rerun too.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from lme_bench.backends.builtin_params import comparable_memory
from lme_bench.config.settings import Settings, replay_settings
from lme_bench.config.transport import TRANSPORT_KEYS, is_transport
from lme_bench.results.atomic import write_text_atomically
from lme_bench.results.run_folder import RerunError, rerun_command

CONFIG_FILE = "config.json"

# Settings that may differ between invocations of one run id, as they change no result:
# which stages run, how much at once, where caches live, the prices that turn tokens into
# costs, whether requests go through a batch API; and how a model is reached (transport.py:
# endpoints, timeouts, retries), whose changes of endpoint are recorded as moves.
FREE_KEYS = (
    "run.stages",
    "run.task_tags",
    "run.questions_per_task",
    "run.processes",
    "run.link_base",
    "run.series",  # a rerun stays in the series its run id recorded first
    "run.results_dir",
    "run.work_dir",  # each machine's own working folder for a run at a URL
    "memory.build_store",  # where memory builds travel through: the same memories
    "limits",
    "cache.storage",
    "dataset.cache_dir",
    *TRANSPORT_KEYS,
    "prices",
    "qa.batch",  # through a batch API or call by call, the same requests and rows
    "qa.batch_poll_s",
    "judge.batch",
    "judge.batch_poll_s",
    "regression",  # when a run counts as regressed against its baseline: no result changes
)
# A stage set of judging alone (no ingest, retrieval or answer) may ask for a new judge.
JUDGE_KEYS = ("judge", "models.judge")
UPSTREAM_STAGES = ("ingest", "retrieval", "answer")


class SettingsChanged(RerunError):
    """A run id was asked for with settings other than those it was made with."""


def flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested settings as dotted keys and leaf values (lists are leaves; empty tables vanish)."""
    flat: dict[str, Any] = {}
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, dict):
            flat |= flatten(value, dotted + ".")
        else:
            flat[dotted] = value
    return flat


def comparable(settings: dict[str, Any]) -> dict[str, Any]:
    """Settings as data, their `[memory]` table as runs compare it: old spellings where they
    are read today, a built-in backend's params with their defaults left out; so a run
    recorded before `[memory.params]` compares key by key with one configured today."""
    memory = settings.get("memory")
    return (
        settings | {"memory": comparable_memory(memory)} if isinstance(memory, dict) else settings
    )


def _under(key: str, prefixes: tuple[str, ...] | set[str]) -> bool:
    return any(key == p or key.startswith(p + ".") for p in prefixes)


def _provider(model: Any) -> str | None:
    return model.partition(":")[0] if isinstance(model, str) and ":" in model else None


def asks_for_new_judge(settings: Settings, failed_only: bool) -> bool:
    """Judging alone, of every question asked for: a new judge replaces the old one."""
    stages = set(settings.stages)
    return "judge" in stages and not stages & set(UPSTREAM_STAGES) and not failed_only


def _judge_keys(recorded: dict[str, Any], now: dict[str, Any]) -> set[str]:
    """Keys a new judge may change: the judge's, and its own providers' (not the agent's or
    the reader's, whose work is kept)."""
    kept = {_provider(recorded.get(f"models.{role}")) for role in ("agent", "qa")}
    judges = {_provider(now.get(k)) for k in ("models.judge", "judge.second_model")}
    return set(JUDGE_KEYS) | {f"providers.{p}" for p in judges - kept if p}


def differing_keys(recorded: dict[str, Any], settings: Settings, new_judge: bool) -> list[str]:
    """Dotted keys whose value differs from the recorded settings (free keys left out)."""
    before, now = flatten(comparable(recorded)), flatten(comparable(settings.redacted()))
    allowed: set[str] = set(FREE_KEYS) | (_judge_keys(before, now) if new_judge else set())
    missing = object()
    # a key added since the run was recorded counts as its default there
    defaults = flatten(comparable(replay_settings({}, "defaults").redacted()))
    return sorted(
        key
        for key in before.keys() | now.keys()
        if not _under(key, allowed)
        and not is_transport(key)
        and before.get(key, defaults.get(key, missing)) != now.get(key, missing)
    )


def recorded_run(run_dir: Path) -> dict[str, Any] | None:
    """{"request": …, "settings": …} as the run recorded them, None for a new run. A run
    from before config.json existed has its settings in manifest.json."""
    for name, settings_key in ((CONFIG_FILE, "settings"), ("manifest.json", "config")):
        path = run_dir / name
        if path.is_file():
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (ValueError, UnicodeDecodeError) as exc:
                raise RerunError(f"{path}: not valid JSON ({exc})") from None
            if isinstance(data, dict) and isinstance(data.get(settings_key), dict):
                return {"request": data.get("request") or {}, "settings": data[settings_key]}
    return None


def _shown(value: Any) -> str:
    text = "(unset)" if value is None else json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_settings(run_dir: Path, settings: Settings, failed_only: bool = False) -> None:
    """Raise SettingsChanged naming every differing key when `run_dir` holds a run made
    with other settings."""
    recorded = recorded_run(run_dir)
    if recorded is None:
        return
    new_judge = asks_for_new_judge(settings, failed_only)
    keys = differing_keys(recorded["settings"], settings, new_judge)
    if not keys:
        return
    before = flatten(comparable(recorded["settings"]))
    now = flatten(comparable(settings.redacted()))
    changes = "; ".join(f"{k}: {_shown(before.get(k))} -> {_shown(now.get(k))}" for k in keys)
    raise SettingsChanged(
        f"{run_dir}: run {run_dir.name} was made with other settings ({changes}); "
        f"`{rerun_command(run_dir.name, run_dir.parent)}` reruns it as it was, a new run id"
        " runs the new "
        "settings (a new judge alone: run only the judge and report stages)"
    )


def _endpoint_changes(recorded: dict[str, Any], settings: Settings) -> dict[str, Any]:
    """Provider transport keys (transport.py) whose value differs from the recorded one, with
    their new values, of providers the run had."""
    before, now = flatten(recorded), flatten(settings.redacted())
    had = {key.split(".")[1] for key in before if key.startswith("providers.")}
    return {
        key: now.get(key)
        for key in sorted(before.keys() | now.keys())
        if key.startswith("providers.")
        and key.split(".")[1] in had
        and is_transport(key)
        and before.get(key) != now.get(key)
    }


def _moves(recorded: dict[str, Any], settings: Settings) -> list[dict[str, Any]]:
    """The recorded moves, then one per provider transport key that changed now."""
    before = flatten(recorded.get("settings") or {})
    at = datetime.now(UTC).isoformat()
    changed = _endpoint_changes(recorded.get("settings") or {}, settings)
    new = [{"setting": k, "from": before.get(k), "to": v, "at": at} for k, v in changed.items()]
    return list(recorded.get("moves") or []) + new


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (ValueError, UnicodeDecodeError) as exc:
        raise RerunError(f"{path}: not valid JSON ({exc})") from None
    return data if isinstance(data, dict) else {}


def _write(path: Path, data: dict[str, Any]) -> None:
    text = json.dumps(data, indent=2) + "\n"
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        write_text_atomically(path, text)


def record_settings(run_dir: Path, settings: Settings, request: dict[str, Any]) -> None:
    """Write the run's request and effective settings to its folder, atomically (unless it
    holds them already: a run of a finished run id then writes nothing before its tables);
    a provider endpoint changed since is recorded as a move."""
    path = run_dir / CONFIG_FILE
    moves = _moves(_read(path), settings)
    # how this invocation was started changes with every one: the manifest's, not the run's
    request = {key: value for key, value in request.items() if key != "schedule"}
    data: dict[str, Any] = {"request": request, "settings": settings.redacted()}
    _write(path, data | ({"moves": moves} if moves else {}))


def record_moves(run_dir: Path, settings: Settings) -> None:
    """For a replay: the provider transport settings it changed (a moved model server, named
    for a rerun) replace the recorded ones, each recorded as a move (setting, from, to, at);
    the request and every other setting stay as the run recorded them."""
    path = run_dir / CONFIG_FILE
    recorded = _read(path)
    if not isinstance(recorded.get("settings"), dict):
        return
    changed = _endpoint_changes(recorded["settings"], settings)
    if not changed:
        return
    moves = _moves(recorded, settings)
    for key, value in changed.items():
        *sections, name = key.split(".")
        table = recorded["settings"]
        for section in sections:
            table = table.setdefault(section, {})
        table[name] = value
    _write(path, recorded | {"moves": moves})


def recorded_moves(run_dir: Path) -> list[dict[str, Any]]:
    """The endpoint moves the run's config.json records (none: an empty list)."""
    moves = _read(run_dir / CONFIG_FILE).get("moves")
    return list(moves) if isinstance(moves, list) else []
