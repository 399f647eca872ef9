"""The backend names settings accept are checked without importing a backend, and each built-in
name leads the registry to the backend of that name."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from lme_bench.backends.registry import backend_class, backend_env, build_backend, params_class
from lme_bench.config.backend_names import BUILT_IN, unknown_backend
from lme_bench.config.settings import ConfigError, Settings
from tests.extras import BACKEND_EXTRAS, has_extra, reason


@pytest.mark.parametrize("name", sorted(BUILT_IN))
def test_each_built_in_name_is_the_backend_of_that_name(name: str) -> None:
    assert unknown_backend(name) is None
    extra = BACKEND_EXTRAS.get(name)
    if extra is not None and not has_extra(extra):
        pytest.skip(reason(extra))
    cls = backend_class(name)
    assert cls.name == name
    assert params_class(name) is cls.Params  # what settings and the docs read without the extra


@pytest.mark.parametrize("name", sorted(BACKEND_EXTRAS))
def test_a_missing_extra_is_named_with_the_command_that_installs_it(
    name: str, tmp_path: Path
) -> None:
    extra = BACKEND_EXTRAS[name]
    if has_extra(extra):
        pytest.skip(f"the {extra} extra is installed")
    settings = Settings(memory={"backend": name}, models={"memory": "fake:mem0-extractor"})
    with pytest.raises(ConfigError) as raised:  # on loading the class, or on building it
        build_backend(backend_class(name), {}, backend_env(settings, tmp_path))
    assert f"'lme-bench[{extra}]'" in str(raised.value)


def test_an_unknown_name_is_refused_with_the_names_that_would_do() -> None:
    problem = unknown_backend("cloud")
    assert problem is not None
    assert all(name in problem for name in BUILT_IN)
    assert unknown_backend("my_package.memory:Notes") is None  # checked when it is built


def test_checking_a_name_imports_no_backend() -> None:
    code = (
        "import sys\n"
        "from lme_bench.config.settings import Settings\n"
        "Settings(memory={'backend': 'mem0'})\n"
        "print(sorted(m for m in sys.modules if m.startswith('lme_bench.backends')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
    assert Settings(memory={"backend": "mem0"}).memory.backend == "mem0"
