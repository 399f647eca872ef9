#!/usr/bin/env bash
# A Prefect server, a process worker and a static file server of the results folder, all on
# loopback, for the deployments in prefect.yaml (deployments/serve.py starts and watches them).
# The worker's runs link their result files under the file server (LME_RUN__LINK_BASE), so they
# open from the UI. Ctrl-C or SIGTERM stops all three within 10 s; a worker that exits is started
# again. State lives in .prefect/ of this clone (PREFECT_HOME); PREFECT_PORT (4200) and FILES_PORT
# (4201) choose the ports.
set -euo pipefail
cd "$(dirname "$0")/.."
export BIN="${BIN:-.venv/bin}"
exec "$BIN/python" deployments/serve.py
