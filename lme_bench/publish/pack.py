"""`lme-bench bundle`: a finished run in one archive with a manifest of every file's sha256,
signed when a key is given."""

from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile
import tempfile
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from lme_bench.publish.contents import collect, finished_manifest
from lme_bench.publish.errors import PublishError
from lme_bench.publish.figures import summary_of
from lme_bench.publish.scrub import scrub_json, sensitive
from lme_bench.publish.signing import read_key, sign
from lme_bench.results.run_summary import RunSummary

BUNDLE_VERSION = 1
MANIFEST = "BUNDLE.json"
SIGNATURE = "BUNDLE.sig"
REQUEST_RECORDS = ("judge_requests", "own_judge_requests")  # manifest `models` keys kept per judge
SCORES = "scores.parquet"


def run_folder(run: str, results_dir: Path) -> Path:
    """RUN as `rerun` and `compare` find it (a run id under `results_dir`), or a folder path."""
    given = Path(run)
    if given.is_dir() and (os.sep in run or not (results_dir / run).is_dir()):
        return given
    return results_dir / run


def _digest(data: bytes) -> dict[str, Any]:
    return {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


def _own_requests(models: dict[str, Any], name: str) -> dict[str, Any]:
    """The requests judge `name` sent as a benchmark's own judge, by benchmark."""
    own = models.get("own_judge_requests") or {}
    return {benchmark: own[benchmark][name] for benchmark in sorted(own) if name in own[benchmark]}


def _scored_prompts(files: Mapping[str, bytes]) -> dict[str, tuple[str | None, list[str]]]:
    """Per judge of scores.parquet: the prompt version its rows name and the prompt digests
    they carry, in the order first met."""
    if SCORES not in files:
        return {}
    columns = ["judge", "prompt_version", "prompt_sha256"]
    found: dict[str, tuple[str | None, list[str]]] = {}
    for row in pq.read_table(io.BytesIO(files[SCORES]), columns=columns).to_pylist():
        _, digests = found.setdefault(row["judge"], (row["prompt_version"], []))
        if row["prompt_sha256"] and row["prompt_sha256"] not in digests:
            digests.append(row["prompt_sha256"])
    return found


def _judges(
    manifest: dict[str, Any], summary: RunSummary, files: Mapping[str, bytes]
) -> dict[str, Any]:
    """Each judge: its request shapes (from the manifest: the yes/no request, and what it sent
    as a benchmark's own judge), its kind, prompt version and digests. A judge that sent a
    benchmark's own judge's requests is an LLM judge: summary.json's `qa` holds no record of
    it when its questions give scores, not verdicts (BEAM's); its prompt version and digests
    are then those its rows of scores.parquet carry."""
    models = manifest.get("models") or {}
    requests = models.get("judge_requests") or {}
    own = models.get("own_judge_requests") or {}
    judges = ((summary.qa or {}).get("judges")) or {}
    found: dict[str, Any] = {}
    own_names = {name for shapes in own.values() for name in shapes}
    scored = _scored_prompts(files) if own_names - set(judges) else {}
    for name in sorted(set(requests) | set(judges) | own_names):
        record = judges.get(name) or {}
        own_requests = _own_requests(models, name)
        version, digests = scored.get(name, (None, [])) if not record else (None, [])
        found[name] = {
            "kind": record.get("kind") or ("llm" if own_requests else None),
            "prompt_version": record.get("prompt_version") or version,
            "prompt_sha256": record.get("prompt_sha256") or digests or None,
            "request": requests.get(name),
        }
        if own_requests:
            found[name]["own_judge_requests"] = own_requests
    return found


def bundle_manifest(
    manifest: dict[str, Any], summary: RunSummary, files: Mapping[str, bytes]
) -> dict[str, Any]:
    dataset = manifest.get("dataset") or {}
    return {
        "bundle_version": BUNDLE_VERSION,
        "run_id": manifest.get("run_id"),
        "series": manifest.get("series"),
        "benchmark": manifest.get("benchmark"),
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "code_version": manifest.get("code_version"),
        "git": manifest.get("git"),
        "dataset": {
            "name": Path(str(dataset.get("path") or "")).name or None,
            "sha256": dataset.get("sha256"),
            "release": dataset.get("release"),
            "questions": dataset.get("questions"),
        },
        "config_digest": manifest.get("config_digest"),
        "models": {
            k: v for k, v in (manifest.get("models") or {}).items() if k not in REQUEST_RECORDS
        },
        "prompts": manifest.get("prompts"),
        "judges": _judges(manifest, summary, files),
        "judge_profile": manifest.get("judge_profile"),
        "files": {name: _digest(data) for name, data in sorted(files.items())},
    }


def _member(archive: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = len(data), 0o644, 0
    archive.addfile(info, io.BytesIO(data))


def write_archive(out: Path, members: Mapping[str, bytes]) -> None:
    """`members` as a tar.gz at `out`, written beside it first, then renamed into place."""
    out.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")
    try:
        with os.fdopen(descriptor, "wb") as raw, tarfile.open(fileobj=raw, mode="w:gz") as archive:
            for name, data in members.items():
                _member(archive, name, data)
        os.replace(temporary, out)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def bundle_run(
    run_dir: Path,
    out: Path | None = None,
    key: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> tuple[Path, dict[str, Any]]:
    """Pack the finished run at `run_dir` into `out` (default: RUN_ID.bundle.tar.gz here);
    the archive's path and its manifest."""
    manifest = finished_manifest(run_dir)
    private = read_key(key) if key is not None else None  # a bad key fails before any work
    found = sensitive(run_dir, manifest, environ)
    contents = collect(run_dir, found, manifest)
    summary = summary_of(run_dir / "summary.json", contents.files["summary.json"])
    record = scrub_json(bundle_manifest(manifest, summary, contents.files), found)
    encoded = (json.dumps(record, indent=2, ensure_ascii=False) + "\n").encode()
    what = found.found(encoded.decode())
    if what is not None:
        raise PublishError(f"{MANIFEST}: holds {what}; a bundle never carries it")
    members = {MANIFEST: encoded, **contents.files}
    if private is not None:
        members[SIGNATURE] = sign(encoded, private)
    target = out or Path(f"{manifest.get('run_id') or run_dir.name}.bundle.tar.gz")
    write_archive(target, members)
    return target, record
