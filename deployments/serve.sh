#!/usr/bin/env bash
# A Prefect server, a process worker and a static file server of the results folder, all on
# loopback, for the deployments in prefect.yaml. The worker's runs link their result files under
# the file server (LME_RUN__LINK_BASE), so they open from the UI. Ctrl-C, SIGINT or SIGTERM stops
# all three. State lives in .prefect/ of this clone (PREFECT_HOME).
set -euo pipefail
set -m  # background jobs keep SIGINT (a shell without job control makes them ignore it)
cd "$(dirname "$0")/.."
BIN="${BIN:-.venv/bin}"
PORT="${PREFECT_PORT:-4200}"
FILES_PORT="${FILES_PORT:-4201}"
RESULTS="${LME_RUN__RESULTS_DIR:-results}"
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
# The worker first, while the server it reports to still answers; then the servers.
stop() {
    trap - INT TERM EXIT
    halt "${worker:-}" 200
    halt "${server:-}" 100
    halt "${files:-}" 50
    wait 2>/dev/null || true
}
trap 'stop; exit 0' INT TERM
trap stop EXIT

mkdir -p "$RESULTS"
"$BIN/python" -m http.server --bind 127.0.0.1 --directory "$RESULTS" "$FILES_PORT" >/dev/null 2>&1 &
files=$!
export LME_RUN__LINK_BASE="http://127.0.0.1:${FILES_PORT}/"
"$BIN/prefect" server start --host 127.0.0.1 --port "$PORT" &
server=$!
healthy() { "$BIN/python" -c "import urllib.request as u; u.urlopen('${PREFECT_API_URL}/health', timeout=2)" 2>/dev/null; }
for _ in $(seq 1 120); do healthy && break; sleep 1; done
healthy || { echo "the Prefect server did not start" >&2; exit 1; }
"$BIN/prefect" work-pool create lme-bench --type process --overwrite >/dev/null
alive "$files" || { echo "the file server did not start (port ${FILES_PORT} taken?)" >&2; exit 1; }
echo "Prefect UI: http://127.0.0.1:${PORT}  (export PREFECT_API_URL=${PREFECT_API_URL})"
echo "Result files: ${LME_RUN__LINK_BASE}  (${RESULTS})"
"$BIN/prefect" worker start --pool lme-bench --name "worker-$(hostname)-$$" &
worker=$!
wait "$worker"
