#!/usr/bin/env bash
# A Prefect server and a process worker on loopback, for the deployments in prefect.yaml.
# Ctrl-C stops both. State lives in .prefect/ of this clone (PREFECT_HOME).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${BIN:-.venv/bin}"
PORT="${PREFECT_PORT:-4200}"
export PREFECT_HOME="${PREFECT_HOME:-$PWD/.prefect}"
export PREFECT_API_URL="http://127.0.0.1:${PORT}/api"
export PREFECT_SERVER_ANALYTICS_ENABLED=false
export LME_BENCH_ROOT="$PWD"

"$BIN/prefect" server start --host 127.0.0.1 --port "$PORT" &
server=$!
trap 'kill -INT "${worker:-}" 2>/dev/null; kill -INT "$server" 2>/dev/null; wait' EXIT INT TERM
healthy() { "$BIN/python" -c "import urllib.request as u; u.urlopen('${PREFECT_API_URL}/health', timeout=2)" 2>/dev/null; }
for _ in $(seq 1 120); do healthy && break; sleep 1; done
healthy || { echo "the Prefect server did not start" >&2; exit 1; }
"$BIN/prefect" work-pool create lme-bench --type process --overwrite >/dev/null
echo "Prefect UI: http://127.0.0.1:${PORT}  (export PREFECT_API_URL=${PREFECT_API_URL})"
"$BIN/prefect" worker start --pool lme-bench --name "worker-$(hostname)-$$" &
worker=$!
wait "$worker"
