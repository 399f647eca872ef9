"""One Prefect server on loopback for every run of the fault suite: each `lme-bench run` child
then skips starting a temporary server of its own, and none of them can harm the others'."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.integration.prefect_server import BIN, clean_environ, free_port, stop, wait_healthy

STARTUP_TIMEOUT_S = 180.0


@contextmanager
def prefect_server(home: Path) -> Iterator[str]:
    """Start `prefect server start` with its database under `home`; yields the API URL."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/api"
    env = clean_environ() | {
        "PREFECT_HOME": str(home),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_SERVER_LOGGING_LEVEL": "WARNING",
    }
    log = home / "server.log"
    with log.open("wb") as out:
        server = subprocess.Popen(
            [str(BIN / "prefect"), "server", "start", "--host", "127.0.0.1", "--port", str(port)],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        try:
            wait_healthy(url, server, STARTUP_TIMEOUT_S)
        except (RuntimeError, TimeoutError) as exc:
            raise RuntimeError(f"{exc}\n{log.read_text(errors='replace')[-4000:]}") from None
        yield url
    finally:
        stop(server)
