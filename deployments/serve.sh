#!/usr/bin/env bash
# A Prefect server and a process worker on loopback, for the deployments in prefect.yaml.
# Ctrl-C, SIGINT or SIGTERM stops both. State lives in .prefect/ of this clone (PREFECT_HOME).
set -euo pipefail
set -m  # background jobs keep SIGINT (a shell without job control makes them ignore it)
cd "$(dirname "$0")/.."
BIN="${BIN:-.venv/bin}"
PORT="${PREFECT_PORT:-4200}"
export PREFECT_HOME="${PREFECT_HOME:-$PWD/.prefect}"
export PREFECT_API_URL="http://127.0.0.1:${PORT}/api"
export PREFECT_SERVER_ANALYTICS_ENABLED=false
export LME_BENCH_ROOT="$PWD"

alive() { for pid in "$@"; do kill -0 "$pid" 2>/dev/null && return 0; done; return 1; }
# SIGINT, then KILL after `$2` tenths of a second (a Prefect worker does not stop on SIGTERM).
halt() {
    [ -n "$1" ] || return 0
    kill -INT "$1" 2>/dev/null || return 0
    for _ in $(seq 1 "$2"); do alive "$1" || return 0; sleep 0.1; done
    kill -KILL "$1" 2>/dev/null || true
}
# The worker first, while the server it reports to still answers; then the server.
stop() {
    trap - INT TERM EXIT
    halt "${worker:-}" 200
    halt "${server:-}" 100
    wait 2>/dev/null || true
}
trap 'stop; exit 0' INT TERM
trap stop EXIT

"$BIN/prefect" server start --host 127.0.0.1 --port "$PORT" &
server=$!
healthy() { "$BIN/python" -c "import urllib.request as u; u.urlopen('${PREFECT_API_URL}/health', timeout=2)" 2>/dev/null; }
for _ in $(seq 1 120); do healthy && break; sleep 1; done
healthy || { echo "the Prefect server did not start" >&2; exit 1; }
"$BIN/prefect" work-pool create lme-bench --type process --overwrite >/dev/null
echo "Prefect UI: http://127.0.0.1:${PORT}  (export PREFECT_API_URL=${PREFECT_API_URL})"
"$BIN/prefect" worker start --pool lme-bench --name "worker-$(hostname)-$$" &
worker=$!
wait "$worker"
