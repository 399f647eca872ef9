"""Split a dataset once into one small file per question, so each task loads only its question.

The split is validated as a whole first (any bad question fails it), kept under
`<cache_root>/<dataset sha256 prefix>/` and reused while the dataset bytes are unchanged.
A failed split leaves nothing behind, not even the folders it had to create.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from lme_bench.dataset.errors import DatasetError
from lme_bench.dataset.loader import iter_questions
from lme_bench.dataset.models import Instance

Splitter = Callable[[Path, Path], list["QuestionRef"]]
"""Writes the split of a dataset file into a folder and returns its questions' refs."""
_INDEX = "index.json"
_FORMAT = 1


@dataclass(frozen=True, slots=True)
class QuestionRef:
    """A pointer to one question: enough to name, route and cache work without loading it."""

    index: int
    question_id: str
    question_type: str
    is_abstention: bool
    content_sha256: str
    n_sessions: int
    n_turns: int
    shard: str
    build_id: str = ""
    """The memory build (history) the question asks: one ingestion into one memory, shared by
    every question naming it. A LongMemEval question's build is itself (its question id), so
    its memory and caches are those of one question; empty in splits made before builds."""
    build_sha256: str = ""
    """The build's content digest (`lme_bench.benchmarks.protocol.content_digest`) where the
    build is not the question itself; empty for LongMemEval, whose question hash covers it."""
    benchmark: str = "longmemeval"
    """The benchmark the question comes from (`lme_bench.benchmarks`)."""
    build_shard: str = ""
    """The file of the build's sessions where builds are split apart from their questions
    (lme_bench.dataset.build_records); empty for LongMemEval, whose question file holds them."""

    @property
    def build(self) -> str:
        """The build the question asks, as memories and ingestion caches are named: its id and
        content digest where the build is shared (a changed history is a new memory), the
        question id for LongMemEval (a memory per question, titled as it always was)."""
        if self.build_sha256:
            return f"{self.build_id or self.question_id}@{self.build_sha256[:16]}"
        return self.build_id or self.question_id

    def load(self) -> Instance:
        """The question, validated (recently loaded ones are shared: see `LoadedQuestions`);
        a question of a shared build comes in the same record shape, its build's sessions
        joined to its public view and gold labels (lme_bench.dataset.build_records)."""
        if self.build_shard:
            from lme_bench.dataset.build_records import scorer_record

            return scorer_record(
                self.question_id, self.question_type, self.shard, self.build_shard, self.benchmark
            )
        return LOADED.get(self.shard, self.content_sha256)


