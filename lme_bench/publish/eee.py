"""`lme-bench export --eee`: a finished run as an Every Eval Ever record (schema 0.3.0), the
aggregate log `<uuid>.json` and its instance-level companion `<uuid>_samples.jsonl` (one line
per question and judge), filed as that datastore files them:
`data/<benchmark>/<memory backend>/<reader model>/`.

The system evaluated is the memory system with its reader: model_info names the memory backend
(the developer part of its id) and the QA model, with the backend's settings digest and search
in additional_details. Question texts and gold answers are not written: the run folder does not
hold them, and a dataset's licence may not allow passing them on; each instance line names its
question by id. Every absolute path of this machine is replaced by its placeholder
(lme_bench.publish.scrub); a record still holding a secret or the host name is not written."""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from lme_bench.publish.eee_figures import (
    QA_GROUPS,
    evaluation_results,
    qa_evaluation_name,
    qa_result_id,
)
from lme_bench.publish.errors import PublishError
from lme_bench.publish.scrub import Sensitive, scrub_json, sensitive
from lme_bench.results.atomic import write_text_atomically
from lme_bench.results.qa_tables import HypothesisRow, ScoreRow
from lme_bench.results.readback import read_hypotheses, read_scores
from lme_bench.results.run_summary import RunSummary, SummaryError, read_run_summary

SCHEMA_VERSION = "0.3.0"
_UNSAFE = set('<>:"\\|?*/')
_RESERVED = {"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(1, 10))}
_RESERVED |= {f"LPT{i}" for i in range(1, 10)}


@dataclass(frozen=True)
class Exported:
    aggregate: Path
    samples: Path
    results: int  # evaluation results in the aggregate
    rows: int  # lines of the instance-level file


def _read_json(path: Path) -> dict[str, Any]:
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PublishError(f"{path}: no such file (not a finished run folder)") from None
    except (OSError, ValueError) as exc:
        raise PublishError(f"{path}: cannot be read as JSON ({exc})") from None
    if not isinstance(found, dict):
        raise PublishError(f"{path}: does not hold a JSON object")
    return found


def _component(text: str, what: str) -> str:
    """One folder name of the datastore path, as the datastore spells it (':' as '_')."""
    name = text.strip().replace(":", "_")
    bad = (
        not name
        or name.lower() in {"unknown", "data", ".", ".."}
        or any(c in _UNSAFE or ord(c) < 32 for c in name)
        or name.endswith((".", " "))
        or name.split(".", 1)[0].upper() in _RESERVED
    )
    if bad:
        raise PublishError(
            f"{what} {text!r}: cannot name a folder of the Every Eval Ever datastore"
        )
    return name


def _folder(benchmark: str, model_id: str) -> PurePosixPath:
    developer, _, model = model_id.partition("/")
    parts = [_component(p, "the reader model") for p in model.split("/")]
    return PurePosixPath(
        "data", _component(benchmark, "the benchmark"), _component(developer, "the memory backend")
    ) / "_".join(parts)


def _record_id(manifest: dict[str, Any]) -> str:
    """A UUID4-shaped id fixed by the run (its id, settings and start): exporting it again
    writes the same file names."""
    key = "\0".join(str(manifest.get(k)) for k in ("run_id", "config_digest", "started_at"))
    return str(uuid.UUID(bytes=hashlib.sha256(key.encode()).digest()[:16], version=4))


def _details(values: dict[str, Any]) -> dict[str, str]:
    """additional_details: every value a string, absent ones left out."""
    return {
        k: v if isinstance(v, str) else json.dumps(v, sort_keys=True)
        for k, v in values.items()
        if v is not None
    }


def _reader(manifest: dict[str, Any], hypotheses: list[HypothesisRow]) -> str:
    named = (manifest.get("models") or {}).get("qa")
    if named:
        return str(named)
    used = sorted({h.qa_model for h in hypotheses if h.qa_model})
    return used[0] if len(used) == 1 else "given-answers"


def _model_info(
    summary: RunSummary, manifest: dict[str, Any], settings: dict[str, Any], reader: str
) -> dict[str, Any]:
    memory = summary.memory
    backend = str(memory.get("backend") or "")
    return {
        "name": f"{backend} memory with {reader} as reader",
        "id": f"{backend}/{reader}",
        "developer": backend,
        "additional_details": _details(
            {
                "deployment_type": "unknown",
                "model_availability": "unknown",
                "memory_backend": backend,
                "memory_params_digest": memory.get("params_digest"),
                "memory_search": memory.get("search"),
                "reader_model": reader,
                "qa_strategy": (settings.get("qa") or {}).get("strategy"),
                "ingest_mode": (manifest.get("ingestion") or {}).get("mode"),
                "agent_model": (manifest.get("models") or {}).get("agent"),
            }
        ),
    }


def _source_data(summary: RunSummary, manifest: dict[str, Any]) -> dict[str, Any]:
    dataset = manifest.get("dataset") or {}
    path = str(dataset.get("path") or summary.run.dataset.path)
    return {
        "dataset_name": summary.benchmark,
        "source_type": "other",
        "additional_details": _details(
            {
                "file": PurePosixPath(path).name,
                "sha256": dataset.get("sha256") or summary.run.dataset.sha256,
                "release": dataset.get("release"),
                "questions": str(len(manifest.get("question_ids") or [])),
            }
        ),
    }


def _verdict(row: ScoreRow) -> tuple[float, bool]:
    if row.score is not None:  # a graded official score (BEAM's rubric)
        return float(row.score), row.score >= 1.0
    return (1.0, True) if row.label else (0.0, False)


def _sample(
    row: ScoreRow,
    hypothesis: HypothesisRow | None,
    ids: tuple[str, str],
    benchmark: str,
    result_ids: set[str],
) -> dict[str, Any]:
    evaluation_id, model_id = ids
    score, correct = _verdict(row)
    answer = (hypothesis.hypothesis if hypothesis else None) or ""
    line: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": evaluation_id,
        "model_id": model_id,
        "evaluation_name": f"{benchmark} answers judged by {row.judge}",
        "sample_id": row.question_id,
        "interaction_type": "single_turn",
        "input": {"raw": f"question {row.question_id}", "reference": []},
        "output": {"raw": [answer]},
        "answer_attribution": [
            {
                "turn_idx": 0,
                "source": "output.raw",
                "extracted_value": answer,
                "extraction_method": "whole_output",
                "is_terminal": True,
            }
        ],
        "evaluation": {"score": score, "is_correct": correct},
        "metadata": _details(
            {
                "question_type": row.question_type,
                "is_abstention": "true" if row.is_abstention else "false",
                "judge": row.judge,
                "judge_kind": row.judge_kind,
                "verdict": row.raw_verdict,
                "status": row.status,
                "attribution": row.attribution,
            }
        ),
    }
    overall = qa_result_id(row.judge, QA_GROUPS[0][0])
    if overall in result_ids:  # a graded judge's figures are the benchmark's section instead
        line["evaluation_name"] = qa_evaluation_name(benchmark, QA_GROUPS[0][1])
        line["evaluation_result_id"] = overall
    if hypothesis is not None:
        line["token_usage"] = {
            "input_tokens": hypothesis.input_tokens,
            "output_tokens": hypothesis.output_tokens,
            "total_tokens": hypothesis.input_tokens + hypothesis.output_tokens,
        }
        line["performance"] = {"latency_ms": hypothesis.seconds * 1000}
    errors = [e for e in (hypothesis.error if hypothesis else None, row.error) if e]
    if errors or row.status != "ok":
        line["error"] = "; ".join(errors) or f"no verdict ({row.status})"
    return line


