"""A finished run's files as they go into a bundle: JSON rewritten without this machine's
paths, the recorded paths replaced in text, and every file checked for what must not leave."""

from __future__ import annotations

import hashlib
import html
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from lme_bench.publish.errors import PublishError
from lme_bench.publish.scrub import Sensitive, scrub_json, strings_of
from lme_bench.results.run_folder import rerun_command

PROFILE_FOLDER = "judge_profile"


@dataclass(frozen=True)
class RunFiles:
    run_dir: Path
    manifest: dict[str, Any]
    files: dict[str, bytes]  # path in the bundle -> its bytes as bundled


def finished_manifest(run_dir: Path) -> dict[str, Any]:
    """The run's manifest, or one error saying why the run cannot be bundled."""
    path = run_dir / "manifest.json"
    if not run_dir.is_dir():
        raise PublishError(f"{run_dir}: no run folder here; check the run id or path")
    if not path.is_file():
        raise PublishError(
            f"{run_dir}: the run is unfinished (no manifest.json): only a finished run is bundled"
        )
    manifest: dict[str, Any] = json.loads(path.read_text())
    failed = manifest.get("failed_question_ids") or []
    if failed:
        results_dir = run_dir.parent
        raise PublishError(
            f"{run_dir}: the run failed on {len(failed)} question(s) ({', '.join(failed[:5])}"
            f"{' …' if len(failed) > 5 else ''}); rerun them first:"
            f" {rerun_command(run_dir.name, results_dir)} --failed-only"
        )
    if not (run_dir / "summary.json").is_file():
        raise PublishError(f"{run_dir}: the run wrote no summary.json; it is unfinished")
    return manifest


def _run_files(run_dir: Path) -> list[Path]:
    """The run folder's files, leaving out hidden and temporary ones (half-done writes)."""
    return sorted(
        p
        for p in run_dir.rglob("*")
        if p.is_file()
        and not any(part.startswith(".") for part in p.relative_to(run_dir).parts)
        and not p.name.endswith((".tmp", ".partial", ".lock"))
    )


def _profile(manifest: dict[str, Any], run_dir: Path) -> tuple[str, bytes] | None:
    record = manifest.get("judge_profile")
    if not record:
        return None
    path = Path(record["path"])
    candidates = [path] if path.is_absolute() else [Path.cwd() / path, run_dir.parent / path]
    for found in candidates:
        if found.is_file():
            data = found.read_bytes()
            if hashlib.sha256(data).hexdigest() != record.get("sha256"):
                raise PublishError(
                    f"{found}: the judge profile changed since the run used it (its sha256 is"
                    " not the manifest's)"
                )
            return f"{PROFILE_FOLDER}/{found.name}", data
    raise PublishError(f"{path}: the run's judge profile is not there; it goes in the bundle")


def _clean(name: str, data: bytes, found: Sensitive) -> bytes:
    """`data` as bundled: JSON without this machine's paths, text without the recorded ones;
    a file that still holds a path, the host name or a secret fails the bundle."""
    if name.endswith(".parquet"):
        table = pq.read_table(io.BytesIO(data))
        metadata = {
            k.decode(errors="replace"): v.decode(errors="replace")
            for k, v in (table.schema.metadata or {}).items()
        }
        texts = [*strings_of(table.to_pylist()), *strings_of(metadata)]
    elif name.endswith(".json"):
        parsed = json.loads(data)
        scrubbed = scrub_json(parsed, found)
        if scrubbed != parsed:
            data = (json.dumps(scrubbed, indent=2, ensure_ascii=False) + "\n").encode()
        texts = [data.decode()]
    else:
        try:
            text = data.decode()
        except UnicodeDecodeError:
            texts = [data.decode("latin-1")]
        else:
            recorded = found.recorded
            if name.endswith((".html", ".htm")):  # a placeholder shown, not taken for a tag
                recorded = tuple((p, html.escape(v)) for p, v in recorded)
            rewritten = found.replace_paths(text, recorded)
            data = rewritten.encode() if rewritten != text else data
            texts = [rewritten]
    for text in texts:
        what = found.found(text)
        if what is not None:
            raise PublishError(f"{name}: holds {what}; a bundle never carries it")
    return data


def collect(run_dir: Path, found: Sensitive, manifest: dict[str, Any]) -> RunFiles:
    files: dict[str, bytes] = {}
    for path in _run_files(run_dir):
        name = path.relative_to(run_dir).as_posix()
        files[name] = _clean(name, path.read_bytes(), found)
    profile = _profile(manifest, run_dir)
    if profile is not None:
        files[profile[0]] = _clean(profile[0], profile[1], found)
    return RunFiles(run_dir, manifest, files)
