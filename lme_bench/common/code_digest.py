"""Which code a stage's results depend on, hashed: the source of every `lme_bench` module the
stage's entry module imports, directly or through others, plus the prompt files of the
packages among them.

Imports are found statically: module-level ones and those inside functions alike, so a lazy
import counts; imports under `if TYPE_CHECKING:` do not (they never run). Prompt files count
for a package when one of its modules in the closure reads packaged files. The key-making
modules themselves are left out: a change to what a key holds changes the keys anyway, and
CACHE_FORMAT (lme_bench.run.cache_keys) is bumped when a result's meaning changes.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import threading
from pathlib import Path

PACKAGE = "lme_bench"
SOURCE_ROOT = Path(__file__).resolve().parents[1]  # the folder of the `lme_bench` package
NOT_HASHED = frozenset({"lme_bench.run.cache_keys", "lme_bench.common.code_digest"})
PROMPTS_FOLDER = "prompts"  # a package's prompt files live in its `prompts/` subfolder


@functools.cache  # the package's files do not change under a running process
def _package_modules(root: Path) -> dict[str, Path]:
    """Module name -> source file of every module under `root` (the package folder)."""
    modules: dict[str, Path] = {}
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = [d for d in subfolders if d != "__pycache__"]
        parts = [PACKAGE, *Path(folder).relative_to(root).parts]
        for name in files:
            if name.endswith(".py"):
                stem = name.removesuffix(".py")
                module = parts if stem == "__init__" else [*parts, stem]
                modules[".".join(module)] = Path(folder, name)
    return modules


_IMPORT = re.compile(
    r"^[ \t]*(?:from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)|import[ \t]+([^\n]*))",
    re.MULTILINE,
)
_TYPE_CHECKING = re.compile(r"^([ \t]*)if[ \t]+(?:typing\.)?TYPE_CHECKING[ \t]*:[^\n]*\n", re.M)
_LINE = re.compile(r"^([ \t]*)\S[^\n]*\n?|^[ \t]*\n", re.MULTILINE)


def _type_checking_spans(source: str) -> list[tuple[int, int]]:
    """Where the bodies of `if TYPE_CHECKING:` blocks are (their imports never run)."""
    spans = []
    for block in _TYPE_CHECKING.finditer(source):
        indent, end = len(block.group(1)), block.end()
        for line in _LINE.finditer(source, block.end()):
            if line.group(1) is not None and len(line.group(1)) <= indent:
                break
            end = line.end()
        spans.append((block.end(), end))
    return spans


def _names(text: str) -> list[str]:
    """Module or member names of an import list: `a.b as c, d` -> a.b, d."""
    text = " ".join(line.split("#")[0] for line in text.splitlines())
    return [part.split()[0] for part in text.strip("() \t").split(",") if part.split()]


def imported_names(source: str, module: str, is_package: bool) -> set[str]:
    """Names of the modules `source` (module `module`) may import at run time, with every
    parent package and, for `from x import y`, `x.y` too (y may be a submodule). Import
    statements are read line by line rather than parsed: a hundred times faster than `ast`."""
    names: set[str] = set()
    here = module.split(".") if is_package else module.split(".")[:-1]
    skipped = _type_checking_spans(source)
    for found in _IMPORT.finditer(source):
        if any(start <= found.start() < end for start, end in skipped):
            continue
        origin, members, plain = found.groups()
        if plain is not None:
            names.update(_names(plain))
            continue
        level = len(origin) - len(origin.lstrip("."))
        base = here[: len(here) - level + 1] if level else []
        target = ".".join([*base, *origin.lstrip(".").split(".")]).strip(".")
        names.add(target)
        names.update(f"{target}.{name}" for name in _names(members))
    parents = {".".join(n.split(".")[:i]) for n in names for i in range(1, n.count(".") + 1)}
    return names | parents


@functools.cache  # the package's files do not change under a running process
def _scan(path: Path, module: str) -> tuple[frozenset[str], bool]:
    """(modules the file imports, whether it reads packaged files)."""
    source = path.read_text("utf-8")
    imports = imported_names(source, module, path.name == "__init__.py")
    return frozenset(imports), "resources.files(" in source


def module_closure(entry: str, root: Path = SOURCE_ROOT) -> dict[str, Path]:
    """Module name -> source file of `entry` and every package module it imports, however
    indirectly (key-making modules excluded)."""
    found: dict[str, Path] = {}
    pending = [entry]
    while pending:
        name = pending.pop()
        if name in found or name in NOT_HASHED or name.split(".")[0] != PACKAGE:
            continue
        path = _package_modules(root).get(name)
        if path is None:
            if name == entry:
                raise ValueError(f"{root}: no module {entry!r} to hash")
            continue  # a name imported from a module, not a module itself
        found[name] = path
        pending.extend(_scan(path, name)[0] - found.keys())
    return found


def _prompt_files(modules: dict[str, Path]) -> list[Path]:
    """The prompt files of each package one of whose modules reads packaged files."""
    readers = [path for name, path in modules.items() if _scan(path, name)[1]]
    folders = {path.parent / PROMPTS_FOLDER for path in readers}
    return [p for f in folders if f.is_dir() for p in f.rglob("*") if p.is_file()]


@functools.cache  # the package's files do not change under a running process
def _file_digest(path: Path) -> bytes:
    return hashlib.sha256(path.read_bytes()).digest()


def closure_digest(entry: str, root: Path = SOURCE_ROOT) -> str:
    """A hash of the source `entry` depends on: its module closure and their prompt files."""
    modules = module_closure(entry, root)
    files = {
        p.relative_to(root).as_posix(): p for p in [*modules.values(), *_prompt_files(modules)]
    }
    hasher = hashlib.sha256()
    for name in sorted(files):
        hasher.update(name.encode() + b"\0" + _file_digest(files[name]))
    return hasher.hexdigest()


_computing = threading.Lock()
_digests: dict[tuple[str, Path], str] = {}  # the package's files do not change under a process


def entry_code_digest(entry: str, root: Path | None = None) -> str:
    """The code digest of a per-question stage, by its entry module (its closure_digest,
    computed once per process)."""
    key = (entry, root or SOURCE_ROOT)
    found = _digests.get(key)
    if found is None:
        # One thread computes it while the others wait: a run's first tasks all ask at once,
        # and sixty-four threads each scanning the package took 0.3 s where one takes 16 ms.
        with _computing:
            found = _digests.get(key) or closure_digest(*key)
            _digests[key] = found
    return found