def _checked(text: str, name: str, found: Sensitive) -> str:
    problem = found.found(text)
    if problem:
        raise PublishError(f"{name}: would hold {problem}; nothing was written")
    return text


def export_eee(
    run_dir: Path, out: Path, organization: str = "unknown", first_party: bool = False
) -> Exported:
    """Write the run at `run_dir` as an Every Eval Ever record under `out` (its `data/` folder);
    PublishError naming the file or field that stops it, with nothing written."""
    try:
        summary = read_run_summary(run_dir / "summary.json")
    except SummaryError as exc:
        raise PublishError(str(exc)) from None
    manifest = _read_json(run_dir / "manifest.json")
    settings = _read_json(run_dir / "config.json").get("settings") or {}
    if not manifest.get("code_version"):
        raise PublishError(f"{run_dir / 'manifest.json'}: field code_version is missing")
    hypotheses = read_hypotheses(run_dir / "hypotheses.parquet")
    scores = [s for s in read_scores(run_dir / "scores.parquet") if s.repeat == 0]
    if not scores:
        raise PublishError(f"{run_dir / 'scores.parquet'}: no verdict (the run judged no answer)")

    reader = _reader(manifest, hypotheses)
    model = _model_info(summary, manifest, settings, reader)
    record_id = _record_id(manifest)
    folder = _folder(summary.benchmark, model["id"])
    evaluation_id = f"{summary.benchmark}/{model['id']}/{manifest.get('run_id')}"
    by_question = {h.question_id: h for h in hypotheses}
    results = evaluation_results(summary, _source_data(summary, manifest))
    result_ids = {r["evaluation_result_id"] for r in results}
    ids = (evaluation_id, model["id"])
    lines = [
        _sample(s, by_question.get(s.question_id), ids, summary.benchmark, result_ids)
        for s in scores
    ]
    found = sensitive(run_dir, manifest)
    samples_text = "".join(
        json.dumps(scrub_json(line, found), ensure_ascii=False) + "\n" for line in lines
    )
    samples_path = folder / f"{record_id}_samples.jsonl"
    _checked(samples_text, str(samples_path), found)
    log = {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": evaluation_id,
        "retrieved_timestamp": str(int(time.time())),
        "source_metadata": {
            "source_name": f"lme-bench run {manifest.get('run_id')}",
            "source_type": "evaluation_run",
            "source_organization_name": organization,
            "evaluator_relationship": "first_party" if first_party else "third_party",
            "additional_details": _details(
                {
                    "run_id": manifest.get("run_id"),
                    "series": manifest.get("series"),
                    "config_digest": manifest.get("config_digest"),
                    "finished_at": manifest.get("finished_at"),
                    "headline": summary.headline,
                }
            ),
        },
        "eval_library": {
            "name": "lme-bench",
            "version": str(manifest["code_version"]),
            "additional_details": _details({"git_sha": (manifest.get("git") or {}).get("sha")}),
        },
        "model_info": model,
        "evaluation_results": results,
        "detailed_evaluation_results": {
            "format": "jsonl",
            "file_path": str(samples_path),
            "hash_algorithm": "sha256",
            "checksum": hashlib.sha256(samples_text.encode()).hexdigest(),
            "total_rows": len(lines),
        },
    }
    if manifest.get("started_at"):
        log["evaluation_timestamp"] = str(manifest["started_at"])
    aggregate_path = folder / f"{record_id}.json"
    log_text = json.dumps(scrub_json(log, found), indent=2, ensure_ascii=False) + "\n"
    _checked(log_text, str(aggregate_path), found)
    write_text_atomically(out / samples_path, samples_text)
    try:
        write_text_atomically(out / aggregate_path, log_text)
    except BaseException:
        (out / samples_path).unlink(missing_ok=True)  # no companion without its aggregate
        raise
    return Exported(out / aggregate_path, out / samples_path, len(results), len(lines))
