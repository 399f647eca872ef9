"""Find the benchmark a config names, or the one that recognises a file.

`[dataset] benchmark` is a built-in name (BUILT_IN), a name an installed package registers
under the `lme_bench.benchmarks` entry-point group, `"package.module:Class"` for a class in
any importable module, or `"path/to/file.py:Class"` for a class in one Python file (a relative
path is taken from the current folder); see lme_bench.benchmarks.protocol for what the class
provides. Left unset, the benchmark is the first whose `detect` recognises the dataset path:
the built-ins in BUILT_IN's order, then the registered ones.
"""

from __future__ import annotations

import difflib
from importlib.metadata import entry_points
from pathlib import Path
from typing import cast

from lme_bench.benchmarks.protocol import Benchmark
from lme_bench.dataset.errors import DatasetError
from lme_bench.plugins import import_hint, import_module_or_file

ENTRY_POINT_GROUP = "lme_bench.benchmarks"
BUILT_IN: dict[str, str] = {
    "longmemeval": "lme_bench.builtin_benchmarks.longmemeval.benchmark:LongMemEval",
    "locomo": "lme_bench.builtin_benchmarks.locomo.benchmark:Locomo",
    "beam": "lme_bench.builtin_benchmarks.beam.benchmark:Beam",
}
TITLES = {"longmemeval": "LongMemEval", "locomo": "LoCoMo", "beam": "BEAM"}  # as papers spell them
_REQUIRED = ("name", "scoring", "detect", "validate", "builds", "questions")


class BenchmarkError(ValueError):
    """A benchmark name that names nothing usable; the message says what to write instead."""


def registered() -> dict[str, str]:
    """Benchmarks installed packages register: name -> 'module:Class'."""
    return {point.name: point.value for point in entry_points(group=ENTRY_POINT_GROUP)}


def known_names() -> list[str]:
    return [*BUILT_IN, *(name for name in registered() if name not in BUILT_IN)]


def known_titles() -> list[str]:
    """Every benchmark's name as people write it (the built-ins' titles), for help texts."""
    return [TITLES.get(name, name) for name in known_names()]


def unknown_benchmark(name: str) -> str | None:
    """Why `name` names no benchmark (with the nearest known name), or None when it may (a
    'module:Class' is checked when it is loaded)."""
    if name in BUILT_IN or ":" in name or name in registered():
        return None
    known = known_names()
    near = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    guess = f"; did you mean {near[0]!r}?" if near else ""
    return (
        f"unknown benchmark {name!r}{guess} (known: {', '.join(known)}; or a class of your own"
        " as 'module:Class' or 'path/to/file.py:Class', with a colon before the class)"
    )


def _load(target: str, where: str) -> type[Benchmark]:
    module_name, _, attribute = target.rpartition(":")
    try:
        module = import_module_or_file(module_name, prefix="lme_bench_benchmark_")
    except ImportError as error:
        hint = import_hint(module_name, error, attribute)
        raise BenchmarkError(f"{where}: cannot import {module_name!r}: {error}{hint}") from error
    cls = getattr(module, attribute, None)
    if not isinstance(cls, type):
        raise BenchmarkError(f"{where}: {module_name!r} has no class {attribute!r}")
    missing = [name for name in _REQUIRED if not hasattr(cls, name)]
    if missing:
        raise BenchmarkError(
            f"{where}: {target} is not a benchmark (it lacks {', '.join(missing)}; see"
            " lme_bench/benchmarks/protocol.py)"
        )
    return cast(type[Benchmark], cls)


def benchmark_class(name: str) -> type[Benchmark]:
    """The class `name` stands for (built-in, registered, 'module:Class' or a file's class)."""
    where = f"[dataset] benchmark = {name!r}"
    problem = unknown_benchmark(name)
    if problem is not None:
        raise BenchmarkError(f"[dataset] benchmark: {problem}")
    if name in BUILT_IN or ":" in name:  # no scan of the installed packages' entry points
        return _load(BUILT_IN.get(name, name), where)
    return _load(registered()[name], where)


def load_benchmark(name: str) -> Benchmark:
    """An instance of the benchmark `name` stands for."""
    return benchmark_class(name)()


def detect_benchmark(path: Path) -> Benchmark:
    """The first benchmark whose `detect` recognises `path`: the built-ins, then the
    registered ones; a DatasetError naming the file and the known benchmarks when none does."""
    path = Path(path)
    if not path.exists():
        raise DatasetError(path, "no such file or folder")
    names = [*BUILT_IN, *(n for n in registered() if n not in BUILT_IN)]
    for name in names:
        benchmark = load_benchmark(name)
        if benchmark.detect(path):
            return benchmark
    raise DatasetError(
        path,
        f"no known benchmark recognises it (known: {', '.join(names)}); is it the right file?"
        " Name its benchmark with [dataset] benchmark (a registered name, 'module:Class' or"
        " 'path/to/file.py:Class')",
    )


def resolve_benchmark(name: str | None, path: Path) -> Benchmark:
    """`[dataset] benchmark` when set, else the benchmark that recognises `path`."""
    return load_benchmark(name) if name else detect_benchmark(path)
