#!/usr/bin/env bash
# Rerun each baseline run with this tree's code and compare the pair (scripts/compare_runs.py).
#
#   scripts/compare_before_after.sh RUNS_TSV [AFTER_ROOT]
#
# RUNS_TSV: a header line, then one line per baseline run: name, config file, run folder (tab
# separated). Each config runs again as `lme-bench run CONFIG --results-dir AFTER_ROOT/NAME
# --run-id NAME` (AFTER_ROOT defaults to /tmp/after), from a fresh results folder; the report of
# each comparison goes to AFTER_ROOT/NAME.compare.txt.
#
# Environment:
#   AFTER_CONFIGS  folder of configs for the new code, NAME.toml, used instead of the baseline's
#                  (a renamed key, a server command); default: configs/after beside RUNS_TSV
#   LME_BENCH      the command that runs the new code (default: this tree's .venv/bin/lme-bench)
#   PYTHON         the Python that runs compare_runs.py (default: this tree's .venv/bin/python)
#   ONLY           only these names: NAME,NAME,...
#   COMPARE_ONLY   1: compare the runs already in AFTER_ROOT, run nothing
#
# Exit status: 0 when every pair is the same, 1 when a run fails or a pair differs.
set -u -o pipefail

if [[ $# -lt 1 || ! -f $1 ]]; then
  echo "usage: $0 RUNS_TSV [AFTER_ROOT]" >&2
  exit 2
fi
runs_tsv=$1
after_root=${2:-/tmp/after}
repo=$(cd "$(dirname "$0")/.." && pwd)
lme_bench=${LME_BENCH:-$repo/.venv/bin/lme-bench}
python=${PYTHON:-$repo/.venv/bin/python}
after_configs=${AFTER_CONFIGS:-$(dirname "$runs_tsv")/configs/after}
only=",${ONLY:-},"
# Prefect's temporary server can be slow to start on a busy machine.
export PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS=${PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS:-180}

mkdir -p "$after_root"
failures=0
while IFS=$'\t' read -r name config base_folder; do
  [[ -z $name || $name == name ]] && continue
  [[ $only != ",," && $only != *",$name,"* ]] && continue
  after_config=$config
  [[ -f $after_configs/$name.toml ]] && after_config=$after_configs/$name.toml
  results_dir=$after_root/$name
  echo "== $name: $after_config"
  if [[ ${COMPARE_ONLY:-} != 1 ]]; then
    rm -rf -- "${results_dir:?}" # a stale folder would resume, not rerun
    if ! (cd "$repo" && $lme_bench run "$after_config" --results-dir "$results_dir" \
      --run-id "$name") </dev/null >"$after_root/$name.log" 2>&1; then
      echo "   RUN FAILED (log: $after_root/$name.log)"
      tail -n 5 "$after_root/$name.log" | sed 's/^/   /'
      failures=$((failures + 1))
      continue
    fi
  fi
  report=$after_root/$name.compare.txt
  if "$python" "$repo/scripts/compare_runs.py" "$base_folder" "$results_dir/$name" </dev/null >"$report" 2>&1
  then
    echo "   same (report: $report)"
  else
    echo "   DIFFERENT (report: $report)"
    grep -E '^== .*DIFFERENT|^RESULT' "$report" | sed 's/^/   /'
    failures=$((failures + 1))
  fi
done <"$runs_tsv"

if ((failures)); then
  echo "RESULT: $failures runs failed or differ"
  exit 1
fi
echo "RESULT: every run is the same"
