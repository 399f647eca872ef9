"""The suite as a fresh `make install` sees it (no extras): every test module is collected, and
a test that needs an extra skips naming it. Checked here with the extras' modules made
unimportable, so a module-level import of an extra fails this test before it fails a new user."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.extras import EXTRA_ONLY_MODULES

ROOT = Path(__file__).resolve().parents[2]
# Every import finder made blind to the extras' modules: they are neither found
# (importlib.util.find_spec gives None) nor importable, as on a machine without them.
BLOCKER = textwrap.dedent(
    """
    import sys
    BLOCKED = {blocked!r}

    class Blind:
        def __init__(self, finder):
            self.finder = finder

        def find_spec(self, name, path=None, target=None):
            if any(name == b or name.startswith(b + ".") for b in BLOCKED):
                return None
            return self.finder.find_spec(name, path, target)

        def __getattr__(self, attribute):
            return getattr(self.finder, attribute)

    sys.meta_path[:] = [Blind(f) if hasattr(f, "find_spec") else f for f in sys.meta_path]
    import pytest
    sys.exit(pytest.main(sys.argv[1:]))
    """
)


@pytest.mark.slow  # collects the whole suite in a subprocess
def test_the_suite_collects_without_the_extras(tmp_path: Path) -> None:
    runner = tmp_path / "plain.py"
    runner.write_text(BLOCKER.format(blocked=EXTRA_ONLY_MODULES))
    done = subprocess.run(
        [sys.executable, str(runner), "--collect-only", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " error" not in done.stdout.splitlines()[-1], done.stdout[-4000:]
