"""Run a stdio MCP server with everything its client writes to it copied to a log file.

python -m tests.wire.stdio_tee LOG COMMAND [ARG ...]
"""

from __future__ import annotations

import os
import subprocess
import sys


def main(argv: list[str]) -> int:
    log, command = argv[0], argv[1:]
    child = subprocess.Popen(command, stdin=subprocess.PIPE)
    assert child.stdin is not None
    with open(log, "ab") as out:
        while chunk := os.read(0, 65536):
            out.write(chunk)
            out.flush()
            child.stdin.write(chunk)
            child.stdin.flush()
    child.stdin.close()
    return child.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