class LoadedQuestions:
    """Recently loaded questions, up to `budget` bytes of their files, so a question's later
    stages (retrieval, answer, judge) reuse what its ingestion parsed: parsing and validating
    a question was the largest part of those stages' own CPU time. Instances are frozen."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._lock = threading.Lock()
        self._held: OrderedDict[tuple[str, str], tuple[Instance, int]] = OrderedDict()
        self._bytes = 0

    def get(self, shard: str, sha256: str) -> Instance:
        key = (shard, sha256)
        with self._lock:
            found = self._held.get(key)
            if found is not None:
                self._held.move_to_end(key)
                return found[0]
        data = Path(shard).read_bytes()
        instance = Instance.model_validate_json(data)
        with self._lock:
            if key not in self._held and len(data) <= self.budget:
                self._held[key] = (instance, len(data))
                self._bytes += len(data)
                while self._bytes > self.budget:
                    _, (_, size) = self._held.popitem(last=False)
                    self._bytes -= size
        return instance


LOADED = LoadedQuestions(budget=32 << 20)  # about twice as much in objects


@dataclass(frozen=True, slots=True)
class PreparedDataset:
    path: str
    sha256: str
    questions: list[QuestionRef]


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def folder_sha256(path: Path) -> str:
    """A folder's content digest: its files' relative paths and sha256s, in path order
    (hidden files and folders left out), for a benchmark read from a folder (BEAM)."""
    digest = hashlib.sha256()
    root = Path(path)
    files = (p for p in root.rglob("*") if p.is_file())
    for file in sorted(files, key=lambda p: p.relative_to(root).as_posix()):
        relative = file.relative_to(root).as_posix()
        if any(part.startswith(".") for part in relative.split("/")):
            continue
        digest.update(f"{relative}\0{file_sha256(file)}\n".encode())
    return digest.hexdigest()


def _missing_parents(path: Path) -> list[Path]:
    missing = []
    for parent in [path, *path.parents]:
        if parent.exists():
            break
        missing.append(parent)
    return missing


def _split(path: Path, target: Path) -> list[QuestionRef]:
    refs = []
    for loaded in iter_questions(path):
        instance = loaded.instance
        shard = target / "q" / f"{loaded.index:05d}.json"
        shard.write_bytes(loaded.canonical_json)
        refs.append(
            QuestionRef(
                index=loaded.index,
                question_id=instance.question_id,
                question_type=instance.question_type,
                is_abstention=instance.is_abstention,
                content_sha256=loaded.content_sha256,
                n_sessions=len(instance.haystack_sessions),
                n_turns=sum(len(s) for s in instance.haystack_sessions),
                shard=shard.name,
                build_id=instance.question_id,  # LongMemEval: one build per question
            )
        )
    return refs


def _read_index(folder: Path) -> list[QuestionRef] | None:
    try:
        data = json.loads((folder / _INDEX).read_text())
    except (OSError, ValueError):
        return None
    if data.get("format") != _FORMAT:
        return None
    refs = [QuestionRef(**row) for row in data["questions"]]
    return [
        QuestionRef(
            **{
                **asdict(r),
                "shard": str(folder / "q" / Path(r.shard).name),
                "build_shard": str(folder / "b" / Path(r.build_shard).name)
                if r.build_shard
                else "",
            }
        )
        for r in refs
    ]


def prepare_dataset(
    path: Path, cache_root: Path, split: Splitter | None = None, kind: str = ""
) -> PreparedDataset:
    """Validate and split `path` (or reuse an earlier split of the same bytes): a LongMemEval
    file into a file per question, another benchmark's by `split` (lme_bench.benchmarks.split),
    kept apart under its `kind` (the benchmark's name)."""
    path = Path(path)
    if not path.is_file() and not (split is not None and path.is_dir()):
        raise DatasetError(path, "not a file" if path.exists() else "no such file")
    try:
        sha = folder_sha256(path) if path.is_dir() else file_sha256(path)
    except OSError as exc:
        raise DatasetError(path, f"cannot read it: {exc.strerror or exc}") from None
    folder = Path(cache_root) / (f"{sha[:24]}-{kind}" if split is not None else sha[:24])
    refs = _read_index(folder)
    if refs is None:
        created = _missing_parents(Path(cache_root))
        try:
            Path(cache_root).mkdir(parents=True, exist_ok=True)
        except OSError as exc:  # e.g. the results dir is a file
            for made in created:
                shutil.rmtree(made, ignore_errors=True)
            raise DatasetError(
                cache_root, f"cannot create the dataset cache folder: {exc.strerror or exc}"
            ) from None
        tmp = Path(tempfile.mkdtemp(prefix=".split-", dir=cache_root))
        try:
            (tmp / "q").mkdir()
            rows = split(path, tmp) if split is not None else _split(path, tmp)
            index = {"format": _FORMAT, "source": str(path), "sha256": sha}
            index["questions"] = [asdict(r) for r in rows]
            (tmp / _INDEX).write_text(json.dumps(index))
            shutil.rmtree(folder, ignore_errors=True)
            os.replace(tmp, folder)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            for made in created:
                shutil.rmtree(made, ignore_errors=True)
            raise
        refs = _read_index(folder)
        assert refs is not None
    return PreparedDataset(path=str(path), sha256=sha, questions=refs)


def select_questions(
    dataset: PreparedDataset, question_ids: list[str] | None = None, limit: int | None = None
) -> list[QuestionRef]:
    """The requested questions in file order; unknown ids are an error naming them."""
    refs = dataset.questions
    if question_ids:
        wanted = set(question_ids)
        missing = wanted - {r.question_id for r in refs}
        if missing:
            raise DatasetError(
                dataset.path, f"unknown question id(s): {', '.join(sorted(missing))}"
            )
        refs = [r for r in refs if r.question_id in wanted]
    return refs[:limit] if limit is not None else refs
