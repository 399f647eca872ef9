"""Write constraints.txt: every package of this environment at the version installed, for
`pip install -c constraints.txt <package>` (a memory system's client installed beside
lme-bench without moving a pin Prefect or the harness needs).

    python scripts/constraints.py [constraints.txt]      # or: make constraints

From `pip freeze --exclude-editable` of the running interpreter, less packages installed from
a file or URL (`name @ ...`, which pip could not fetch elsewhere), with local version labels
dropped (`torch==2.13.0+cpu` -> `torch==2.13.0`, which the CPU build still satisfies).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

HEADER = """\
# The versions lme-bench is tested with (`make constraints` writes this file from the venv).
# Install a memory system's client without moving them:
#   pip install -c constraints.txt chromadb
"""
_PINNED = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s+;]+)(\+\S+)?$")


def constraint_lines(freeze: str) -> list[str]:
    """`name==version` for each pinned line of `pip freeze` output, sorted by name."""
    found = {}
    for line in freeze.splitlines():
        pinned = _PINNED.match(line.strip())
        if pinned:
            found[pinned.group(1).lower()] = f"{pinned.group(1)}=={pinned.group(2)}"
    return [found[name] for name in sorted(found)]


def main(argv: list[str]) -> int:
    target = Path(argv[0] if argv else "constraints.txt")
    freeze = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "freeze",
            "--exclude-editable",
            "--disable-pip-version-check",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    lines = constraint_lines(freeze)
    if not any(line.lower().startswith("prefect==") for line in lines):
        print(f"{sys.executable}: Prefect is not installed here; run `make install` first")
        return 1
    temporary = target.with_name(f".{target.name}.tmp")
    temporary.write_text(HEADER + "\n".join(lines) + "\n")
    os.replace(temporary, target)
    print(f"{target}: {len(lines)} packages")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
