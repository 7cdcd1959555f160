#!/usr/bin/env bash
# The main command: run a whole setrl study through a local Prefect server.
#   bash scripts/study.sh [profile]      (default: tiny)
# Installs what is missing, starts a local Prefect server (SQLite, analytics off) and a process
# worker unless they already run, registers the deployments, runs `full-study/<profile>` and
# waits for it, then prints the summary table and SQL to dig further. Safe to re-run: it reuses
# the running server and worker, and a new run of the study resumes where the last one stopped.
set -euo pipefail
cd "$(dirname "$0")/.."
PROFILE="${1:-tiny}"
ROOT="$PWD"
VENV="$ROOT/.venv"

make -s install
export PATH="$VENV/bin:$PATH"
export PREFECT_HOME="${PREFECT_HOME:-$ROOT/.prefect}"
export PREFECT_API_URL="${PREFECT_API_URL:-http://127.0.0.1:4200/api}"
export PREFECT_SERVER_ANALYTICS_ENABLED=false
export SETRL_HOME="$ROOT"
mkdir -p "$PREFECT_HOME"

setrl validate --profile "$PROFILE" >/dev/null   # a broken pipeline.yaml stops here, before any work

healthy() { python -c "import urllib.request,sys; urllib.request.urlopen('$PREFECT_API_URL/health', timeout=2)" 2>/dev/null; }
if healthy; then
  echo "Prefect server: reusing $PREFECT_API_URL"
else
  echo "Prefect server: starting (log: $PREFECT_HOME/server.log)"
  nohup prefect server start --host 127.0.0.1 --port 4200 --analytics-off >"$PREFECT_HOME/server.log" 2>&1 &
  echo $! >"$PREFECT_HOME/server.pid"
  for _ in $(seq 1 120); do healthy && break; sleep 1; done
  healthy || { echo "Prefect server did not come up; see $PREFECT_HOME/server.log" >&2; exit 1; }
fi

for pool in setrl-local setrl-gpu; do
  prefect work-pool inspect "$pool" >/dev/null 2>&1 || prefect work-pool create "$pool" --type process >/dev/null
done
prefect deploy --all --no-prompt >"$PREFECT_HOME/deploy.log" 2>&1 || { cat "$PREFECT_HOME/deploy.log" >&2; exit 1; }

if [ -f "$PREFECT_HOME/worker.pid" ] && kill -0 "$(cat "$PREFECT_HOME/worker.pid")" 2>/dev/null; then
  echo "Prefect worker: reusing pid $(cat "$PREFECT_HOME/worker.pid")"
else
  echo "Prefect worker: starting on pool setrl-local (log: $PREFECT_HOME/worker.log)"
  nohup prefect worker start --pool setrl-local >"$PREFECT_HOME/worker.log" 2>&1 &
  echo $! >"$PREFECT_HOME/worker.pid"
fi

echo "Running full-study/$PROFILE (UI: http://127.0.0.1:4200)"
prefect deployment run "full-study/$PROFILE" --watch

echo
setrl summary --profile "$PROFILE"
